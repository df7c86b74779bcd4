// plan::stale_reasons / host_differences / plan_differences: each cause that makes apply refuse.
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
}

namespace {

// A plan of one host `box` with one step `stop` that checks `true`.
plan::Plan one_step_plan() {
  plan::Plan P;
  P.sources = {{"playbook", "", "/x/pb.toml", "abc"}};
  plan::HostPlan h;
  h.host.name = "box";
  h.endpoint = {"10.0.0.1", 22, "root", "", "", "", false, {"SHA256:k1"}};
  plan::Step st;
  st.id = "stop";
  st.source = "pb.toml:3:1";
  st.prepared.rungs.resize(1);
  st.prepared.rungs[0].check.push_back(steps::check_command("true", util::Millis(1000), steps::Judge::exit0));
  st.rung_facts.resize(1);
  h.steps = {st};
  P.hosts = {h};
  return P;
}

}  // namespace

TEST_CASE("freshness: the whole plan is compared, each difference named by its path", "[plan]") {
  const plan::Plan saved = one_step_plan();
  CHECK(plan::plan_differences(saved, saved).empty());
  plan::Plan now = saved;
  const std::string fix = " make the plan again (ratchet plan ... --out FILE) and review it";
  // A guard: the lock, its path, the audit line.
  now.hosts[0].guards.lock = true;
  CHECK(plan::plan_differences(saved, now) ==
        std::vector<std::string>{"host box: the plan built now differs from the saved one at lock: false in the plan, "
                                 "\"/run/lock/ratchet.lock\" now;" + fix});
  plan::Plan locked = now;
  now.hosts[0].guards.lock_path = "/tmp/other.lock";
  CHECK(plan::plan_differences(locked, now) ==
        std::vector<std::string>{"host box: the plan built now differs from the saved one at lock: "
                                 "\"/run/lock/ratchet.lock\" in the plan, \"/tmp/other.lock\" now;" + fix});
  now = saved;
  now.hosts[0].guards.audit_log = "";
  CHECK(plan::plan_differences(saved, now) ==
        std::vector<std::string>{"host box: the plan built now differs from the saved one at audit_log: "
                                 "\"/var/log/ratchet/runs.log\" in the plan, false now;" + fix});
  // A step's become, and its commands.
  now = saved;
  now.hosts[0].steps[0].become = true;
  now.hosts[0].steps[0].become_shown = "root";
  auto d = plan::plan_differences(saved, now);
  REQUIRE(d.size() == 1);
  CHECK(d[0] == "host box: the plan built now differs from the saved one at steps[0].become (step `stop`): "
                "false in the plan, \"root\" now;" + fix);
  now = saved;
  now.hosts[0].steps[0].prepared.rungs[0].check[0].text = "false";
  CHECK(plan::plan_differences(saved, now) ==
        std::vector<std::string>{"host box: the plan built now differs from the saved one at "
                                 "steps[0].commands[0].command (step `stop`): \"true\" in the plan, \"false\" now;" + fix});
  // The policy: the plan's own members, before the hosts'.
  now = saved;
  now.policy.max_fail = {true, 10, true};
  now.hosts[0].guards.lock = true;
  d = plan::plan_differences(saved, now);
  REQUIRE(d.size() == 2);
  CHECK(d[0] == "the plan built now differs from the saved one at policy.max_fail: null in the plan, \"10%\" now;" + fix);
  CHECK(d[1].rfind("host box: the plan built now differs from the saved one at lock: ", 0) == 0);
}

TEST_CASE("freshness: what may differ is listed, and only that is not compared", "[plan]") {
  const plan::Plan saved = one_step_plan();
  plan::Plan now = saved;
  REQUIRE(plan::kNotCompared.size() == 2);
  for (const auto& n : plan::kNotCompared) CHECK(std::string(n.why).size() > 20);  // each says why
  now.hosts[0].endpoint.known_keys = {"SHA256:k1", "SHA256:k2"};  // known_hosts learned a key since
  now.hosts[0].steps[0].source = "/x/pb.toml:3:1";                // the playbook by its absolute path
  CHECK(plan::plan_differences(saved, now).empty());
  // Endpoint and vars are named as such, before any other place.
  now.hosts[0].endpoint.port = 2222;
  now.hosts[0].guards.lock = true;
  CHECK(plan::plan_differences(saved, now) ==
        std::vector<std::string>{"host box: its port is `2222` now, `22` in the plan"});
}
