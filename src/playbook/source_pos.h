#pragma once
// A place in a source file, for messages that name file:line:col.
#include <string>

namespace ratchet::playbook {

/// A place in a source file; line and col are 1-based (0 = unknown).
struct SourcePos {
  std::string file;
  int line = 0;
  int col = 0;
  /// "file:line:col" (or just "file" when the position is unknown).
  std::string str() const;
};

}  // namespace ratchet::playbook
