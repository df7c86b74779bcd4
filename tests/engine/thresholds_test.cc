// engine::threshold_lines: serial and max_fail in hosts, as `ratchet plan` prints them.
#include <catch2/catch.hpp>

#include "engine/thresholds.h"

using namespace ratchet;
using playbook::HostCount;
using V = std::vector<std::string>;

namespace {

playbook::RunPolicy policy(HostCount serial, HostCount max_fail) {
  playbook::RunPolicy p;
  p.serial = serial;
  p.max_fail = max_fail;
  return p;
}

}  // namespace

TEST_CASE("thresholds: each key set is printed in hosts", "[engine][fleet]") {
  CHECK(engine::threshold_lines(policy({}, {}), 5).empty());
  CHECK(engine::threshold_lines(policy({true, 1, false}, {true, 10, true}), 5) ==
        V{"serial 1: 5 batches of 1 host", "max_fail 10% of 5 hosts = 0: the first failed host stops later batches"});
  CHECK(engine::threshold_lines(policy({true, 30, true}, {true, 1, false}), 10) ==
        V{"serial 30% of 10 hosts = 3: 4 batches of 3 hosts, the last of 1",
          "max_fail 1: 2 failed hosts stop later batches"});
  // A limit the batches before the last cannot reach, and a single batch, say so.
  CHECK(engine::threshold_lines(policy({true, 2, false}, {true, 50, true}), 4) ==
        V{"serial 2: 2 batches of 2 hosts",
          "max_fail 50% of 4 hosts = 2: 3 failed hosts would stop later batches, but only 2 run before the last one: "
          "it never stops a batch"});
  CHECK(engine::threshold_lines(policy({true, 100, true}, {true, 0, false}), 3) ==
        V{"serial 100% of 3 hosts = 3: 1 batch of 3 hosts",
          "max_fail 0: every host is in one batch: there is no later batch for it to stop"});
}
