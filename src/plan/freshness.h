#pragma once
// Whether a saved plan still describes what would run (docs/plan.md,
// "What apply refuses"): its files unchanged on disk, made by this ratchet,
// young enough, and the plan built now from its inputs the same as the saved one.
#include <string>
#include <vector>

#include "plan/plan.h"
#include "playbook/model.h"
#include "util/duration.h"

namespace ratchet::plan {

/// What the plan is checked against.
struct Here {
  std::string ratchet_version;
  std::string host_library_sha256;
  long long now_unix = 0;        ///< seconds since the epoch
  util::Millis max_age{24 * 3600 * 1000LL};  ///< older plans are refused
  std::string max_age_text;      ///< as the user wrote it ("" = max_age formatted)
};

/// One line per reason `p` may not run here (empty: none): another ratchet
/// version or host library; older than max_age (or made in the future); the
/// playbook, an included file, a template or a unit file it was made from changed or went
/// missing since (each named with both sha256s). Reads those files.
std::vector<std::string> stale_reasons(const Plan& p, const Here& here);

/// One line per file of the model just loaded (`pb`, from the plan's own
/// inputs) whose sha256 is not the plan's (empty: none): the playbook, each
/// included file, copy source file, template and unit file; and the
/// playbook's [secrets] against the plan's. What `apply` checks after it loads:
/// a file swapped between stale_reasons and the load is caught here.
std::vector<std::string> load_differences(const Plan& p, const playbook::Playbook& pb);

/// One line per difference between a host's endpoint or vars in the saved plan
/// and in the one built now (empty: none): address, port, user, jump, identity,
/// ssh config ProxyCommand and IdentitiesOnly, then vars by name.
std::vector<std::string> host_differences(const HostPlan& planned, const HostPlan& now);

/// The members of the plan document (codec.h plan_json without provenance)
/// that may differ between a saved plan and the one built now from the same
/// inputs, each with why it may: "hosts[].known_keys", ... Every other member
/// is compared by plan_differences.
struct NotCompared {
  const char* member;  ///< a path: "a.b" members, "a[].b" each element of array a
  const char* why;
};
extern const std::vector<NotCompared> kNotCompared;

/// One line per difference between the saved plan and the one built now from
/// its inputs (empty: none): each host's host_differences; then, where those
/// agree, the first place the two plan documents differ outside kNotCompared
/// (the policy, a host's lock or audit_log, a step's become or a command):
/// "host lab: the plan built now differs from the saved one at lock ...".
/// `saved` and `now` hold the same hosts in the same order.
std::vector<std::string> plan_differences(const Plan& saved, const Plan& now);

}  // namespace ratchet::plan
