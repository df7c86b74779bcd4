// The keys a playbook's own vars decide, read by their rules without hosts.
#include "cli/own_vars.h"

#include <fmt/format.h>

#include <algorithm>
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

std::vector<std::string> check_own_vars(const playbook::Playbook& pb, std::vector<std::string>* unsure) {
  Value scope = pb.vars.is_table() ? pb.vars : Value::table();
  scope["playbook"] = Value::table({{"name", pb.name}, {"sha256", pb.sha256}, {"path", pb.path}});
  scope["ratchet"] = Value::table({{"version", RATCHET_VERSION}});
  std::set<std::string> from_file;  // vars the file set, not -e: an inventory may replace them
  std::vector<std::string> out;
  auto check = [&](const playbook::Step& s, const playbook::Action& a, size_t rung) {
    if (!a.kind) return;
    playbook::ActionKeys keys;
    playbook::Action mine = a;  // only the keys the playbook decides stay templates to render
    std::vector<std::string> used;
    for (const auto& spec : playbook::kind_spec(*a.kind).fields) {
      playbook::FieldBase& f = spec.field(mine.keys);
      if (!f.written) continue;
      std::vector<std::string> refs;
      bool decided = refs_of(*f.written, &refs) && !refs.empty();
      for (const auto& r : refs) {
        const std::string top = first_segment(r);
        decided &= top == "playbook" || top == "ratchet" ||
                   (pb.vars.is_table() && pb.vars.contains(top) && !pb.secrets.contains(top) && top != "host" &&
                    top != "steps" && top != "run");
      }
      if (!decided) {
        f.written.reset();
        continue;
      }
      for (const auto& r : refs)
        if (auto it = pb.var_pos.find(first_segment(r)); it != pb.var_pos.end() && it->second.file != "-e")
          used.push_back(first_segment(r));
    }
    std::string err;
    if (steps::resolve(mine, scope, /*plan=*/true, &keys, &err)) return;
    const std::string what = rung == 0 ? fmt::format("step `{}`", s.id) : fmt::format("rung {} of step `{}`", rung, s.id);
    auto colon = err.find(": ");  // "file:line:col: why"
    out.push_back(colon == std::string::npos ? what + ": " + err
                                             : err.substr(0, colon) + ": " + what + ": " + err.substr(colon + 2));
    from_file.insert(used.begin(), used.end());
  };
  for (const auto& s : pb.steps) {
    check(s, s.body, 0);
    for (size_t k = 0; k < s.escalate.size(); ++k) check(s, s.escalate[k], k + 1);
  }
  if (unsure) unsure->assign(from_file.begin(), from_file.end());
  return out;
}

}  // namespace ratchet::cli
