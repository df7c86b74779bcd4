#include "engine/thresholds.h"

#include <fmt/format.h>

#include "engine/fleet.h"

namespace ratchet::engine {

namespace {

// "10% of 5 hosts = 0" for a percentage, "2" for a number of hosts.
std::string in_hosts(const playbook::HostCount& c, size_t hosts, long long is) {
  if (!c.percent) return std::to_string(c.value);
  return fmt::format("{}% of {} host{} = {}", c.value, hosts, hosts == 1 ? "" : "s", is);
}

}  // namespace

std::vector<std::string> threshold_lines(const playbook::RunPolicy& p, size_t hosts) {
  std::vector<std::string> out;
  const std::vector<size_t> sizes = batch_sizes(hosts, p.serial);
  if (p.serial.set && !sizes.empty()) {
    const size_t per = sizes.front(), last = sizes.back();
    std::string batches = fmt::format("{} batch{} of {} host{}", sizes.size(), sizes.size() == 1 ? "" : "es", per,
                                      per == 1 ? "" : "s");
    if (last != per) batches += fmt::format(", the last of {}", last);
    out.push_back(fmt::format("serial {}: {}", in_hosts(p.serial, hosts, static_cast<long long>(per)), batches));
  }
  if (p.max_fail.set) {
    const long long limit = fail_limit(hosts, p.max_fail);
    std::string what;
    if (sizes.size() <= 1)
      what = "every host is in one batch: there is no later batch for it to stop";
    else if (limit >= static_cast<long long>(hosts - sizes.back()))
      what = fmt::format("{} failed hosts would stop later batches, but only {} run before the last one: it "
                         "never stops a batch", limit + 1, hosts - sizes.back());
    else if (limit == 0)
      what = "the first failed host stops later batches";
    else
      what = fmt::format("{} failed hosts stop later batches", limit + 1);
    out.push_back(fmt::format("max_fail {}: {}", in_hosts(p.max_fail, hosts, limit), what));
  }
  return out;
}

}  // namespace ratchet::engine
