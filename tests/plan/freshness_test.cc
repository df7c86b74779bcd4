// plan::stale_reasons / host_differences: each cause that makes apply refuse.
#include <catch2/catch.hpp>

#include <fstream>

#include <filesystem>

#include "plan/freshness.h"
#include "steps/kinds.h"
#include "support/scratch_dir.h"
#include "util/hash.h"

using namespace ratchet;

namespace {

plan::Plan made_from(const std::string& pb, const std::string& tmpl) {
  plan::Plan P;
  P.made = {"2026-12-01T12:00:00Z", 1'000'000, "ops@laptop", "0.4.0", "lib"};
  P.sources = {{"playbook", "", pb, util::sha256_hex("name = \"x\"\n")},
               {"template", "n.tmpl", tmpl, util::sha256_hex("hello\n")},
               {"ssh_config", "", "/nonexistent/config", ""}};
  return P;
}

}  // namespace

TEST_CASE("freshness: unchanged files, same ratchet, young plan: nothing to refuse", "[plan]") {
  testing::ScratchDir dir("ratchet-fresh");
  std::ofstream(dir.path + "/pb.toml") << "name = \"x\"\n";
  std::ofstream(dir.path + "/n.tmpl") << "hello\n";
  plan::Here here{"0.4.0", "lib", 1'000'060, util::Millis(3'600'000), ""};
  CHECK(plan::stale_reasons(made_from(dir.path + "/pb.toml", dir.path + "/n.tmpl"), here).empty());
}

TEST_CASE("freshness: each stale cause is named, files with both sha256s", "[plan]") {
  testing::ScratchDir dir("ratchet-stale");
  std::ofstream(dir.path + "/pb.toml") << "name = \"x\"\n";
  std::ofstream(dir.path + "/n.tmpl") << "hello, edited\n";
  plan::Here here{"0.5.0", "lib2", 1'000'000 + 7200, util::Millis(3'600'000), "1h"};
  auto why = plan::stale_reasons(made_from(dir.path + "/pb.toml", dir.path + "/n.tmpl"), here);
  REQUIRE(why.size() == 4);
  CHECK(why[0] == "the plan was made by ratchet 0.4.0, this is ratchet 0.5.0: make the plan again with this one");
  CHECK(why[1].find("host library sha256 lib, this ratchet's is lib2") != std::string::npos);
  CHECK(why[2].find("2h ago, more than --max-age 1h") != std::string::npos);
  CHECK(why[3] == "template " + dir.path + "/n.tmpl changed since the plan was made: sha256 " +
                      util::sha256_hex("hello\n") + " in the plan, " + util::sha256_hex("hello, edited\n") + " now; review and make the plan again");
  std::filesystem::remove(dir.path + "/pb.toml");
  here = {"0.4.0", "lib", 1'000'000, util::Millis(3'600'000), ""};
  why = plan::stale_reasons(made_from(dir.path + "/pb.toml", dir.path + "/n.tmpl"), here);
  REQUIRE(why.size() == 2);
  CHECK(why[0].find("the playbook " + dir.path + "/pb.toml cannot be read now (No such file or directory)") == 0);
}

TEST_CASE("freshness: a host's endpoint field or var that changed is named", "[plan]") {
  plan::HostPlan a;
  a.host.name = "box";
  a.endpoint = {"10.0.0.1", 22, "root", "", "", "", false, {}};
  a.vars = {{"gpus", 8}, {"unit", "x"}};
  plan::HostPlan b = a;
  CHECK(plan::host_differences(a, b).empty());
  b.endpoint.port = 2222;
  b.endpoint.user = "ops";
  b.vars["gpus"] = 4;
  b.vars.erase("unit");
  auto d = plan::host_differences(a, b);
  REQUIRE(d.size() == 4);
  CHECK(d[0] == "host box: its port is `2222` now, `22` in the plan");
  plan::HostPlan e = a;
  e.endpoint.proxy = "sh -c 'touch /tmp/p; exec nc %h %p'";
  CHECK(plan::host_differences(a, e) ==
        std::vector<std::string>{"host box: its ssh config ProxyCommand is `sh -c 'touch /tmp/p; exec nc %h %p'` now, "
                                 "(none) in the plan"});
  CHECK(d[1] == "host box: its user is `ops` now, `root` in the plan");
  CHECK(d[2] == "host box: var `gpus` is 4 now, 8 in the plan");
  CHECK(d[3] == "host box: var `unit` is no longer defined (it was \"x\" in the plan)");
  // Same endpoint and vars, other commands: the first differing place.
  plan::HostPlan c = a;
  plan::Step st;
  st.id = "stop";
  st.prepared.rungs.resize(1);
  st.prepared.rungs[0].check.push_back(steps::check_command("true", util::Millis(1000), steps::Judge::exit0));
  st.rung_facts.resize(1);
  a.steps = {st};
  c.steps = {st};
  c.steps[0].prepared.rungs[0].check[0].text = "false";
  d = plan::host_differences(a, c);
  REQUIRE(d.size() == 1);
  CHECK(d[0] == "host box: the plan built now differs from the saved one at steps[0].commands[0].command (step `stop`): make the plan again");
}
