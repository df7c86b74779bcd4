#include "steps/library.h"

namespace ratchet::steps {

const std::string& host_library() {
  static const std::string text =
#include "ratchet/host_library.inc"
      ;
  return text;
}

std::string with_library(const std::string& command) {
  if (command.find("ratchet_") == std::string::npos) return command;
  return host_library() + "\n" + command;
}

}  // namespace ratchet::steps
