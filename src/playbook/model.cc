#include "playbook/model.h"

#include <fmt/format.h>

namespace ratchet::playbook {

std::string SourcePos::str() const {
  if (line <= 0) return file;
  if (col <= 0) return fmt::format("{}:{}", file, line);
  return fmt::format("{}:{}:{}", file, line, col);
}

}  // namespace ratchet::playbook
