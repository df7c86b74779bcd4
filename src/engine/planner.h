#pragma once
// The per-host plan: every step rendered for every host in dry-run mode.
// `plan` prints it; `run` builds it first so nothing connects before every
// step of every host renders.
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

struct HostPlan {
  playbook::Host host;
  std::vector<PlannedStep> steps;
};

/// Renders each step of `pb` for the host whose scope is `scope` (built with
/// host_scope(..., run = nullptr)). Appends "file:line:col: host H: step S: ..."
/// to *errors for each step that does not render; true when none failed.
bool plan_host(const playbook::Playbook& pb, const playbook::Host& host,
               const nlohmann::json& scope, HostPlan* out, std::vector<std::string>* errors);

/// The plan as JSON: {"host", "steps": [{"id", "kind", "name", "commands":
/// [{"rung", "role", "command", "stdin"?}]}]} (docs/playbook.md, `plan --json`).
nlohmann::json plan_json(const HostPlan& hp);

}  // namespace ratchet::engine
