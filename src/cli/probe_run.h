#pragma once
// Running a probe of a built plan: what `plan --probe` and `apply` of a probed
// plan share (docs/plan.md#probe).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/options.h"
#include "engine/probe.h"
#include "plan/plan.h"
#include "transcript/writer.h"

namespace ratchet::cli {

/// A probe that ran.
struct ProbeRun {
  std::vector<engine::HostProbe> reps;  ///< in P.hosts' order, reasons masked
  int code = 0;         ///< 0, 1 a check could not look, 3 unreachable, 4 host key, 130 ^C
  long long ms = 0;     ///< wall time of the whole probe
  std::string at;       ///< RFC 3339 UTC: when it began
  /// The probe's writer (closed to new events): its mask() and mask_tree()
  /// hide every secret value the probe knew, as its transcript does.
  std::shared_ptr<const transcript::Writer> writer;
  std::string transcript_failure;  ///< why the transcript could not be written ("" = it could)
};

/// Probes P's hosts (made from L) with o's connection options (-K, --forks,
/// --known-hosts...), each step's check once. Records to `transcript`
/// (appending a run whose run_start says "mode": "probe"; "" = records
/// nothing). `pinned`: connect accepts only the keys P saw (apply). nullopt
/// when a secret or the become password cannot be read (printed; exit 2).
std::optional<ProbeRun> probe_plan(const Loaded& L, const plan::Plan& P, const Options& o,
                                   const std::vector<std::string>& argv, const std::string& transcript, bool pinned);

/// The probe as the plan file keeps it.
plan::Findings findings_of(const ProbeRun& r);

}  // namespace ratchet::cli
