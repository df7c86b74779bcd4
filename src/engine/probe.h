#pragma once
// `plan --probe`: what each step would do on each host right now. Runs only
// rung 0's check commands of the plan, once each (no retries, settle or
// waits), through the same executor and session as `run`; never an action
// or a rung. A snapshot, judged by the same judges (docs/plan.md#probe).
#include <atomic>
#include <string>
#include <vector>

#include "engine/host_run.h"
#include "steps/holders.h"
#include "transcript/writer.h"

namespace ratchet::engine {

/// What a step would do now.
enum class ProbeVerdict {
  ok,               ///< the check holds: nothing would be sent but the check
  would_act,        ///< the check fails (or there is none): the action would run
  could_not_check,  ///< the check could not look (fail-closed), or could not be sent
  not_probed,       ///< `probe = false`: its check was not run
  skipped,          ///< a false `when`: `run` would skip it too
};

/// The verdict as written: "ok", "would_act", "could_not_check", "not_probed", "skipped".
std::string_view name(ProbeVerdict v);

/// What the probe found for one step.
struct StepProbe {
  std::string id, name;
  playbook::Kind kind = playbook::Kind::run;
  ProbeVerdict verdict = ProbeVerdict::could_not_check;
  std::string reason;  ///< the check's own words (why it fails, a note), masked
  bool no_check = false;  ///< a run step without check/unless/creates: it acts every time
  std::string action;     ///< would_act: the command the step's own action sends ("" = none)
  std::string rung;       ///< would_act with no action of its own: rung 1's command
  /// would_act, but the step has neither an action nor a rung (a verify that
  /// fails): run would fail the step, so the text says "would fail".
  bool no_remedy = false;
  std::vector<std::string> depends_on;  ///< earlier would-act steps whose results or resources it reads
  std::vector<steps::Holder> holders;   ///< kill, no_holders, absent: the processes selected now
  std::vector<std::pair<std::string, std::string>> state;  ///< service: active, sub, enabled, reload, file
  bool would_create = false;  ///< write: the file does not exist
  std::string diff;           ///< write: unified diff of the content, secrets masked ("" = none)
  std::string output;         ///< a failing command check's output (first lines, masked)
  long long ms = 0;
};

/// What the probe found on one host.
struct HostProbe {
  std::string host;
  HostStatus status = HostStatus::ok;  ///< ok, failed (a check could not run), unreachable, host_key, interrupted
  std::string reason, cause;           ///< unreachable/host_key: why and the cause name
  std::string connected;               ///< "user@address:port"
  std::vector<StepProbe> steps;
  long long ms = 0;
};

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
