#pragma once
// `plan --probe` and apply's probe again: the command line's options as a
// probe request (run/probe_run.h).
#include <optional>
#include <string>
#include <vector>

#include "cli/options.h"
#include "plan/plan.h"
#include "run/probe_run.h"

namespace ratchet::cli {

using run::findings_of;
using run::ProbeRun;

/// Probes P's hosts (made from L) with o's connection options (-K, --forks,
/// --known-hosts...), each step's check once. Records to `transcript`
/// (appending a run whose run_start says "mode": "probe"; "" = records
/// nothing). `pinned`: connect accepts only the keys P saw (apply). nullopt
/// when a secret or the become password cannot be read (printed; exit 2).
std::optional<ProbeRun> probe_plan(const Loaded& L, const plan::Plan& P, const Options& o,
                                   const std::vector<std::string>& argv, const std::string& transcript, bool pinned);

}  // namespace ratchet::cli
