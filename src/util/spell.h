#pragma once
// "Did you mean ...?" suggestions for misspelt keys and names.
#include <string>
#include <string_view>
#include <vector>

namespace ratchet::util {

/// Returns the candidate nearest to `word` by edit distance (case-insensitive),
/// or "" when none is within max(2, len/3) edits. Ties go to the first candidate.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace ratchet::util
