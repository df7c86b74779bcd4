// `ratchet hosts`: what a selection resolves to (inventory, --limit, ssh
// config), with the effective address, port, user, jump and identity of each
// (and IdentitiesOnly, where the ssh config sets it).
// Connects to nothing.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/usage.h"
#include "playbook/inventory.h"
#include "playbook/loader.h"
#include "util/text.h"

namespace ratchet::cli {

int cmd_hosts(const Options& o, bool json) {
  std::vector<playbook::Host> hosts;
  if (!o.playbook.empty()) {
    auto L = load_all(o);
    if (!L) return kExitUsage;
    hosts = L->hosts;
  } else if (!o.target.empty()) {
    for (const auto& spec : o.target) {
      std::string err;
      auto h = parse_target(spec, &err);
      if (!h) return usage_error("hosts", err);
      hosts.push_back(*h);
    }
  } else if (!o.inventory.empty()) {
    std::vector<playbook::LoadError> errors;
    auto inv = playbook::load_inventory(o.inventory, &errors);
    if (!inv) {
      for (const auto& e : errors) std::cerr << playbook::format_error(e) << "\n";
      return kExitUsage;
    }
    std::string err;
    auto sel = playbook::resolve_targets(*inv, {"all"}, o.limit, &err);
    if (sel.empty()) return usage_error("hosts", err);
    for (const auto* h : sel) hosts.push_back(*h);
  } else {
    return usage_error("hosts", "give a PLAYBOOK, -i INVENTORY or --target");
  }
  nlohmann::json out = nlohmann::json::array();
  if (!json)
    std::cout << fmt::format("{:<20} {:<24} {:>5}  {:<10} {:<22} {}\n", "HOST", "ADDRESS", "PORT", "USER",
                             "JUMP", "IDENTITY");
  for (const auto& h : hosts) {
    transport::ResolvedEndpoint r;
    if (auto err = transport::resolve_endpoint(endpoint_for(h, o), &r)) {
      std::cerr << "ratchet: error: " << util::terminal_line(err->message) << "\n";
      return kExitUsage;
    }
    // The jump connect() takes: the inventory's, else the config's ProxyJump. A
    // ProxyCommand the user wrote (no jump) is shown as such: libssh runs it.
    std::string jump = !r.jump.empty() ? r.jump : (!r.proxy.empty() ? "ProxyCommand " + r.proxy : "-");
    // IdentitiesOnly yes (ssh config): no agent key but those of the files shown.
    std::string identity = r.identity.empty()
                               ? (r.identities_only ? "(default keys only)" : "(agent, default keys)")
                               : (r.identities_only ? r.identity + " (IdentitiesOnly)" : r.identity);
    if (json) {
      nlohmann::json row = {{"host", h.name}, {"address", r.address}, {"port", r.port}, {"user", r.user},
                            {"jump", r.jump}, {"identity", r.identity}};
      if (!r.proxy.empty()) row["proxy_command"] = r.proxy;
      if (r.identities_only) row["identities_only"] = true;  // present only when the config says yes
      out.push_back(row);
    } else {
      std::cout << util::terminal_line(fmt::format("{:<20} {:<24} {:>5}  {:<10} {:<22} {}", h.name, r.address,
                                                   r.port, r.user, jump, identity))
                << "\n";
    }
  }
  if (json) std::cout << out.dump(2) << "\n";
  return kExitOk;
}

}  // namespace ratchet::cli
