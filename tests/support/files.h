#pragma once
// Whole-file read and write for test set-up and assertions.
#include <fstream>
#include <iterator>
#include <string>

namespace ratchet::testing {

/// Replaces `path` with `text` (no error check: the test's next read fails loudly).
inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// The bytes of `path`; "" when it cannot be read.
inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace ratchet::testing
