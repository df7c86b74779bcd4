// Selecting hosts by name, group and glob; the vars each host sees.
#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <set>

#include "playbook/inventory.h"
#include "util/spell.h"

namespace ratchet::playbook {
namespace {

// Host names in inventory order: file order when known, else name order.
std::vector<std::string> host_order(const Inventory& inv) {
  if (inv.order.size() == inv.hosts.size()) return inv.order;
  std::vector<std::string> out;
  for (const auto& [name, _] : inv.hosts) out.push_back(name);
  return out;
}

// Adds the hosts `name` stands for to *out; false when the name is unknown.
bool expand(const Inventory& inv, const std::string& name, std::set<std::string>* out,
            std::set<std::string>* seen) {
  if (name == "all") {
    for (const auto& [h, _] : inv.hosts) out->insert(h);
    return true;
  }
  if (inv.hosts.contains(name)) {
    out->insert(name);
    return true;
  }
  auto g = inv.groups.find(name);
  if (g == inv.groups.end()) return false;
  if (!seen->insert(name).second) return true;  // cycles are load errors; stay finite anyway
  for (const auto& m : g->second) expand(inv, m, out, seen);
  return true;
}

std::string unknown(const Inventory& inv, const std::string& name, const char* where) {
  std::vector<std::string> names = {"all"};
  for (const auto& [h, _] : inv.hosts) names.push_back(h);
  for (const auto& [g, _] : inv.groups) names.push_back(g);
  std::string msg = fmt::format("unknown host or group `{}` in {}", name, where);
  std::string near = util::nearest(name, names);
  if (!near.empty()) msg += fmt::format(" (did you mean `{}`?)", near);
  return msg;
}

bool is_glob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// "a, b, c" (at most 5 names, then "and N more").
std::string list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 5; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 5) out += fmt::format(" and {} more", names.size() - 5);
  return out;
}

// Why --limit `pattern`, which matched `matched` (hosts `hosts`), selects no target.
std::string limit_misses(const Inventory& inv, const std::string& pattern,
                         const std::vector<std::string>& matched, const std::set<std::string>& hosts,
                         const std::vector<std::string>& targets) {
  std::string among = fmt::format("not among the targets ({})", list(targets));
  std::string head = fmt::format("--limit `{}` selects no target: ", pattern);
  if (hosts.empty())
    return head + (matched.size() == 1 ? fmt::format("group {} holds no host", matched[0])
                                       : fmt::format("{} hold no host", list(matched)));
  if (matched.size() == 1 && inv.hosts.contains(matched[0]))
    return head + fmt::format("{} is in the inventory but {}", matched[0], among);
  std::vector<std::string> hs;
  for (const auto& h : host_order(inv))
    if (hosts.contains(h)) hs.push_back(h);
  if (matched.size() == 1)
    return head + fmt::format("group {} is in the inventory, but its hosts ({}) are {}", matched[0], list(hs),
                              among);
  return head + fmt::format("it matches {}, whose hosts ({}) are {}", list(matched), list(hs), among);
}

}  // namespace

std::vector<const Host*> group_hosts(const Inventory& inv, const std::string& name) {
  std::set<std::string> picked, seen;
  if (!expand(inv, name, &picked, &seen)) return {};
  std::vector<const Host*> out;
  for (const auto& h : host_order(inv))
    if (picked.contains(h)) out.push_back(&inv.hosts.at(h));
  return out;
}

std::vector<const Host*> resolve_targets(const Inventory& inv,
                                         const std::vector<std::string>& targets,
                                         const std::vector<std::string>& limit, std::string* err) {
  if (targets.empty()) {
    *err = "no targets: name hosts or groups in the playbook's `targets`";
    return {};
  }
  if (inv.hosts.empty()) {
    *err = fmt::format("{} defines no hosts: add a [hosts.NAME] table with its address",
                       inv.path.empty() ? "the inventory" : "inventory " + inv.path);
    return {};
  }
  std::set<std::string> picked;
  for (const auto& t : targets) {
    std::set<std::string> seen;
    if (!expand(inv, t, &picked, &seen)) {
      *err = unknown(inv, t, "targets");
      return {};
    }
  }
  if (!limit.empty()) {
    std::set<std::string> allowed;
    for (const auto& l : limit) {
      std::set<std::string> mine, seen;  // the hosts this pattern stands for
      std::vector<std::string> matched;  // the hosts and groups it names
      if (!is_glob(l)) {
        if (!expand(inv, l, &mine, &seen)) {
          *err = unknown(inv, l, "--limit");
          return {};
        }
        matched.push_back(l);
      } else {
        for (const auto& h : host_order(inv))
          if (fnmatch(l.c_str(), h.c_str(), 0) == 0) {
            mine.insert(h);
            matched.push_back(h);
          }
        for (const auto& [g, _] : inv.groups)
          if (fnmatch(l.c_str(), g.c_str(), 0) == 0) {
            expand(inv, g, &mine, &seen);
            matched.push_back(g);
          }
        if (matched.empty()) {
          *err = fmt::format("--limit `{}` matches no host or group", l);
          return {};
        }
      }
      // A pattern that selects no target is a mistake: say which, and why.
      if (std::none_of(mine.begin(), mine.end(), [&](const std::string& h) { return picked.contains(h); })) {
        *err = limit_misses(inv, l, matched, mine, targets);
        return {};
      }
      allowed.insert(mine.begin(), mine.end());
    }
    std::erase_if(picked, [&](const std::string& h) { return !allowed.contains(h); });
  }
  std::vector<const Host*> out;
  for (const auto& h : host_order(inv))
    if (picked.contains(h)) out.push_back(&inv.hosts.at(h));
  if (out.empty())  // with --limit, each pattern selected a target already
    *err = "no host selected: the targets name only empty groups; add hosts to them";
  return out;
}

Value host_scope_vars(const Inventory& inv, const Host& host) {
  // Distance of each group from the host: 1 = holds it directly, 2 = holds such a group, ...
  std::map<std::string, int> dist;
  std::set<std::string> frontier = {host.name};
  for (int d = 1; !frontier.empty() && d <= static_cast<int>(inv.groups.size()); ++d) {
    std::set<std::string> next;
    for (const auto& [g, members] : inv.groups) {
      if (dist.contains(g)) continue;
      for (const auto& m : members)
        if (frontier.contains(m)) {
          dist[g] = d;
          next.insert(g);
          break;
        }
    }
    frontier = std::move(next);
  }
  std::vector<std::pair<int, std::string>> order;
  for (const auto& [g, d] : dist) order.push_back({-d, g});
  std::sort(order.begin(), order.end());
  Value out = Value::table();
  auto merge = [&](const Value& vars) {
    if (!vars.is_table()) return;
    for (const auto& it : vars.as_table()) out[it.first] = it.second;
  };
  if (auto all = inv.group_vars.find("all"); all != inv.group_vars.end()) merge(all->second);
  for (const auto& [_, g] : order)
    if (auto gv = inv.group_vars.find(g); gv != inv.group_vars.end()) merge(gv->second);
  merge(host.vars);
  return out;
}

}  // namespace ratchet::playbook
