#include "plan/freshness.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "plan/codec.h"
#include "playbook/doc.h"
#include "playbook/local_tree.h"
#include "util/hash.h"
#include "util/path.h"

namespace ratchet::plan {

namespace {

// An age for people: "26h 5m", "40m", "30s".
std::string age_text(long long seconds) {
  if (seconds < 60) return fmt::format("{}s", seconds);
  if (seconds < 3600) return fmt::format("{}m", seconds / 60);
  long long h = seconds / 3600, m = (seconds % 3600) / 60;
  return m ? fmt::format("{}h {}m", h, m) : fmt::format("{}h", h);
}

}  // namespace

std::vector<std::string> load_differences(const Plan& p, const playbook::Playbook& pb) {
  std::vector<std::string> why;
  if (pb.sha256 != p.sources.front().sha256)
    why.push_back(fmt::format("the playbook {} changed while apply read it: sha256 {} in the plan, {} loaded",
                              p.sources.front().path, p.sources.front().sha256, pb.sha256));
  for (const auto& s : p.sources) {
    if (s.role == "include") {
      auto f = std::find_if(pb.includes.begin(), pb.includes.end(),
                            [&](const playbook::IncludedFile& x) { return util::absolute_path(x.path) == s.path; });
      if (f == pb.includes.end() || f->sha256 != s.sha256)
        why.push_back(fmt::format("included file {} changed while apply read it: sha256 {} in the plan, {} loaded", s.path,
                                  s.sha256, f == pb.includes.end() ? "none" : f->sha256));
      continue;
    }
    if (s.role == "copy") {  // a copy source's file, by its path: the tree just read must hold it unchanged
      bool same = false;
      for (const auto& it : pb.files)
        for (const auto& e : it.second.tree)
          same |= e.type == playbook::TreeEntry::Type::file && util::absolute_path(e.path) == s.path &&
                  e.sha256 == s.sha256;
      if (!same)
        why.push_back(fmt::format("copy source file {} changed while apply read it: sha256 {} in the plan", s.path,
                                  s.sha256));
      continue;
    }
    if (s.role != "template" && s.role != "unit_file") continue;
    auto f = pb.files.find(s.name);
    if (f == pb.files.end() || f->second.sha256 != s.sha256)
      why.push_back(fmt::format("{} {} changed while apply read it: sha256 {} in the plan, {} loaded", s.role, s.path,
                                s.sha256, f == pb.files.end() ? "none" : f->second.sha256));
  }
  if (pb.secrets != p.secrets)
    why.push_back("the plan's `secrets` (where each secret comes from) are not the playbook's [secrets]: "
                  "not a file `ratchet plan --out` wrote from it");
  return why;
}

std::vector<std::string> stale_reasons(const Plan& p, const Here& here) {
  std::vector<std::string> out;
  if (p.made.ratchet_version != here.ratchet_version)
    out.push_back(fmt::format("the plan was made by ratchet {}, this is ratchet {}: make the plan again with this one",
                              p.made.ratchet_version, here.ratchet_version));
  if (p.made.host_library_sha256 != here.host_library_sha256)
    out.push_back(fmt::format("the plan was made with host library sha256 {}, this ratchet's is {}: make the plan again",
                              p.made.host_library_sha256, here.host_library_sha256));
  const long long age = here.now_unix - p.made.at_unix;
  if (age < -300)
    out.push_back(fmt::format("the plan says it was made at {}, {} s in the future: check this machine's clock",
                              p.made.at, -age));
  else if (age * 1000 > here.max_age.count())
    out.push_back(fmt::format("the plan was made at {}, {} ago, more than --max-age {}: make it again (or pass a larger --max-age)",
                              p.made.at, age_text(age),
                              here.max_age_text.empty() ? util::format_duration(here.max_age) : here.max_age_text));
  for (const auto& s : p.sources) {
    if (s.role != "playbook" && s.role != "template" && s.role != "unit_file" && s.role != "include" &&
        s.role != "copy")
      continue;  // re-resolved instead
    std::string what = s.role == "playbook"   ? "the playbook"
                       : s.role == "template" ? "template"
                       : s.role == "include"  ? "included file"
                       : s.role == "copy"     ? "copy source file"
                                              : "unit file";
    std::string text, err;
    struct stat st{};
    if (::stat(s.path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      out.push_back(fmt::format("{} {} is not a regular file now: a plan's files are read as files", what, s.path));
      continue;
    }
    std::string now;
    // A copy source may be large: hashed as it is read, never held whole.
    if (s.role == "copy" ? !playbook::sha256_file(s.path, &now, nullptr, &err)
                         : !playbook::read_text_file(s.path, &text, &err)) {
      out.push_back(fmt::format("{} {} cannot be read now ({}); the plan names its files by absolute path and was "
                                "made from sha256 {}: make the plan again where the files are", what, s.path, err,
                                s.sha256));
      continue;
    }
    if (s.role != "copy") now = util::sha256_hex(text);
    if (now != s.sha256)
      out.push_back(fmt::format("{} {} changed since the plan was made: sha256 {} in the plan, {} now; review "
                                "and make the plan again", what, s.path, s.sha256, now));
  }
  return out;
}

const std::vector<NotCompared> kNotCompared = {
    {"hosts[].known_keys",
     "the keys known_hosts lists now: apply connects pinned to the plan's own (another key is refused, exit 4), "
     "whatever known_hosts has learned since"},
    {"hosts[].steps[].source",
     "where a step was written (file:line:col) names the playbook as given on the command line, and apply loads it "
     "by its absolute path; the playbook's bytes are checked by sha256"},
};

namespace {

using nlohmann::json;

std::string member_path(const std::string& at, const std::string& key) { return at.empty() ? key : at + "." + key; }

// The first path where a and b differ ("steps[2].commands[0].command"), "" if equal.
std::string first_difference(const json& a, const json& b, const std::string& at) {
  if (a == b) return "";
  if (a.is_object() && b.is_object()) {
    for (const auto& it : a.items()) {
      if (!b.contains(it.key())) return member_path(at, it.key());
      if (auto d = first_difference(it.value(), b[it.key()], member_path(at, it.key())); !d.empty()) return d;
    }
    for (const auto& it : b.items())
      if (!a.contains(it.key())) return member_path(at, it.key());
  }
  if (a.is_array() && b.is_array()) {
    for (size_t i = 0; i < a.size() && i < b.size(); ++i)
      if (auto d = first_difference(a[i], b[i], fmt::format("{}[{}]", at, i)); !d.empty()) return d;
  }
  return at;
}

// The value at `path` (as first_difference writes it) in j; nullptr when absent.
const json* member_at(const json& j, const std::string& path) {
  const json* v = &j;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '.') ++i;
    if (path[i] == '[') {
      size_t close = path.find(']', i);
      size_t k = std::stoul(path.substr(i + 1, close - i - 1));
      if (!v->is_array() || k >= v->size()) return nullptr;
      v = &(*v)[k];
      i = close + 1;
      continue;
    }
    size_t end = path.find_first_of(".[", i);
    std::string key = path.substr(i, end == std::string::npos ? std::string::npos : end - i);
    if (!v->is_object() || !v->contains(key)) return nullptr;
    v = &(*v)[key];
    i = end == std::string::npos ? path.size() : end;
  }
  return v;
}

// Removes kNotCompared's `path` from j ("a.b": member b of a; "a[].b": b of each element of a).
void erase_member(json& j, std::string_view path) {
  const size_t dot = path.find('.');
  std::string head(path.substr(0, dot));
  const bool each = head.size() > 2 && head.ends_with("[]");
  if (each) head.resize(head.size() - 2);
  if (!j.is_object() || !j.contains(head)) return;
  if (dot == std::string_view::npos) {
    j.erase(head);
    return;
  }
  json& v = j[head];
  if (!each) return erase_member(v, path.substr(dot + 1));
  if (v.is_array())
    for (auto& e : v) erase_member(e, path.substr(dot + 1));
}

// The plan as it is compared: its document without provenance (checked on its
// own, above and in apply) and without kNotCompared.
json compared(const Plan& p) {
  json j = plan_json(p, false);
  for (const auto& n : kNotCompared) erase_member(j, n.member);
  return j;
}

// ": X in the plan, Y now;" for short scalars at `path`; ":" otherwise.
std::string both_values(const json& saved, const json& now, const std::string& path) {
  const json *a = member_at(saved, path), *b = member_at(now, path);
  auto text = [](const json* v) { return v ? v->dump() : std::string("(none)"); };
  if ((a && a->is_structured()) || (b && b->is_structured())) return ":";
  std::string x = text(a), y = text(b);
  if (x.size() > 80 || y.size() > 80) return ":";
  return fmt::format(": {} in the plan, {} now;", x, y);
}

std::string difference_line(const std::string& prefix, const json& saved, const json& now, const std::string& path,
                            const std::string& step) {
  return fmt::format("{}the plan built now differs from the saved one at {}{}{} make the plan again "
                     "(ratchet plan ... --out FILE) and review it",
                     prefix, path, step, both_values(saved, now, path));
}

}  // namespace

