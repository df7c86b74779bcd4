#pragma once
// Writes the report file: private (mode 0600: it holds host output) and
// atomic (a temp file beside it, renamed over it), never over a non-regular file.
#include <string>

namespace ratchet::report {

/// Writes `text` to `path`, replacing a regular file there. Refuses a path that
/// is a directory, symlink, device, FIFO or socket. "" on success, else why
/// ("cannot write report r.html: Is a directory"); no temp file is left behind.
std::string write_private_atomic(const std::string& path, const std::string& text);

}  // namespace ratchet::report
