#pragma once
// Whether a saved plan still describes what would run (docs/plan.md,
// "What apply refuses"): its files unchanged on disk, made by this ratchet,
// young enough, and each host's endpoint and vars as they were.
#include <string>
#include <vector>

#include "plan/plan.h"
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

/// One line per difference between a host's plan and the one built now from
/// the files on disk (empty: none): endpoint fields (address, port, user,
/// jump, identity), vars by name, then, if those agree, the first step whose
/// commands differ.
std::vector<std::string> host_differences(const HostPlan& planned, const HostPlan& now);

}  // namespace ratchet::plan
