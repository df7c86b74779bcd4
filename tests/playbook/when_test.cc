#include <catch2/catch.hpp>

#include "playbook/when.h"

using namespace ratchet;
using ratchet::playbook::Value;

TEST_CASE("when: a boolean var or its negation", "[playbook]") {
  Value scope = {{"reboot", false}, {"n", 3}};
  bool go = true;
  std::string err;
  REQUIRE(playbook::eval_when("reboot", scope, &go, &err));
  CHECK_FALSE(go);
  REQUIRE(playbook::eval_when("not reboot", scope, &go, &err));
  CHECK(go);
  CHECK_FALSE(playbook::eval_when("n", scope, &go, &err));
  CHECK(err == "`when`: `n` must be true or false, got 3");
  CHECK_FALSE(playbook::eval_when("nope", scope, &go, &err));
}
