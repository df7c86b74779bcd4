#include "plan/freshness.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include "plan/codec.h"
#include "playbook/doc.h"
#include "playbook/local_tree.h"
#include "util/hash.h"

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

namespace {

// The first path where a and b differ ("steps[2].commands[0].command"), "" if equal.
std::string first_difference(const nlohmann::json& a, const nlohmann::json& b, const std::string& at) {
  if (a == b) return "";
  if (a.is_object() && b.is_object()) {
    for (const auto& it : a.items()) {
      if (!b.contains(it.key())) return at + "." + it.key();
      if (auto d = first_difference(it.value(), b[it.key()], at + "." + it.key()); !d.empty()) return d;
    }
    for (const auto& it : b.items())
      if (!a.contains(it.key())) return at + "." + it.key();
  }
  if (a.is_array() && b.is_array()) {
    for (size_t i = 0; i < a.size() && i < b.size(); ++i)
      if (auto d = first_difference(a[i], b[i], fmt::format("{}[{}]", at, i)); !d.empty()) return d;
  }
  return at;
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
  if (!out.empty()) return out;
  // Everything the steps depend on agrees: the commands must too.
  nlohmann::json a = host_json(planned)["steps"], b = host_json(now)["steps"];
  for (auto* steps : {&a, &b})  // where a step was written names the playbook as given: not what runs
    for (auto& st : *steps) st.erase("source");
  if (a != b) {
    std::string path = first_difference(a, b, "steps");
    std::string step;
    size_t open = path.find('['), close = path.find(']');
    if (open != std::string::npos && close != std::string::npos) {
      size_t i = std::stoul(path.substr(open + 1, close - open - 1));
      if (i < a.size() && a[i].contains("id")) step = fmt::format(" (step `{}`)", a[i]["id"].get<std::string>());
    }
    out.push_back(fmt::format("host {}: the plan built now differs from the saved one at {}{}: make the plan again", h,
                              path, step));
  }
  return out;
}

}  // namespace ratchet::plan
