#include "util/owner_words.h"

#include <fmt/format.h>

namespace ratchet::util {

std::string owner_words(const Value& o) {
  if (!o.is_table()) return "";
  auto get = [&](const char* k) {
    const Value* v = o.find(k);
    return v && v->is_string() ? v->as_string() : std::string();
  };
  const std::string kind = get("kind"), name = get("name"), scope = get("scope"), user = get("user"),
                    restart = get("restart"), id = get("id");
  if (kind == "unit") {
    std::string s = scope == "user" ? fmt::format("user unit {} of {}", name, user.empty() ? "?" : user)
                                    : "unit " + name;
    return restart.empty() ? s : fmt::format("{} (Restart={})", s, restart);
  }
  if (kind == "container") {
    const std::string short_id = id.substr(0, 12);
    std::string what = scope.empty() ? short_id : fmt::format("{} {}", scope, short_id);
    std::string s = name.empty() ? "container " + what : fmt::format("container {} ({})", name, what);
    return restart.empty() ? s : fmt::format("{}, restart policy {}", s, restart);
  }
  if (kind == "pod") return name.empty() ? "pod " + id : fmt::format("pod {} ({})", name, id);
  if (kind == "cgroup") return fmt::format("cgroup {} (no unit, container, pod or session: what restarts it is unknown)", name);
  if (kind == "session") return user.empty() ? "login session " + id : fmt::format("login session {} of {}", id, user);
  return "";
}

}  // namespace ratchet::util
