#include "util/who.h"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

namespace ratchet::util {

std::string who_here() {
  std::string user = "unknown";
  if (const passwd* pw = ::getpwuid(::getuid())) user = pw->pw_name;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("{}@{}", user, *host ? host : "unknown");
}

}  // namespace ratchet::util
