#pragma once
// kind = "copy" (docs/playbook.md#copy): one check and one action per entry of
// the source tree, each file streamed from the controller on its upload's
// stdin, pinned by the sha256 the plan shows and checked on the host before it
// is put in place.
#include "steps/action.h"
#include "transport/transport.h"

namespace ratchet::steps {

/// Judges `ratchet_copy_stat ROOT REL`'s output against c.expect.entry: holds
/// when the entry is there as the source has it; `could not check` when the
/// command failed.
Verdict judge_copy(const Command& c, const transport::ExecResult& r);

}  // namespace ratchet::steps
