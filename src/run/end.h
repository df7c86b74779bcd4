#pragma once
// The run's end: the one place every kind of run (plan, probe, exec) ends.
#include "transcript/run_events.h"
#include "transcript/writer.h"

namespace ratchet::run {

/// Ends the run recorded by `w`: writes run_end, its last event. After it,
/// w.head() is the run's final head (nothing is written to `w` after this).
void end_run(transcript::Writer& w, const transcript::RunEnd& e);

}  // namespace ratchet::run
