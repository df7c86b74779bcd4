#include "cli/options.h"

#include "plan/codec.h"
#include "playbook/doc.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "playbook/inventory.h"
#include "playbook/loader.h"
#include "playbook/target_check.h"
#include "cli/usage.h"
#include "run/secrets.h"
#include "util/text.h"

namespace ratchet::cli {

std::optional<playbook::Host> parse_target(const std::string& spec, std::string* err, const TargetDefaults& d) {
  playbook::Host h;
  std::string rest = spec;
  auto at = rest.rfind('@');
  if (at != std::string::npos) {
    h.user = rest.substr(0, at);
    rest = rest.substr(at + 1);
  }
  auto colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(':') == colon) {
    std::string port = rest.substr(colon + 1);
    char* end = nullptr;
    long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end || p < 1 || p > 65535) {
      *err = fmt::format("--target {}: port must be 1..65535", spec);
      return std::nullopt;
    }
    h.port = static_cast<int>(p);
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) {
    *err = fmt::format("--target {}: no host name", spec);
    return std::nullopt;
  }
  if (h.user.empty()) h.user = d.user;
  if (h.port == 0) h.port = d.port;
  h.identity = d.identity;
  // The address stays empty so ~/.ssh/config's HostName for `rest` applies;
  // endpoint_for() matches the config on the name without its port.
  h.name = h.port ? fmt::format("{}:{}", rest, h.port) : rest;
  return h;
}

transport::Endpoint endpoint_for(const playbook::Host& h, const Options& o) {
  transport::Endpoint e;
  // An ad hoc "host:port" target: the ssh config is matched on "host".
  e.name = h.address.empty() ? playbook::connect_name(h) : h.name;
  e.address = h.address;
  e.port = h.port;
  e.user = h.user;
  e.identity = h.identity;
  e.known_hosts = !h.known_hosts.empty() ? h.known_hosts : o.known_hosts;
  e.ssh_config = o.ssh_config;
  e.accept_new = o.accept_new;
  e.jump = h.jump;  // wins over the ssh config's ProxyJump
  e.connect_timeout = o.connect_timeout;
  e.keepalive = o.keepalive;
  e.exec_mode = o.exec_mode;
  return e;
}

/// Load errors, then the selection's (a usage error), then how many there were.
static void print_errors(const Options& o, const std::vector<playbook::LoadError>& errors,
                         const std::string& selection = "") {
  for (const auto& e : errors) std::cerr << playbook::format_error(e) << "\n";
  if (!selection.empty()) std::cerr << usage_text(o.command, selection);
  size_t n = errors.size() + !selection.empty();
  if (n > 1) std::cerr << fmt::format("ratchet: {} errors; nothing was run\n", n);
}

std::optional<Loaded> load_all(const Options& o, bool hosts_optional) {
  Loaded L;
  if (std::string text, err; !o.playbook.empty() && playbook::read_text_file(o.playbook, &text, &err) &&
                             plan::looks_like_plan(text)) {  // never run by accident
    std::cerr << util::terminal_line(fmt::format(
                     "ratchet: error: {} is a saved plan (made by `ratchet plan --out`), not a playbook: "
                     "use `ratchet apply {}`",
                     o.playbook, o.playbook))
              << "\n";
    return std::nullopt;
  }
  playbook::LoadOptions lo;
  for (const auto& kv : o.extra) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      usage_error(o.command, fmt::format("-e {}: write -e key=value", kv));
      return std::nullopt;
    }
    lo.extra_vars.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    L.extra_keys.push_back(kv.substr(0, eq));
  }
  lo.secret_vars = o.secret;
  std::vector<playbook::Host> adhoc;
  for (const auto& spec : o.target) {
    std::string err;
    auto h = parse_target(spec, &err);
    if (!h) {
      usage_error(o.command, err);
      return std::nullopt;
    }
    adhoc.push_back(*h);
  }
  // Every check that can run does, so one pass shows every error: the
  // playbook's, the inventory's, references, -e, and the selection.
  std::vector<playbook::LoadError> errors;
  playbook::Playbook pb;
  bool pb_ok = playbook::load_playbook(o.playbook, lo, &errors, &pb).has_value();
  bool pb_read = !pb.path.empty();  // parsed as TOML, perhaps with errors
  bool inv_ok = true;
  if (!o.inventory.empty()) {
    auto inv = playbook::load_inventory(o.inventory, &errors);
    inv_ok = inv.has_value();
    if (inv) L.inv = std::move(*inv);
  } else if (pb.inventory) {
    L.inv = pb.inventory;
  }
  if (!adhoc.empty()) {  // ad hoc hosts: added to (or making) the inventory and selected alone
    if (!L.inv) L.inv = playbook::Inventory{};
    for (const auto& h : adhoc) L.inv->hosts[h.name] = h;
  }
  bool hosts_known = L.inv.has_value() && inv_ok;
  std::string selection;  // what selecting hosts found wrong: a usage error
  if (!L.inv && o.inventory.empty() && pb_ok && !hosts_optional)
    selection = fmt::format("{}: no inventory: give -i INVENTORY, an [inventory] table in the playbook, "
                            "or --target user@host:port",
                            o.playbook);
  if (pb_read) {
    // A broken inventory's vars are unknown: names it might define are not errors then.
    const playbook::Inventory* inv = L.inv && inv_ok ? &*L.inv : nullptr;
    playbook::check_references(pb, inv, &errors, hosts_known ? nullptr : &L.unchecked_vars);
    if (inv_ok) playbook::check_extra_vars(pb, inv, lo, &errors);
  }
  // Each name in `targets` the inventory lacks: an error at its place in the file.
  bool targets_ok = true;
  if (pb_read && hosts_known && adhoc.empty() && !L.inv->hosts.empty())
    targets_ok = playbook::check_targets(pb, *L.inv, &errors);
  playbook::order_errors(&errors, o.playbook);
  if (pb_read && hosts_known && targets_ok) {
    if (!adhoc.empty()) {
      L.hosts = adhoc;
    } else {
      std::vector<std::string> targets = pb.targets.empty() ? std::vector<std::string>{"all"} : pb.targets;
      auto sel = playbook::resolve_targets(*L.inv, targets, o.limit, &selection);
      for (const auto* h : sel) L.hosts.push_back(*h);
    }
  }
  if (!errors.empty() || !selection.empty() || !pb_ok) {
    print_errors(o, errors, selection);
    return std::nullopt;
  }
  L.pb = std::move(pb);
  L.no_hosts = !hosts_known;
  return L;
}

std::optional<playbook::Value> resolve_secrets(const playbook::Playbook& pb, bool dry_run) {
  if (dry_run) {
    playbook::Value out = playbook::Value::table();
    for (const auto& kv : pb.secrets) out[kv.first] = "***";
    return out;
  }
  std::string err;
  auto out = run::resolve_secrets(pb, &err);
  if (!out) std::cerr << "ratchet: error: " << err << "\n";
  return out;
}

}  // namespace ratchet::cli
