#include "run/end.h"

namespace ratchet::run {

void end_run(transcript::Writer& w, const transcript::RunEnd& e) { transcript::write_run_end(w, e); }

}  // namespace ratchet::run
