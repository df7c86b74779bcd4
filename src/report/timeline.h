#pragma once
// The run's timeline: one row per host, its steps as bars placed in time and
// coloured by status, with rungs, retries, reconnects and reboots marked.
#include <string>

#include "report/model.h"

namespace ratchet::report {

/// The timeline section's HTML (positioned divs, no script); every name escaped.
std::string timeline_html(const Run& run);

}  // namespace ratchet::report
