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

const transport::Library& wire_library() {
  static const std::string reference =
      "# <ratchet host library, sha256 " + host_library_sha256() + ": the host_library event>";
  static const transport::Library lib{host_library(), reference, "ratchet_"};
  return lib;
}

std::string with_library_reference(const std::string& command) {
  return transport::with_library_reference(command, &wire_library());
}

std::string with_library(const std::string& command) { return transport::with_library(command, &wire_library()); }

}  // namespace ratchet::steps
