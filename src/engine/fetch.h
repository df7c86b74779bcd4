#pragma once
// Runs a fetch step (docs/playbook.md#fetch): its listing command, then one
// download per file listed, each streamed into the artifact directory
// (engine/artifacts.h) and recorded as a `fetch` event with its size and
// sha256. A file over max_size, a skipped match or a failed download fails
// the step (after the others are fetched).
#include <string>

#include "engine/executor.h"
#include "engine/ratchet_loop.h"

namespace ratchet::engine {

/// `ps` is a prepared fetch step; files land under `artifacts`/artifact_rel(host, path).
StepOutcome run_fetch(const steps::PreparedStep& ps, Executor& ex, transcript::Writer& w, const std::string& host,
                      const std::string& artifacts);

}  // namespace ratchet::engine
