#pragma once
// Whole-file read and write for test set-up and assertions.
#include <filesystem>
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

/// How many entries `dir` holds (/proc/self/fd, /proc/self/task: leak checks).
inline size_t entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace ratchet::testing
