#include "cli/exec_targets.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "cli/exit_codes.h"
#include "cli/usage.h"
#include "playbook/inventory.h"
#include "playbook/loader.h"
#include "util/spell.h"

namespace ratchet::cli {

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  for (size_t at = 0; at <= s.size();) {
    size_t c = s.find(',', at);
    if (c == std::string::npos) c = s.size();
    if (c > at) out.push_back(s.substr(at, c - at));
    at = c + 1;
  }
  return out;
}

// A word that names no inventory host or group but reads as an address: "user@h", "h:22", "10.0.0.5", "h.example".
bool looks_ad_hoc(const std::string& word) { return word.find_first_of("@:.") != std::string::npos; }

}  // namespace

int exec_hosts(const ExecOptions& o, ExecHosts* out) {
  if (!o.targets.empty() && !o.base.target.empty())
    return usage_error("exec", fmt::format("name the hosts once: TARGETS ({}) or --target, not both", o.targets));
  if (o.targets.empty() && o.base.target.empty())
    return usage_error("exec", "no hosts: give TARGETS (an inventory host or group with -i, or [user@]host[:port]) "
                               "or --target [user@]host[:port]");
  if (!o.defaults.identity.empty() && ::access(o.defaults.identity.c_str(), R_OK) != 0)
    return usage_error("exec", fmt::format("--identity {}: cannot read the key file", o.defaults.identity));
  std::optional<playbook::Inventory> inv;
  if (!o.base.inventory.empty()) {
    std::vector<playbook::LoadError> errors;
    inv = playbook::load_inventory(o.base.inventory, &errors);
    if (!inv) {
      for (const auto& e : errors) std::cerr << playbook::format_error(e) << "\n";
      return kExitUsage;
    }
  }
  std::vector<std::string> words = o.targets.empty() ? o.base.target : split_commas(o.targets);
  if (words.empty()) return usage_error("exec", fmt::format("TARGETS `{}` names no host", o.targets));
  std::vector<std::string> from_inventory;  // host and group names
  std::vector<playbook::Host> adhoc;
  bool group = false;
  const bool via_target = !o.base.target.empty();  // --target: every word is ad hoc, as for run
  for (const auto& word : words) {
    bool known = inv && (inv->hosts.contains(word) || inv->groups.contains(word) || word == "all");
    if (known && !via_target) {
      group |= !inv->hosts.contains(word);
      from_inventory.push_back(word);
      continue;
    }
    if (inv && !via_target && !looks_ad_hoc(word)) {
      // A bare name with -i must be one of its hosts or groups.
      std::vector<std::string> names = {"all"};
      for (const auto& [n, h] : inv->hosts) names.push_back(n);
      for (const auto& [n, g] : inv->groups) names.push_back(n);
      std::string near = util::nearest(word, names);
      return usage_error("exec", fmt::format("{} is not a host or group of {}{}", word, o.base.inventory,
                                             near.empty() ? "" : fmt::format(" (did you mean `{}`?)", near)));
    }
    std::string err;
    auto h = parse_target(word, &err, o.defaults);
    if (!h) return usage_error("exec", err);
    if (std::none_of(adhoc.begin(), adhoc.end(), [&](const playbook::Host& x) { return x.name == h->name; }))
      adhoc.push_back(*h);
  }
  if (o.defaults.any() && adhoc.empty())
    return usage_error("exec", "--user, --port and --identity are for ad hoc hosts ([user@]host[:port] or --target); "
                               "an inventory host takes them from the inventory");
  if (!o.base.limit.empty() && !adhoc.empty())
    return usage_error("exec", "--limit narrows inventory hosts and groups; name ad hoc hosts directly");
  if (!from_inventory.empty()) {
    std::string err;
    auto picked = playbook::resolve_targets(*inv, from_inventory, o.base.limit, &err);
    if (picked.empty()) return usage_error("exec", err);
    for (const auto* h : picked) out->hosts.push_back(*h);
  }
  for (auto& h : adhoc)
    if (std::none_of(out->hosts.begin(), out->hosts.end(), [&](const playbook::Host& x) { return x.name == h.name; }))
      out->hosts.push_back(std::move(h));
  out->single = words.size() == 1 && !group && o.base.limit.empty() && out->hosts.size() == 1;
  return kExitOk;
}

}  // namespace ratchet::cli