std::vector<std::string> host_differences(const HostPlan& planned, const HostPlan& now) {
  std::vector<std::string> out;
  const std::string& h = planned.host.name;
  auto field = [&](const char* name, const std::string& was, const std::string& is) {
    if (was != is)
      out.push_back(fmt::format("host {}: its {} is {} now, {} in the plan", h, name, is.empty() ? "(none)" : "`" + is + "`",
                                was.empty() ? "(none)" : "`" + was + "`"));
  };
  field("address", planned.endpoint.address, now.endpoint.address);
  field("port", std::to_string(planned.endpoint.port), std::to_string(now.endpoint.port));
  field("user", planned.endpoint.user, now.endpoint.user);
  field("jump", planned.endpoint.jump, now.endpoint.jump);
  field("identity", planned.endpoint.identity, now.endpoint.identity);
  field("ssh config ProxyCommand", planned.endpoint.proxy, now.endpoint.proxy);
  field("ssh config IdentitiesOnly", planned.endpoint.identities_only ? "yes" : "no",
        now.endpoint.identities_only ? "yes" : "no");
  for (const auto& it : planned.vars.as_table()) {
    if (!now.vars.contains(it.first))
      out.push_back(fmt::format("host {}: var `{}` is no longer defined (it was {} in the plan)", h, it.first, util::toml_text(it.second)));
    else if (now.vars[it.first] != it.second)
      out.push_back(fmt::format("host {}: var `{}` is {} now, {} in the plan", h, it.first, util::toml_text(now.vars[it.first]),
                                util::toml_text(it.second)));
  }
  for (const auto& it : now.vars.as_table())
    if (!planned.vars.contains(it.first))
      out.push_back(fmt::format("host {}: var `{}` is new ({}), the plan has no such var", h, it.first, util::toml_text(it.second)));
  return out;
}

