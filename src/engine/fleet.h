#pragma once
// Runs many hosts: rolling batches (`serial`), a failure budget (`max_fail`),
// and the strategy inside a batch (`linear` or `free`), at most `forks` hosts
// working at once. The names and rules follow Ansible's play keywords.
#include <functional>
#include <vector>

#include "engine/host_run.h"
#include "playbook/model.h"

namespace ratchet::engine {

/// How hosts are scheduled.
struct FleetPolicy {
  playbook::RunPolicy run;  ///< strategy, serial, max_fail from the playbook
  int forks = 10;           ///< hosts connecting or running a step at once (>= 1)
};

/// Sizes of the rolling batches for `total` hosts: `serial` hosts each (N, or
/// N% of total rounded down, at least 1); the last batch takes what is left.
/// Unset serial: one batch of all. Empty for total = 0.
std::vector<size_t> batch_sizes(size_t total, const playbook::HostCount& serial);

/// Failed or unreachable hosts tolerated before no further batch starts: N, or
/// N% of total rounded down; -1 = no limit (max_fail unset).
long long fail_limit(size_t total, const playbook::HostCount& max_fail);

/// Calls work(i) for every i in [0, n), on at most `forks` threads at once
/// (each takes the next i when it is free); returns when every call has
/// returned. The pool of a `free` batch, and of `ratchet exec` over many hosts.
void for_each_host(size_t n, int forks, const std::function<void(size_t)>& work);

/// Runs `jobs` batch by batch. In a `linear` batch every host ends step k (or
/// stops) before any host starts step k+1; in a `free` batch each host runs on.
/// A failed or unreachable host never stops the others; once more than
/// fail_limit() hosts have failed, later batches do not start and their hosts
/// are reported `skipped` (with host_end events). Reports keep the jobs' order.
std::vector<HostReport> run_fleet(std::vector<HostJob>& jobs, const FleetPolicy& policy,
                                  const TransportFactory& make, const RunShared& shared);

}  // namespace ratchet::engine
