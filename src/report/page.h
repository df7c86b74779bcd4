#pragma once
// The whole report page: header (what ran, by whom, when, the plan digest, the
// exit status, the hash chain), recap table, timeline, per-host step details.
// One self-contained HTML document: inline style, no script, nothing fetched.
#include <string>

#include "report/source.h"
#include "report/step_details.h"

namespace ratchet::report {

/// The page for the run of `src`. Every byte from the transcript is escaped (html.h).
std::string render_page(const Source& src, const DetailOptions& opt = {});

}  // namespace ratchet::report
