#pragma once
// The host library: POSIX sh functions (src/steps/lib/ratchet.sh) that step
// commands call by name (ratchet_kill, ratchet_holders, ratchet_write, ...).
#include <string>

#include "transport/wire.h"

namespace ratchet::steps {

/// The library's text, as compiled into the binary.
const std::string& host_library();

/// The library as the transport sends it (transport::Library): its text, the
/// reference line the transcript records instead, and the "ratchet_" marker.
const transport::Library& wire_library();

/// The exact script sent for `command`: the library followed by the command when
/// the command calls a ratchet_* function, else the command unchanged.
std::string with_library(const std::string& command);

/// Like with_library, but the library's text is replaced by one comment line
/// naming its sha256 (the transcript's `sent`; run_start holds the text once).
std::string with_library_reference(const std::string& command);

/// SHA-256 of host_library(), hex.
const std::string& host_library_sha256();

}  // namespace ratchet::steps
