#include "cli/make_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "engine/scope.h"
#include "cli/usage.h"
#include "plan/build.h"
#include "plan/selection.h"
#include "playbook/doc.h"
#include "ratchet/version.h"
#include "steps/library.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/text.h"

namespace ratchet::cli {

namespace {

plan::Source source_of(const char* role, const std::string& name, const std::string& path) {
  plan::Source s{role, name, absolute_path(path), ""};
  std::string text, err;
  if (playbook::read_text_file(path, &text, &err)) s.sha256 = util::sha256_hex(text);
  return s;
}

// Prints each rendering error once, with the hosts it hit.
void print_errors(const std::vector<std::string>& errors, size_t host_count) {
  std::vector<std::pair<std::string, std::vector<std::string>>> unique;
  for (const auto& e : errors) {
    auto colon = e.find(": ");  // "host NAME: rest"
    std::string host = e.substr(5, colon - 5), rest = e.substr(colon + 2);
    auto it = std::find_if(unique.begin(), unique.end(), [&](const auto& u) { return u.first == rest; });
    if (it == unique.end()) unique.push_back({rest, {host}});
    else it->second.push_back(host);
  }
  for (const auto& [msg, hosts] : unique) {
    std::string on = hosts.size() == host_count && hosts.size() > 1 ? "every host" : "host " + hosts[0];
    if (hosts.size() > 1 && hosts.size() < host_count) on = fmt::format("hosts {}", fmt::join(hosts, ", "));
    std::cerr << util::terminal_line(fmt::format("ratchet: error: {} ({})", msg, on)) << "\n";
  }
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa{}, sb{};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return absolute_path(a) == absolute_path(b);
}

}  // namespace

// "user@hostname" of whoever runs ratchet here.
std::string who_here() {
  std::string user = "unknown";
  if (const passwd* pw = ::getpwuid(::getuid())) user = pw->pw_name;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("{}@{}", user, *host ? host : "unknown");
}

std::string absolute_path(const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  auto p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

std::string clobbered_source(const plan::Plan& P, const std::string& path, const std::string& also) {
  if (!also.empty() && same_file(path, also)) return "the plan file " + also;
  for (const auto& s : P.sources)
    if (same_file(path, s.path))
      return fmt::format("the {} {}", s.role == "unit_file" ? "unit file" : s.role == "ssh_config" ? "ssh config" : s.role == "include" ? "included file" : s.role,
                         s.path);
  if (!P.selection.known_hosts.empty() && same_file(path, P.selection.known_hosts))
    return "the known_hosts file " + P.selection.known_hosts;
  return "";
}

std::optional<plan::Plan> make_plan(const Loaded& L, const Options& o) {
  plan::Plan P;
  P.playbook_name = L.pb.name;
  P.playbook_path = L.pb.path;
  P.policy = L.pb.policy;
  if (!o.strategy.empty()) P.policy.strategy = playbook::parse_strategy(o.strategy).value();  // CLI11 checked it
  P.selection.tags = o.tags;
  P.selection.skip_tags = o.skip_tags;
  P.selection.start_at = o.start_at;
  P.selection.steps = o.steps;
  std::vector<bool> keep;
  std::string sel_err;
  if (!plan::select_steps(L.pb, P.selection, &keep, &P.not_selected, &sel_err)) {
    usage_error(o.command.empty() ? "run" : o.command, sel_err);
    return std::nullopt;
  }
  auto dry = resolve_secrets(L.pb, true);
  std::vector<std::string> errors;
  for (const auto& h : L.hosts) {
    auto scope = engine::host_scope(L.pb, L.inv ? &*L.inv : nullptr, h, L.extra_keys, *dry, nullptr);
    plan::HostPlan hp;
    plan::plan_host(L.pb, h, scope, &hp, &errors, &keep);
    P.hosts.push_back(std::move(hp));
  }
  if (!errors.empty()) {
    print_errors(errors, L.hosts.size());
    return std::nullopt;
  }
  for (auto& hp : P.hosts) {  // where each host connects, as run would (ssh config applied)
    transport::ResolvedEndpoint r;
    if (auto err = transport::resolve_endpoint(endpoint_for(hp.host, o), &r)) {
      std::cerr << "ratchet: error: " << util::terminal_line(err->message) << "\n";
      return std::nullopt;
    }
    hp.endpoint = {r.address, r.port, r.user, r.jump, r.identity, r.proxy, r.identities_only, r.known_keys};
  }

  const auto now = std::chrono::system_clock::now();
  P.made.at = util::rfc3339(now);
  P.made.at_unix = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  P.made.by = who_here();
  P.made.ratchet_version = RATCHET_VERSION;
  P.made.host_library_sha256 = steps::host_library_sha256();

  P.sources.push_back({"playbook", "", absolute_path(L.pb.path), L.pb.sha256});
  for (const auto& f : L.pb.includes) P.sources.push_back({"include", "", absolute_path(f.path), f.sha256});
  for (const auto& [name, f] : L.pb.files) {
    if (f.role != "src") {
      P.sources.push_back({f.role, name, absolute_path(f.path), f.sha256});
      continue;
    }
    // copy: each file of the tree, by the name the step gives it (apply re-hashes each).
    const std::string src = name.substr(0, name.find('\0'));
    for (const auto& e : f.tree)
      if (e.type == playbook::TreeEntry::Type::file)
        P.sources.push_back({"copy", e.rel.empty() ? src : src + "/" + e.rel, absolute_path(e.path), e.sha256});
  }
  if (!o.inventory.empty()) P.sources.push_back(source_of("inventory", "", o.inventory));
  if (o.ssh_config != "none") {
    std::string cfg = o.ssh_config;
    if (cfg.empty()) {
      const passwd* pw = ::getpwuid(::getuid());
      cfg = std::string(pw ? pw->pw_dir : (std::getenv("HOME") ? std::getenv("HOME") : "")) + "/.ssh/config";
    }
    P.sources.push_back(source_of("ssh_config", "", cfg));
  }
  P.secrets = L.pb.secrets;

  auto& sel = P.selection;
  sel.inventory = absolute_path(o.inventory);
  sel.targets = o.target;
  sel.limit = o.limit;
  for (const auto& kv : o.extra) {
    auto eq = kv.find('=');
    std::string name = kv.substr(0, eq);
    if (std::find(o.secret.begin(), o.secret.end(), name) != o.secret.end()) continue;  // never saved
    sel.extra_vars.emplace_back(name, kv.substr(eq + 1));
  }
  sel.extra_secrets = o.secret;
  sel.ssh_config = o.ssh_config == "none" ? o.ssh_config : absolute_path(o.ssh_config);
  sel.known_hosts = absolute_path(o.known_hosts);
  sel.accept_new = o.accept_new;
  sel.strategy = o.strategy;
  return P;
}

std::string default_transcript(const std::string& name, const std::string& stamp) {
  std::string safe;
  for (char c : name) safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  while (!safe.empty() && safe[0] == '.') safe[0] = '_';
  return fmt::format("transcripts/{}-{}.jsonl", safe.empty() ? "playbook" : safe, stamp);
}

}  // namespace ratchet::cli
