#include <catch2/catch.hpp>

#include "plan/scope.h"

using namespace ratchet;
using ratchet::playbook::Value;

TEST_CASE("host scope: playbook < group < host < -e, plus built-ins", "[plan]") {
  playbook::Playbook pb;
  pb.name = "p";
  pb.sha256 = "abc";
  pb.vars = {{"unit", "from-playbook"}, {"a", 1}, {"e", "from -e"}};
  playbook::Inventory inv;
  playbook::Host h;
  h.name = "box";
  h.address = "10.0.0.1";
  h.vars = {{"unit", "from-host"}, {"e", "from-host"}};
  inv.hosts["box"] = h;
  inv.order = {"box"};
  inv.groups["lab"] = {"box"};
  inv.group_vars["lab"] = {{"unit", "from-group"}, {"g", true}};
  plan::RunInfo run{"R1", "2026-11-30T00:00:00Z"};
  auto s = plan::host_scope(pb, &inv, h, {"e"}, {{"token", "s3cret"}}, &run);
  CHECK(s["unit"] == "from-host");
  CHECK(s["g"] == true);
  CHECK(s["e"] == "from -e");
  CHECK(s["token"] == "s3cret");
  CHECK(s["host"]["address"] == "10.0.0.1");
  CHECK(s["run"]["id"] == "R1");
  CHECK(s["playbook"]["sha256"] == "abc");
  auto dry = plan::host_scope(pb, &inv, h, {}, Value::table(), nullptr);
  CHECK_FALSE(dry.contains("run"));
  CHECK(dry["e"] == "from-host");
}
