#pragma once
// The recap `run`, `apply` and `exec` print at the end: one row per host.
#include <string>
#include <vector>

#include "engine/adhoc.h"
#include "engine/host_run.h"

namespace ratchet::cli {

/// The recap: a blank line, "RECAP", one row per host (status, step counts,
/// time, and why a host did not end ok, cut to `cols` columns when > 0), the
/// steps each host skipped and why, and a total row. Statuses painted when `color`.
std::string recap_table(const std::vector<engine::HostReport>& reps, bool color, size_t cols);

/// `exec`'s recap over several hosts: what an ad hoc command has, per host: its
/// status, exit (code, SIGNAME, or "-" when it did not run or end), time, stdout
/// and stderr bytes, why a host did not end ok; then a total row of the statuses.
std::string exec_recap_table(const std::vector<engine::AdhocResult>& results, bool color, size_t cols);

}  // namespace ratchet::cli
