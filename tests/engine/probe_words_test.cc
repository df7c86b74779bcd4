// engine::command_words / resources / overlap: what `depends on` reads of a
// command (docs/plan.md#probe).
#include <catch2/catch.hpp>

#include "engine/probe_words.h"

using namespace ratchet;

TEST_CASE("probe words: quotes go - $( ) and redirections split - paths are resources", "[probe]") {
  CHECK(engine::command_words("! kill -0 $(cat /run/x.pid)") ==
        std::vector<std::string>{"!", "kill", "-0", "cat", "/run/x.pid"});
  CHECK(engine::command_words("grep -q 'a b' \"/etc/my file\" </dev/null") ==
        std::vector<std::string>{"grep", "-q", "a b", "/etc/my file", "/dev/null"});
  steps::Command c;
  c.text = "ratchet_no_holders -- '/dev/nvidia*'";
  CHECK(engine::resources(c) == std::set<std::string>{"/dev/nvidia*"});
  c.text = "systemctl is-active inference.service";
  CHECK(engine::resources(c) == std::set<std::string>{"inference.service"});
  CHECK(engine::overlap("/dev/nvidia*", "/dev/nvidia3"));
  CHECK(engine::overlap("/srv/app", "/srv/app/notes.md"));
  CHECK_FALSE(engine::overlap("/srv/app", "/srv/application"));
}
