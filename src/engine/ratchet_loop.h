#pragma once
// The ratchet loop (README.md, "A playbook in one minute"): check → act → settle → check (with retries)
// → rungs in order → ok / changed / escalated (rung k) / failed.
#include <functional>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "engine/status.h"
#include "steps/action.h"
#include "steps/respawn.h"

namespace ratchet::engine {

/// What one step did on one host; also the template values steps.ID.*.
struct StepOutcome {
  StepStatus status = StepStatus::failed;  ///< ok, changed, escalated or failed
  int rung = 0;        ///< rung after which the check passed; last tried when failed
  int rc = -1;         ///< exit status of the last command (-1: signal or none)
  std::string out, err;  ///< output of the last action (or check, when none acted)
  long long ms = 0;
  std::vector<steps::Holder> holders;       ///< processes found first
  std::vector<steps::Holder> holders_left;  ///< processes the last check found
  util::Value gpus = util::Value::array();        ///< verify gpus_idle: per-GPU evidence, first check
  util::Value gpus_after = util::Value::array();  ///< ... and the last check's
  std::string reason;  ///< why it failed, or a note
};

/// Waits (injectable so unit tests do not sleep).
using Sleeper = std::function<void(util::Millis)>;

/// Runs rung 0's check commands of `ps` once each through `ex` (a kill
/// check gets `selection` on stdin) and judges them: holds when all hold,
/// unknown when one could not look. Records the evidence event; `results`
/// (may be null) gets each command's result in order. `round` (may be null):
/// the kill action before this check, whose respawned holders a failing kill
/// check names (steps::explain_respawns).
steps::Verdict check_rung0(const steps::PreparedStep& ps, Executor& ex, const std::string& selection,
                           std::vector<transport::ExecResult>* results, steps::KillRound* round = nullptr);

/// Runs one prepared step through `ex`. Never throws for remote failures: a
/// failed or timed-out command is part of the outcome.
StepOutcome run_ratchet(const steps::PreparedStep& step, Executor& ex, const Sleeper& sleep);

}  // namespace ratchet::engine
