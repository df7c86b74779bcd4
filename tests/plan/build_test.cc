// plan::plan_host / host_json: every step rendered per host, as `plan --json` prints it.
#include <catch2/catch.hpp>

#include "plan/build.h"
#include "plan/codec.h"
#include "support/action_of.h"

using namespace ratchet;
using nlohmann::json;

TEST_CASE("plan build: every step's commands, rung by rung, as JSON", "[plan]") {
  playbook::Playbook pb;
  playbook::Step s;
  s.id = "free";
  s.name = "free";
  s.kind = playbook::Kind::verify;
  s.body = testing::action_of({{"kind", "verify"}, {"no_holders", "/dev/nvidia0"}});
  s.escalate.push_back(testing::action_of({{"kind", "kill"}, {"holders_of", "/dev/nvidia0"}, {"signal", "KILL"}}));
  pb.steps.push_back(s);
  playbook::Host h;
  h.name = "box";
  plan::HostPlan hp;
  std::vector<std::string> errors;
  REQUIRE(plan::plan_host(pb, h, playbook::Value::table(), &hp, &errors));
  auto j = plan::host_json(hp);
  CHECK(j["host"] == "box");
  auto cmds = j["steps"][0]["commands"];
  REQUIRE(cmds.size() == 2);
  CHECK(cmds[0] == json({{"rung", 0}, {"role", "check"}, {"command", "ratchet_no_holders -- /dev/nvidia0"},
                         {"timeout_ms", 60000}, {"judge", "holders"}}));
  CHECK(cmds[1]["rung"] == 1);
  CHECK(cmds[1]["command"] == "ratchet_kill --signal KILL --wait-ms 5000 holders_of /dev/nvidia0");
}

TEST_CASE("plan build: the become field names the sudo user, and a step's become = false beats the host's", "[plan]") {
  playbook::Playbook pb;
  for (const char* id : {"host_says", "off", "as_svc"}) {
    playbook::Step s;
    s.id = s.name = id;
    s.kind = playbook::Kind::run;
    s.body = testing::action_of({{"kind", "run"}, {"command", "id -un"}, {"expect_exit", {0}}});
    pb.steps.push_back(s);
  }
  pb.steps[1].become = false;
  pb.steps[2].become_user = "svc";
  playbook::Host h;
  h.name = "box";
  h.become = true;
  plan::HostPlan hp;
  std::vector<std::string> errors;
  REQUIRE(plan::plan_host(pb, h, playbook::Value::table(), &hp, &errors));
  auto j = plan::host_json(hp);
  INFO(j.dump());
  CHECK(playbook::becomes(pb.steps[0], h));
  CHECK(hp.host.become);
  CHECK_FALSE(pb.steps[0].become.has_value());
  CHECK(j["steps"][0]["become"] == "root");
  CHECK(j["steps"][1]["become"] == false);
  CHECK(j["steps"][2]["become"] == "svc");
  h.become = false;  // nothing asks for sudo: no step becomes
  plan::HostPlan plain;
  REQUIRE(plan::plan_host(pb, h, playbook::Value::table(), &plain, &errors));
  auto pj = plan::host_json(plain);
  REQUIRE(pj["steps"].size() == 3);
  for (const auto& st : pj["steps"]) CHECK(st["become"] == false);
}

TEST_CASE("plan build: each step's timing, on_failure and each rung's settle, retries, delay and wait", "[plan]") {
  playbook::Playbook pb;
  playbook::Step s;
  s.id = s.name = "free";
  s.kind = playbook::Kind::verify;
  s.body = testing::action_of({{"kind", "verify"}, {"command", "nvidia-smi -L"}, {"stdout_matches", "^GPU 0"}});
  s.timeout = util::Millis(30'000);
  s.settle = util::Millis(2'000);
  s.retries = 3;
  s.delay = util::Millis(500);
  s.on_failure = playbook::OnFailure::cont;
  playbook::Action r = testing::action_of({{"kind", "kill"}, {"pattern", "worker"}, {"signal", "KILL"}, {"wait", "7s"}});
  r.timeout = util::Millis(10'000);
  r.settle = util::Millis(4'000);
  s.escalate.push_back(r);
  pb.steps.push_back(s);
  playbook::Host h;
  h.name = "box";
  plan::HostPlan hp;
  std::vector<std::string> errors;
  REQUIRE(plan::plan_host(pb, h, playbook::Value::table(), &hp, &errors));
  auto j = plan::host_json(hp)["steps"][0];
  INFO(j.dump());
  CHECK(j["timeout_ms"] == 30000);
  CHECK(j["on_failure"] == "continue");
  CHECK(j["become"] == false);
  CHECK(j["rungs"] == json::array({
                          {{"rung", 0}, {"kind", "verify"}, {"timeout_ms", 30000}, {"settle_ms", 2000},
                           {"retries", 3}, {"delay_ms", 500}},
                          {{"rung", 1}, {"kind", "kill"}, {"timeout_ms", 10000}, {"settle_ms", 4000},
                           {"retries", 3}, {"delay_ms", 500}, {"wait_ms", 7000}},
                      }));
  CHECK(j["commands"][0]["stdout_matches"] == "^GPU 0");
  CHECK(j["commands"][1]["timeout_ms"] == 17000);  // the kill action: its timeout plus its wait
}

TEST_CASE("plan build: a gpus_idle check says what it is judged against", "[plan]") {
  steps::Command c;
  c.judge = steps::Judge::gpus;
  c.expect.gpus = steps::Expect::Gpus{{"0", "3"}, 1024, {"alice"}, {"nvidia-persistenced", "nv-hostengine"}};
  CHECK(plan::gpus_judged(c) ==
        "GPUs 0, 3, idle at most 1024 MiB used, user alice, exclude nvidia-persistenced, nv-hostengine");
  c.expect.gpus = steps::Expect::Gpus{{"all"}, 512, {}, {}};
  CHECK(plan::gpus_judged(c) == "GPUs all, idle at most 512 MiB used");
  c.judge = steps::Judge::exit0;
  CHECK(plan::gpus_judged(c).empty());
}
