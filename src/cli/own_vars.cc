// The keys a playbook's own vars decide, read by their rules without hosts.
#include "cli/own_vars.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "playbook/schema.h"
#include "playbook/template.h"
#include "ratchet/version.h"
#include "steps/prepare.h"

namespace ratchet::cli {
namespace {

using playbook::Value;

// The references in every string of `v`; false on a template that does not parse (the loader said so).
bool refs_of(const Value& v, std::vector<std::string>* out) {
  if (v.is_array()) {
    for (const auto& e : v.as_array())
      if (!refs_of(e, out)) return false;
    return true;
  }
  if (!v.is_string()) return true;
  std::string why;
  auto refs = playbook::template_refs(v.as_string(), &why);
  if (!refs) return false;
  out->insert(out->end(), refs->begin(), refs->end());
  return true;
}

std::string first_segment(const std::string& ref) { return ref.substr(0, ref.find('.')); }

}  // namespace

std::vector<std::string> check_own_vars(const playbook::Playbook& pb, const std::vector<std::string>& extra_keys,
                                        std::vector<std::string>* unsure) {
  Value scope = pb.vars.is_table() ? pb.vars : Value::table();
  scope["playbook"] = Value::table({{"name", pb.name}, {"sha256", pb.sha256}, {"path", pb.path}});
  scope["ratchet"] = Value::table({{"version", RATCHET_VERSION}});
  auto decides = [&](const std::string& top) {
    return top == "playbook" || top == "ratchet" ||
           (pb.vars.is_table() && pb.vars.contains(top) && !pb.secrets.contains(top) && top != "host" &&
            top != "steps" && top != "run");
  };
  std::set<std::string> from_file;  // vars the file set and -e did not: an inventory may replace them
  std::vector<std::string> out;
  auto check = [&](const playbook::Step& s, const playbook::Action& a, size_t rung) {
    if (!a.kind) return;
    const std::string what = rung == 0 ? fmt::format("step `{}`", s.id) : fmt::format("rung {} of step `{}`", rung, s.id);
    // The keys the playbook decides, each read alone (every refusal is listed), then together (keys that must agree).
    std::vector<std::string> decided;
    std::map<std::string, std::vector<std::string>> refs_by_key;
    for (const auto& spec : playbook::kind_spec(*a.kind).fields) {
      const playbook::FieldBase& f = spec.field(const_cast<playbook::ActionKeys&>(a.keys));
      if (!f.written) continue;
      std::vector<std::string> refs;
      bool ok = refs_of(*f.written, &refs) && !refs.empty();
      for (const auto& r : refs) ok = ok && decides(first_segment(r));
      if (!ok) continue;
      decided.push_back(spec.name);
      refs_by_key[spec.name] = refs;
    }
    auto only = [&](const std::vector<std::string>& keep) {
      playbook::Action mine = a;
      for (const auto& spec : playbook::kind_spec(*a.kind).fields)
        if (std::find(keep.begin(), keep.end(), spec.name) == keep.end()) spec.field(mine.keys).written.reset();
      return mine;
    };
    auto refuse = [&](const std::string& err, const std::vector<std::string>& refs) {
      auto colon = err.find(": ");  // "file:line:col: why"
      out.push_back(colon == std::string::npos ? what + ": " + err
                                               : err.substr(0, colon) + ": " + what + ": " + err.substr(colon + 2));
      for (const auto& r : refs) {
        const std::string top = first_segment(r);
        auto it = pb.var_pos.find(top);
        if (it != pb.var_pos.end() && it->second.file != "-e" &&
            std::find(extra_keys.begin(), extra_keys.end(), top) == extra_keys.end())
          from_file.insert(top);
      }
    };
    bool each_ok = true;
    for (const auto& key : decided) {
      playbook::ActionKeys keys;
      std::string err;
      if (!steps::resolve(only({key}), scope, /*plan=*/true, &keys, &err)) {
        refuse(err, refs_by_key[key]);
        each_ok = false;
      }
    }
    playbook::ActionKeys keys;
    std::string err;
    if (each_ok && decided.size() > 1 && !steps::resolve(only(decided), scope, /*plan=*/true, &keys, &err)) {
      std::vector<std::string> all;
      for (const auto& k : decided) all.insert(all.end(), refs_by_key[k].begin(), refs_by_key[k].end());
      refuse(err, all);
    }
  };
  for (const auto& s : pb.steps) {
    check(s, s.body, 0);
    for (size_t k = 0; k < s.escalate.size(); ++k) check(s, s.escalate[k], k + 1);
  }
  if (unsure) unsure->assign(from_file.begin(), from_file.end());
  return out;
}

}  // namespace ratchet::cli
