#pragma once
// Who signed the run a report shows (`run --sign`; transcript/sign.h): as the
// transcript recorded it, or checked with ssh-keygen when asked.
#include <string>

#include "report/source.h"

namespace ratchet::report {

/// Sets s->signature_state and signature_text from the run's `signature` event;
/// with `allowed_signers` (not ""), checks TRANSCRIPT.sig against the run's
/// final head with `ssh-keygen -Y verify` (for `signer` when not "").
void judge_signature(Source* s, const std::string& allowed_signers, const std::string& signer);

}  // namespace ratchet::report
