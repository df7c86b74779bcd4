#pragma once
// The per-host plan: every step rendered for every host in dry-run mode.
// `plan` prints it; `run` builds it first so nothing connects before every
// step of every host renders.
#include <optional>
#include <string>
#include <vector>

#include "playbook/model.h"
#include "steps/action.h"

namespace ratchet::engine {

struct PlannedStep {
  const playbook::Step* step = nullptr;
  steps::PreparedStep prepared;
  std::string when_note;  ///< "runs only when NAME is true" ("" = always)
};

/// What one rung does beyond its commands, as `plan` shows it (text and JSON).
struct RungFacts {
  size_t rung = 0;
  std::string kind;
  util::Millis timeout{0};  ///< bounds each of its commands (the step's unless the rung sets one)
  util::Millis settle{0};   ///< waited once after its action, before the check
  int retries = 0;          ///< extra check attempts while the check fails
  util::Millis delay{0};    ///< between those attempts
  /// kill only: how long the action waits for its targets to die (as written
  /// when it is not a duration ratchet can read before rendering)
  std::optional<util::Millis> wait;
  std::string wait_text;
};

/// The behaviour of one planned step on its host.
struct StepFacts {
  util::Millis timeout{0};
  std::string on_failure;  ///< "stop" | "continue"
  std::string become;      ///< the sudo user, "" = runs as the login user
  /// What sudo is given for every command of the step (for a sudoers rule),
  /// transport::sudo_argv: "sudo -n -H [-u USER] -- /bin/sh -c ..."; "" = no become.
  std::string sudo_argv;
  std::vector<RungFacts> rungs;
};

struct HostPlan {
  playbook::Host host;
  std::vector<PlannedStep> steps;
};

/// Renders each step of `pb` for the host whose scope is `scope` (built with
/// host_scope(..., run = nullptr)). Appends "file:line:col: host H: step S: ..."
/// to *errors for each step that does not render; true when none failed.
bool plan_host(const playbook::Playbook& pb, const playbook::Host& host,
               const nlohmann::json& scope, HostPlan* out, std::vector<std::string>* errors);

/// The facts of `p` on `host`: timing of each rung, on_failure, become.
StepFacts step_facts(const PlannedStep& p, const playbook::Host& host);

/// The regex a check command's stdout must match ("" = none).
std::string stdout_matches(const steps::Command& c);

/// The plan as JSON: {"host", "steps": [{"id", "kind", "name", "timeout_ms",
/// "on_failure", "become" (user or false), "rungs": [{"rung", "kind",
/// "timeout_ms", "settle_ms", "retries", "delay_ms", "wait_ms"?}], "commands":
/// [{"rung", "role", "command", "timeout_ms", "stdout_matches"?, "stdin"?}]}]}
/// (docs/playbook.md, `plan --json`). The caller adds the host's address.
nlohmann::json plan_json(const HostPlan& hp);

}  // namespace ratchet::engine
