#include "playbook/kind.h"

namespace ratchet::playbook {

// The one place each kind's name is written.
std::string_view name(Kind k) {
  switch (k) {
    case Kind::run: return "run";
    case Kind::service: return "service";
    case Kind::kill: return "kill";
    case Kind::verify: return "verify";
    case Kind::write: return "write";
    case Kind::copy: return "copy";
    case Kind::fetch: return "fetch";
    case Kind::reboot: return "reboot";
  }
  return "?";  // not reached: every kind is a case above (-Wswitch)
}

std::optional<Kind> parse_kind(std::string_view s) {
  for (Kind k : kKinds)
    if (name(k) == s) return k;
  return std::nullopt;
}

}  // namespace ratchet::playbook
