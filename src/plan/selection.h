#pragma once
// Which steps a run takes: --tags, --skip-tags, --start-at, --step (docs/playbook.md,
// "Selecting steps"). Pure: the playbook and the selection in, a verdict per step out.
#include <string>
#include <vector>

#include "plan/plan.h"

namespace ratchet::plan {

/// Whether `sel` chooses steps at all (any of --tags, --skip-tags, --start-at, --step).
bool selects_steps(const Selection& sel);

/// What `plan` and `run` print of p's step selection: "selection: --tags T ...;
/// N step(s) left out:" and a line "  not selected: ID: WHY" per step left out;
/// "" when p chose no steps. Not yet made terminal-safe.
std::string selection_lines(const Plan& p);

/// Applies `sel` to pb's steps: (*keep)[i] for pb.steps[i]; *left_out gets the
/// steps it drops, in order, each with why. A step is kept when it is named by
/// --step (its id, register name, or the id of the include that brought it)
/// if any is given, is not before --start-at, has a tag of --tags if any, and
/// none of --skip-tags. Returns false with *err (a usage error) for a step or
/// tag no step has, or a kept step that reads the results of a dropped one
/// (`{{ steps.X... }}` or a `when` on steps.X), naming both.
bool select_steps(const playbook::Playbook& pb, const Selection& sel, std::vector<bool>* keep,
                  std::vector<Unselected>* left_out, std::string* err);

}  // namespace ratchet::plan
