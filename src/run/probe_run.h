#pragma once
// A probe of a built plan: each host's step checks once, read-only, under the
// run's cancel token; what `plan --probe` and `apply` of a probed plan share
// (docs/plan.md#probe).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/probe.h"
#include "plan/findings.h"
#include "plan/plan.h"
#include "playbook/model.h"
#include "run/request.h"
#include "transcript/writer.h"

namespace ratchet::run {

struct ProbeRequest {
  const playbook::Playbook* pb = nullptr;
  const playbook::Inventory* inv = nullptr;  ///< null: ad hoc hosts only
  std::vector<std::string> extra_keys;       ///< the names given with -e
  const plan::Plan* plan = nullptr;
  bool pinned = false;  ///< connect accepts only the keys the plan saw (apply)
  Settings settings;    ///< settings.transcript: "" records nothing
};

/// A probe that ran.
struct ProbeRun {
  std::vector<engine::HostProbe> reps;  ///< in the plan's hosts' order, reasons masked
  int code = 0;         ///< 0, 1 a check could not look, 3 unreachable, 4 host key, 130 ^C
  long long ms = 0;     ///< wall time of the whole probe
  std::string at;       ///< RFC 3339 UTC: when it began
  /// The probe's writer (closed to new events): its mask() and mask_tree()
  /// hide every secret value the probe knew, as its transcript does.
  std::shared_ptr<const transcript::Writer> writer;
  std::string transcript_failure;  ///< why the transcript could not be written ("" = it could)
};

/// Probes the plan's hosts, each step's check once, recording to
/// settings.transcript (a run whose run_start says "mode": "probe"). nullopt
/// when a secret or the become password cannot be read (said on settings.diag; exit 2).
std::optional<ProbeRun> probe_plan(const ProbeRequest& r);

/// The probe as the plan file keeps it.
plan::Findings findings_of(const ProbeRun& r);

}  // namespace ratchet::run
