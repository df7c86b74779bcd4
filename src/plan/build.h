#pragma once
// Builds the plan of one host from the model: each step rendered against the
// host's scope. Pure: no I/O (the model holds every file's bytes).
#include <string>
#include <vector>

#include "plan/plan.h"

namespace ratchet::plan {

/// Renders each step of `pb` for `host` against `scope` (plan::host_scope
/// with no run info and dry secrets) into out->steps; out->host and out->vars
/// are set, out->endpoint is left to the caller. Appends "host H: file:line:col:
/// step S: ..." to *errors for each step that does not render; true when none failed.
/// With `keep`, only the steps i with (*keep)[i] (plan/selection.h) are planned.
bool plan_host(const playbook::Playbook& pb, const playbook::Host& host, const playbook::Value& scope,
               HostPlan* out, std::vector<std::string>* errors, const std::vector<bool>* keep = nullptr);

/// The values known only at run time that step `s` uses, in first-use order:
/// "steps.ID.FIELD", "run.id", "run.started", and the names of secrets (in any
/// field, the `when`, or the template file it writes).
std::vector<std::string> runtime_refs(const playbook::Playbook& pb, const playbook::Step& s);

/// The regex a check command's stdout must match ("" = none).
std::string stdout_matches(const steps::Command& c);

/// What a gpus_idle check is judged against, as `plan` prints it ("GPUs all,
/// idle at most 512 MiB used, user alice"); "" for any other command.
std::string gpus_judged(const steps::Command& c);

}  // namespace ratchet::plan
