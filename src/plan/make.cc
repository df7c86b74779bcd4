#include "plan/make.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "plan/build.h"
#include "plan/scope.h"
#include "plan/selection.h"
#include "playbook/doc.h"
#include "ratchet/version.h"
#include "steps/library.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/path.h"
#include "util/who.h"

namespace ratchet::plan {

namespace {

Source source_of(const char* role, const std::string& name, const std::string& path) {
  Source s{role, name, util::absolute_path(path), ""};
  std::string text, err;
  if (playbook::read_text_file(path, &text, &err)) s.sha256 = util::sha256_hex(text);
  return s;
}

// Each rendering error once, with the hosts it hit: "MESSAGE (host a)", "(hosts a, b)", "(every host)".
std::vector<std::string> render_errors(const std::vector<std::string>& errors, size_t host_count) {
  std::vector<std::pair<std::string, std::vector<std::string>>> unique;
  for (const auto& e : errors) {
    auto colon = e.find(": ");  // "host NAME: rest"
    std::string host = e.substr(5, colon - 5), rest = e.substr(colon + 2);
    auto it = std::find_if(unique.begin(), unique.end(), [&](const auto& u) { return u.first == rest; });
    if (it == unique.end()) unique.push_back({rest, {host}});
    else it->second.push_back(host);
  }
  std::vector<std::string> out;
  for (const auto& [msg, hosts] : unique) {
    std::string on = hosts.size() == host_count && hosts.size() > 1 ? "every host" : "host " + hosts[0];
    if (hosts.size() > 1 && hosts.size() < host_count) on = fmt::format("hosts {}", fmt::join(hosts, ", "));
    out.push_back(fmt::format("{} ({})", msg, on));
  }
  return out;
}

// The files the plan was made from, with their sha256: the playbook, its includes and files, inventory, ssh config.
std::vector<Source> sources_of(const MakeInputs& in) {
  const auto& pb = *in.pb;
  std::vector<Source> out;
  out.push_back({"playbook", "", util::absolute_path(pb.path), pb.sha256});
  for (const auto& f : pb.includes) out.push_back({"include", "", util::absolute_path(f.path), f.sha256});
  for (const auto& [name, f] : pb.files) {
    if (f.role != "src") {
      out.push_back({f.role, name, util::absolute_path(f.path), f.sha256});
      continue;
    }
    // copy: each file of the tree, by the name the step gives it (apply re-hashes each).
    const std::string src = name.substr(0, name.find('\0'));
    for (const auto& e : f.tree)
      if (e.type == playbook::TreeEntry::Type::file)
        out.push_back({"copy", e.rel.empty() ? src : src + "/" + e.rel, util::absolute_path(e.path), e.sha256});
  }
  if (!in.selection.inventory.empty()) out.push_back(source_of("inventory", "", in.selection.inventory));
  if (in.selection.ssh_config != "none") {
    std::string cfg = in.selection.ssh_config;
    if (cfg.empty()) {
      const passwd* pw = ::getpwuid(::getuid());
      cfg = std::string(pw ? pw->pw_dir : (std::getenv("HOME") ? std::getenv("HOME") : "")) + "/.ssh/config";
    }
    out.push_back(source_of("ssh_config", "", cfg));
  }
  return out;
}

// Every host's steps rendered with dry secrets; false with *err set.
bool plan_hosts(const MakeInputs& in, const std::vector<bool>& keep, Plan* P, MakeError* err) {
  playbook::Value dry = playbook::Value::table();
  for (const auto& kv : in.pb->secrets) dry[kv.first] = "***";
  std::vector<std::string> errors;
  for (const auto& h : *in.hosts) {
    auto scope = host_scope(*in.pb, in.inv, h, in.extra_keys, dry, nullptr);
    HostPlan hp;
    plan_host(*in.pb, h, scope, &hp, &errors, &keep);
    P->hosts.push_back(std::move(hp));
  }
  if (!errors.empty()) {
    *err = {MakeError::Kind::render, render_errors(errors, in.hosts->size())};
    return false;
  }
  for (auto& hp : P->hosts) {  // where each host connects, as run would (ssh config applied)
    transport::ResolvedEndpoint r;
    if (auto e = transport::resolve_endpoint(in.endpoint(hp.host), &r)) {
      *err = {MakeError::Kind::endpoint, {e->message}};
      return false;
    }
    hp.endpoint = {r.address, r.port, r.user, r.jump, r.identity, r.proxy, r.identities_only, r.known_keys};
  }
  return true;
}

}  // namespace

std::optional<Plan> make_plan(const MakeInputs& in, MakeError* err) {
  Plan P;
  P.playbook_name = in.pb->name;
  P.playbook_path = in.pb->path;
  P.policy = in.pb->policy;
  if (!in.selection.strategy.empty())
    P.policy.strategy = playbook::parse_strategy(in.selection.strategy).value();  // the command line checked it
  P.selection = in.selection;
  std::vector<bool> keep;
  std::string sel_err;
  if (!select_steps(*in.pb, P.selection, &keep, &P.not_selected, &sel_err)) {
    *err = {MakeError::Kind::selection, {sel_err}};
    return std::nullopt;
  }
  if (!plan_hosts(in, keep, &P, err)) return std::nullopt;
  const auto now = std::chrono::system_clock::now();
  P.made.at = util::rfc3339(now);
  P.made.at_unix = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  P.made.by = util::who_here();
  P.made.ratchet_version = RATCHET_VERSION;
  P.made.host_library_sha256 = steps::host_library_sha256();
  P.sources = sources_of(in);
  P.secrets = in.pb->secrets;
  P.selection.inventory = util::absolute_path(in.selection.inventory);
  P.selection.ssh_config = in.selection.ssh_config == "none" ? in.selection.ssh_config : util::absolute_path(in.selection.ssh_config);
  P.selection.known_hosts = util::absolute_path(in.selection.known_hosts);
  return P;
}

}  // namespace ratchet::plan