std::vector<std::string> plan_differences(const Plan& saved, const Plan& now) {
  std::vector<std::string> out;
  json a = compared(saved), b = compared(now);
  json ha = a["hosts"], hb = b["hosts"];
  a.erase("hosts");
  b.erase("hosts");
  // The plan's own members (policy, not_selected, ...).
  if (std::string path = first_difference(a, b, ""); !path.empty()) out.push_back(difference_line("", a, b, path, ""));
  if (ha.size() != hb.size() || saved.hosts.size() != ha.size()) {
    out.push_back(fmt::format("the plan built now has {} host(s), the saved one {}: make the plan again", hb.size(),
                              ha.size()));
    return out;
  }
  for (size_t i = 0; i < ha.size(); ++i) {
    // Endpoint and vars by name first: what the steps depend on.
    auto named = host_differences(saved.hosts[i], now.hosts[i]);
    if (!named.empty()) {
      for (auto& d : named) out.push_back(std::move(d));
      continue;
    }
    std::string path = first_difference(ha[i], hb[i], "");
    if (path.empty()) continue;
    std::string step;
    if (path.rfind("steps[", 0) == 0) {
      size_t k = std::stoul(path.substr(6));
      if (k < ha[i]["steps"].size() && ha[i]["steps"][k].contains("id"))
        step = fmt::format(" (step `{}`)", ha[i]["steps"][k]["id"].get<std::string>());
    }
    out.push_back(difference_line(fmt::format("host {}: ", saved.hosts[i].host.name), ha[i], hb[i], path, step));
  }
  return out;
}

}  // namespace ratchet::plan
