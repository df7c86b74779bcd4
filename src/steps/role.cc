#include "steps/role.h"

namespace ratchet::steps {

// The one place each role's name is written.
std::string_view name(Role r) {
  switch (r) {
    case Role::check: return "check";
    case Role::action: return "action";
    case Role::become_probe: return "become_probe";
  }
  return "?";  // not reached: every role is a case above (-Wswitch)
}

std::optional<Role> parse_role(std::string_view s) {
  for (Role r : kRoles)
    if (name(r) == s) return r;
  return std::nullopt;
}

}  // namespace ratchet::steps
