#pragma once
// Paths of local files.
#include <string>

namespace ratchet::util {

/// `path` absolute and normalised (unchanged when it is "" or cannot be made absolute).
std::string absolute_path(const std::string& path);

}  // namespace ratchet::util
