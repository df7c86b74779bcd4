#include "util/path.h"

#include <filesystem>

namespace ratchet::util {

std::string absolute_path(const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  auto p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

}  // namespace ratchet::util
