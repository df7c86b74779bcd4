#pragma once
// Renders one step for one host (templates against the host's scope) and builds
// its rungs. Used by both `plan` (placeholders for run-time values) and `run`.
#include <map>
#include <string>

#include "playbook/model.h"
#include "steps/action.h"

namespace ratchet::steps {

struct PrepareOptions {
  bool plan = false;         ///< dry run: run-time values render as "<steps.x.stdout>"
  /// The files `template` and `unit_file` name, read at load (Playbook::files);
  /// null = none (a step naming one then fails to prepare).
  const std::map<std::string, playbook::LocalFile>* files = nullptr;
};

/// Renders `step` against `scope` (vars + host/run/playbook/ratchet/steps; see
/// playbook/template.h) and fills `out`. Returns false with *err naming the
/// field's file:line:col and the problem.
bool prepare_step(const playbook::Step& step, const Json& scope, const PrepareOptions& opt,
                  PreparedStep* out, std::string* err);

/// The keys of `kind` whose values are shell code (rendered with quoting).
bool is_shell_field(playbook::Kind kind, const std::string& key);

}  // namespace ratchet::steps
