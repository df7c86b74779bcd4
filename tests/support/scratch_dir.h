#pragma once
// A directory for one test file's scratch files, removed when the process exits.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace ratchet::testing {

class ScratchDir {
 public:
  /// Creates $TMPDIR/<prefix>-<pid>.
  explicit ScratchDir(const std::string& prefix) {
    auto p = std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(getpid()));
    std::filesystem::create_directories(p);
    path = p.string();
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
};

}  // namespace ratchet::testing
