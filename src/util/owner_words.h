#pragma once
// A process's owner (steps::Owner as data: {kind, name, scope, user, restart,
// id}) in words, for text output, the transcript's rendering and the report.
#include <string>

#include "util/value.h"

namespace ratchet::util {

/// "unit sglang.service (Restart=always)", "user unit a.service of alice",
/// "container web (docker abc123def456)", "pod NS/NAME (UID)", "login session 3
/// of alice"; "" for kind "none", a missing owner or one of another shape.
std::string owner_words(const Value& owner);

}  // namespace ratchet::util
