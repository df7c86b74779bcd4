#include "steps/library.h"

#include "util/hash.h"

namespace ratchet::steps {

const std::string& host_library() {
  static const std::string text =
#include "ratchet/host_library.inc"
      ;
  return text;
}

const std::string& host_library_sha256() {
  static const std::string sha = util::sha256_hex(host_library());
  return sha;
}

std::string with_library_reference(const std::string& command) {
  if (command.find("ratchet_") == std::string::npos) return command;
  return "# <ratchet host library, sha256 " + host_library_sha256() + ": the host_library event>\n" +
         command;
}

std::string with_library(const std::string& command) {
  if (command.find("ratchet_") == std::string::npos) return command;
  return host_library() + "\n" + command;
}

}  // namespace ratchet::steps
