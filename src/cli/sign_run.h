#pragma once
// `run --sign` / `apply --sign` (or --sign-key, or `sign = true` in the
// inventory's [defaults]): which key
// signs, checked before anything connects, and the signing after run_end
// (transcript/sign.h does the signing; docs/transcript.md, "Signature").
#include <optional>
#include <ostream>
#include <string>

#include "cli/options.h"
#include "transcript/sign.h"
#include "transcript/writer.h"

namespace ratchet::cli {

/// The key to sign the run with, when --sign, --sign-key or the inventory's
/// [defaults] `sign = true` asks for a signature; nullopt when none is asked
/// (*err "") or when it cannot be made (*err: the usage error's message, naming the fix).
std::optional<transcript::SignKey> sign_key_for(const Options& o, const Loaded& L, const std::string& transcript,
                                                std::string* err);

/// After run_end: signs the final head into TRANSCRIPT.sig and records it;
/// prints what was signed on `human`, or the error on stderr. Returns the exit
/// code: `code`, or 1 (kExitFailed) when signing failed and `code` was 0.
int sign_at_end(transcript::Writer& w, const transcript::SignKey& key, int code, std::ostream& human);

}  // namespace ratchet::cli
