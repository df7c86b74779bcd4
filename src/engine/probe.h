#pragma once
// `plan --probe`: what each step would do on each host right now. Runs only
// rung 0's check commands of the plan, once each (no retries, settle or
// waits), through the same executor and session as `run`; never an action
// or a rung. A snapshot, judged by the same judges (docs/plan.md#probe).
#include <atomic>
#include <string>
#include <vector>

#include "engine/host_run.h"
#include "plan/findings.h"
#include "steps/holders.h"
#include "transcript/writer.h"

namespace ratchet::engine {

/// What a step would do now, and what the probe found for it (plan/findings.h:
/// the plan file keeps the same values).
using ProbeVerdict = plan::ProbeVerdict;
using StepProbe = plan::StepFinding;

/// What the probe found on one host.
struct HostProbe {
  std::string host;
  HostStatus status = HostStatus::ok;  ///< ok, failed (a check could not run), unreachable, host_key, interrupted
  std::string reason, cause;           ///< unreachable/host_key: why and the cause name
  std::string connected;               ///< "user@address:port"
  std::vector<StepProbe> steps;
  long long ms = 0;
};

/// The host's findings as the plan file keeps them (its status by name).
plan::HostFindings findings_of(const HostProbe& r);

/// What every host of a probe shares (pointers outlive the probe).
struct ProbeShared {
  transcript::Writer* w = nullptr;  ///< --transcript, or a writer that records nothing
  const std::atomic<bool>* interrupted = nullptr;
  const std::string* become_password = nullptr;  ///< already a secret of `w`
};

/// Probes one host: connects, runs each step's check once, closes. `job.scope`
/// holds the real secrets and no run info (run.* and steps.* stay placeholders:
/// a check that needs one is not sent).
HostProbe probe_host(const HostJob& job, transport::Transport& t, const ProbeShared& shared);

/// probe_host for every job, at most `forks` at once; reports in the jobs' order.
std::vector<HostProbe> probe_fleet(const std::vector<HostJob>& jobs, int forks, const TransportFactory& make,
                                   const ProbeShared& shared);

}  // namespace ratchet::engine
