#pragma once
// One host's run over one session, step by step, so that a strategy (fleet.h)
// can decide when each host takes its next step.
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "engine/host_lock.h"
#include "engine/progress.h"
#include "engine/ratchet_loop.h"
#include "plan/plan.h"
#include "playbook/model.h"
#include "transcript/writer.h"
#include "transport/transport.h"

namespace ratchet::engine {

/// Everything one host's run needs.
struct HostJob {
  const playbook::Playbook* pb = nullptr;  ///< the model the plan was built from (deferred steps render from it)
  const plan::HostPlan* plan = nullptr;    ///< what runs: its steps, in order
  playbook::Host host;
  transport::Endpoint endpoint;
  playbook::Value scope;  ///< host_scope(...) with run info; steps.* is filled as steps end
};

/// How one host's run ended.
struct HostReport {
  std::string host;
  HostStatus status = HostStatus::ok;
  std::map<std::string, int> counts;  ///< ok, changed, escalated, failed, skipped
  std::string reason;                 ///< unreachable message or failed step's reason
  std::string cause;                  ///< unreachable only: dns, refused, timeout, host_key, auth, other
  std::string failed_step;            ///< id of the step that failed ("" = none)
  /// The step that stopped the host (it failed with on_failure = "stop", or its
  /// session was lost); every later step is skipped "host stopped at STEP".
  std::string stopped_at;
  /// Each skipped step in order: {id, reason} (a false `when`, or the host stopped).
  std::vector<std::pair<std::string, std::string>> skipped;
  long long ms = 0;                   ///< connect to host_end
  /// Problems that did not fail the host (the audit line not written), one line each.
  std::vector<std::string> warnings;
};

/// The reason recorded for a step not run because the host stopped at `step`.
std::string stopped_reason(const std::string& step);

/// What every host of a run shares (all pointers outlive the run).
struct RunShared {
  transcript::Writer* w = nullptr;
  Progress* progress = nullptr;
  const std::atomic<bool>* interrupted = nullptr;  ///< may be null
  Sleeper sleep;
  /// The become password, or null. Must already be a secret of `w`.
  const std::string* become_password = nullptr;
  /// How long to try to reconnect a session that dropped mid-run (0 = never).
  util::Millis reconnect_timeout{30'000};
  /// The lock and audit facts; null = neither (engine tests, probes).
  const RunGuards* guards = nullptr;
  /// The run's artifact directory: fetch steps write under ARTIFACTS/HOST/ (engine/artifacts.h).
  std::string artifacts = "artifacts";
};

/// One host's run: connect(), then run_step(i) for each step in order while it
/// returns true, then finish(). Not thread-safe; one thread drives it.
class HostRun {
 public:
  HostRun(HostJob& job, transport::Transport& t, const RunShared& shared);

  /// Opens the session and records `connect` (or `unreachable`). False = the
  /// host is done (finish() reports unreachable / host_key).
  bool connect();
  /// Runs step `i` (or records it skipped). False = the host stops here: the
  /// step failed with on_failure = "stop", or the run was interrupted.
  bool run_step(size_t i);
  /// Records the steps not run because the host stopped (skipped, "host
  /// stopped at STEP"), then host_end; closes the session and returns the
  /// report. Call once.
  HostReport finish();

  size_t step_count() const { return job_.plan->steps.size(); }

 private:
  StepOutcome run_reboot(const steps::PreparedStep& ps);
  // The lock on the host and the audit line (host_lock.h).
  bool wants_lock() const;
  /// Takes the host's lock (waiting, breaking as RunGuards say): "" = held, else why not.
  std::string take_lock(bool again);
  /// Releases the lock this run holds (also after an interrupt); a failure is a warning in rep_.
  void release_lock();
  /// After host_end: appends the audit line (a failure is a warning in rep_).
  void write_audit();
  /// The commands step `p` runs now: the plan's, or, for a step that uses
  /// run-time values, its model rendered against the scope so far.
  bool commands_for(const plan::Step& p, steps::PreparedStep* out, std::string* err) const;

  HostJob& job_;
  transport::Transport& t_;
  RunShared shared_;
  std::optional<Executor> ex_;
  /// Records `step` skipped for `reason`; `stopped_at` names the step a host stopped at ("" = none).
  void skip(const plan::Step& step, const std::string& reason, const std::string& stopped_at = "");

  HostReport rep_;
  long long start_ms_ = 0;
  std::string started_at_;  ///< UTC RFC 3339, at connect
  bool lock_held_ = false;
  bool lock_refused_ = false;  ///< the lock was not taken: no step ran
  size_t next_ = 0;  ///< the first step not yet run
};

/// Connects, runs every step (stopping at a failed step unless on_failure =
/// "continue"), records everything, closes the session.
HostReport run_host(HostJob& job, transport::Transport& t, const RunShared& shared);

using TransportFactory =
    std::function<std::unique_ptr<transport::Transport>(const transport::Endpoint&)>;

}  // namespace ratchet::engine
