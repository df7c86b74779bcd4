// playbook/kind.h: each kind's name, written once, and read back.
#include <catch2/catch.hpp>

#include <set>

#include "playbook/kind.h"

using namespace ratchet::playbook;

TEST_CASE("kind: every kind round-trips through its name", "[playbook]") {
  std::vector<std::string> names;
  for (Kind k : kKinds) {
    names.emplace_back(name(k));
    CHECK(parse_kind(name(k)) == k);
  }
  // The names the playbook, the plan and the transcript write, in docs/playbook.md's order.
  CHECK(names == std::vector<std::string>{"run", "service", "kill", "verify", "write", "copy", "fetch", "reboot"});
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == kKinds.size());
}

TEST_CASE("kind: a name that is no kind is refused", "[playbook]") {
  for (const char* s : {"", "shell", "Run", "KILL", " run", "run ", "kill_action", "exit0"}) {
    INFO(s);
    CHECK_FALSE(parse_kind(s));
  }
}
