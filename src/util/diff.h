#pragma once
// A unified diff of two texts, line by line (diff -u's format), for a
// probe's "this file would change like this".
#include <cstddef>
#include <string>

namespace ratchet::util {

/// The hunks (with `context` lines around each change) that turn `before`
/// into `after`, headed "--- from_name" / "+++ to_name"; "" when they are
/// equal. Texts of more than `max_lines` lines are not compared: one line says so.
std::string unified_diff(const std::string& before, const std::string& after, const std::string& from_name,
                         const std::string& to_name, size_t context = 3, size_t max_lines = 2000);

}  // namespace ratchet::util
