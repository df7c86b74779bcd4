#include "cli/make_plan.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <iostream>

#include "cli/usage.h"
#include "plan/make.h"
#include "util/path.h"
#include "util/text.h"

namespace ratchet::cli {

namespace {

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa{}, sb{};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return util::absolute_path(a) == util::absolute_path(b);
}

}  // namespace

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
  plan::MakeInputs in{&L.pb, L.inv ? &*L.inv : nullptr, &L.hosts, L.extra_keys, {}, {}};
  auto& sel = in.selection;
  sel.tags = o.tags;
  sel.skip_tags = o.skip_tags;
  sel.start_at = o.start_at;
  sel.steps = o.steps;
  sel.inventory = o.inventory;
  sel.targets = o.target;
  sel.limit = o.limit;
  for (const auto& kv : o.extra) {
    auto eq = kv.find('=');
    std::string name = kv.substr(0, eq);
    if (std::find(o.secret.begin(), o.secret.end(), name) != o.secret.end()) continue;  // never saved
    sel.extra_vars.emplace_back(name, kv.substr(eq + 1));
  }
  sel.extra_secrets = o.secret;
  sel.ssh_config = o.ssh_config;
  sel.known_hosts = o.known_hosts;
  sel.accept_new = o.accept_new;
  sel.strategy = o.strategy;
  in.endpoint = [&o](const playbook::Host& h) { return endpoint_for(h, o); };
  plan::MakeError err;
  auto P = plan::make_plan(in, &err);
  if (P) return P;
  using K = plan::MakeError::Kind;
  if (err.kind == K::selection) usage_error(o.command.empty() ? "run" : o.command, err.lines.front());
  for (const auto& line : err.lines)
    if (err.kind == K::render) std::cerr << util::terminal_line("ratchet: error: " + line) << "\n";
    else if (err.kind == K::endpoint) std::cerr << "ratchet: error: " << util::terminal_line(line) << "\n";
  return std::nullopt;
}

std::string default_transcript(const std::string& name, const std::string& stamp) {
  std::string safe;
  for (char c : name) safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  while (!safe.empty() && safe[0] == '.') safe[0] = '_';
  return fmt::format("transcripts/{}-{}.jsonl", safe.empty() ? "playbook" : safe, stamp);
}

}  // namespace ratchet::cli
