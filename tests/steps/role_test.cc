// steps/role.h: each command role's name, written once, and read back.
#include <catch2/catch.hpp>

#include <set>

#include "steps/role.h"

using namespace ratchet::steps;

TEST_CASE("role: every role round-trips through its name", "[steps]") {
  std::vector<std::string> names;
  for (Role r : kRoles) {
    names.emplace_back(name(r));
    CHECK(parse_role(name(r)) == r);
  }
  // The transcript's and the plan's `role` (docs/transcript.md).
  CHECK(names == std::vector<std::string>{"check", "action", "become_probe"});
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == kRoles.size());
}

TEST_CASE("role: a name that is no role is refused", "[steps]") {
  for (const char* s : {"", "Check", "actions", "become", "probe", "connected", "check "}) {
    INFO(s);
    CHECK_FALSE(parse_role(s));
  }
}
