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

/// Renders every templated key of `a` against `scope` (shell keys with quoting)
/// and reads each by its key's rule (playbook/key_rules.h), into `*out` (a copy
/// of a.keys). False with *err naming the key's file:line:col and the problem.
bool resolve(const playbook::Action& a, const playbook::Value& scope, bool plan,
             playbook::ActionKeys* out, std::string* err);

/// Renders `step` against `scope` (vars + host/run/playbook/ratchet/steps; see
/// playbook/template.h), resolves its keys and builds its rungs into `out`.
/// Returns false with *err naming the key's file:line:col and the problem.
bool prepare_step(const playbook::Step& step, const playbook::Value& scope, const PrepareOptions& opt,
                  PreparedStep* out, std::string* err);

}  // namespace ratchet::steps
