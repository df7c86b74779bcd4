#include "util/owner_words.h"

#include <fmt/format.h>

namespace ratchet::util {

namespace {

struct KindName {
  OwnerKind kind;
  std::string_view name;
};
constexpr KindName kKinds[] = {{OwnerKind::none, "none"},       {OwnerKind::unknown, "unknown"},
                               {OwnerKind::unit, "unit"},       {OwnerKind::container, "container"},
                               {OwnerKind::pod, "pod"},         {OwnerKind::session, "session"},
                               {OwnerKind::cgroup, "cgroup"}};

}  // namespace

std::string_view name(OwnerKind k) {
  for (const auto& e : kKinds)
    if (e.kind == k) return e.name;
  return "none";  // not reached
}

std::optional<OwnerKind> parse_owner_kind(std::string_view word) {
  for (const auto& e : kKinds)
    if (e.name == word) return e.kind;
  return std::nullopt;
}

std::string owner_words(const Value& o) {
  if (!o.is_table()) return "";
  auto get = [&](const char* k) {
    const Value* v = o.find(k);
    return v && v->is_string() ? v->as_string() : std::string();
  };
  const auto kind = parse_owner_kind(get("kind"));
  if (!kind) return "";
  const std::string name = get("name"), scope = get("scope"), user = get("user"), restart = get("restart"),
                    id = get("id");
  switch (*kind) {
    case OwnerKind::none: return "";
    case OwnerKind::unknown:
      return fmt::format("could not tell the owner: {} unreadable", name.empty() ? "/proc/PID/cgroup" : name);
    case OwnerKind::unit: {
      std::string s = scope == "user" ? fmt::format("user unit {} of {}", name, user.empty() ? "?" : user)
                                      : "unit " + name;
      return restart.empty() ? s : fmt::format("{} (Restart={})", s, restart);
    }
    case OwnerKind::container: {
      const std::string short_id = id.substr(0, 12);
      std::string what = scope.empty() ? short_id : fmt::format("{} {}", scope, short_id);
      if (!user.empty()) what += ", rootless, of " + user;  // under the user's own manager
      std::string s = name.empty() ? "container " + what : fmt::format("container {} ({})", name, what);
      const Value* pod = o.find("pod");
      if (pod && pod->is_string()) s += fmt::format(" of pod {}", pod->as_string());
      return restart.empty() ? s + ", whether something restarts it cannot be told"
                             : fmt::format("{}, restart policy {}", s, restart);
    }
    case OwnerKind::pod: return name.empty() ? "pod " + id : fmt::format("pod {} ({})", name, id);
    case OwnerKind::cgroup:
      return fmt::format("cgroup {} (no unit, container, pod or session: what restarts it is unknown)", name);
    case OwnerKind::session: return user.empty() ? "login session " + id : fmt::format("login session {} of {}", id, user);
  }
  return "";
}

}  // namespace ratchet::util
