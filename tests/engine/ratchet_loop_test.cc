#include <catch2/catch.hpp>

#include "engine/executor.h"
#include "engine/ratchet_loop.h"
#include "support/scripted_transport.h"

using namespace ratchet;
using ratchet::testing::ScriptedTransport;

namespace {

steps::Command cmd(std::string role, std::string text, std::string judge) {
  steps::Command c;
  c.role = steps::parse_role(role).value();
  c.text = std::move(text);
  c.judge = steps::parse_judge(judge).value();
  if (role == "action") c.expect.exit_codes = {0};
  return c;
}

// A verify-like step: check `probe`, own action `fix`, rungs `harder1..n`.
steps::PreparedStep step(int rungs, bool own_action = true) {
  steps::PreparedStep ps;
  steps::Rung r0;
  r0.check.push_back(cmd("check", "probe", "exit0"));
  if (own_action) r0.action = cmd("action", "fix", "exit");
  ps.rungs.push_back(r0);
  for (int k = 1; k <= rungs; ++k) {
    steps::Rung r;
    r.action = cmd("action", "harder" + std::to_string(k), "exit");
    ps.rungs.push_back(r);
  }
  return ps;
}

struct Harness {
  ScriptedTransport t;
  transcript::Writer w;  // records nothing
  engine::Executor ex{t, w, "h1"};
  std::vector<long long> slept;
  engine::Sleeper sleep = [this](util::Millis d) { slept.push_back(d.count()); };
  std::vector<std::string> sent() const {  // the scripts, as the transport was given them
    std::vector<std::string> out;
    for (const auto& r : t.requests) out.push_back(r.script);
    return out;
  }
};

}  // namespace

TEST_CASE("ratchet loop: state already holds → ok, only the check is sent", "[engine]") {
  Harness h;
  h.t.push(0);
  auto o = engine::run_ratchet(step(2), h.ex, h.sleep);
  CHECK(o.status == engine::StepStatus::ok);
  CHECK(o.rung == 0);
  CHECK(h.sent() == std::vector<std::string>{"probe"});
}

TEST_CASE("ratchet loop: action fixes it → changed", "[engine]") {
  Harness h;
  h.t.push(1, "not yet");
  h.t.push(0);
  h.t.push(0);
  auto o = engine::run_ratchet(step(2), h.ex, h.sleep);
  CHECK(o.status == engine::StepStatus::changed);
  CHECK(o.rung == 0);
  CHECK(h.sent() == std::vector<std::string>{"probe", "fix", "probe"});
}

TEST_CASE("ratchet loop: escalates to rung 2", "[engine]") {
  Harness h;
  h.t.push(1);  // check
  h.t.push(0);  // fix
  h.t.push(1);  // check
  h.t.push(0);  // harder1
  h.t.push(1);  // check
  h.t.push(0);  // harder2
  h.t.push(0);  // check passes
  auto ps = step(3);
  ps.rungs[2].settle = util::Millis(1500);
  auto o = engine::run_ratchet(ps, h.ex, h.sleep);
  CHECK(o.status == engine::StepStatus::escalated);
  CHECK(o.rung == 2);
  CHECK(h.sent() == std::vector<std::string>{"probe", "fix", "probe", "harder1", "probe", "harder2", "probe"});
  CHECK(h.slept == std::vector<long long>{1500});  // settle once, after rung 2 only
  CHECK(h.t.left() == 0);
}

TEST_CASE("ratchet loop: rungs exhausted → failed at the last rung", "[engine]") {
  Harness h;
  for (int i = 0; i < 7; ++i) h.t.push(i % 2 == 0 ? 3 : 0);  // checks fail, actions succeed
  auto o = engine::run_ratchet(step(2), h.ex, h.sleep);
  CHECK(o.status == engine::StepStatus::failed);
  CHECK(o.rung == 2);
  CHECK(h.sent().size() == 7);
}

TEST_CASE("ratchet loop: verify without its own action goes straight to rung 1", "[engine]") {
  Harness h;
  h.t.push(1);
  h.t.push(0);  // harder1
  h.t.push(0);  // check
  auto o = engine::run_ratchet(step(2, false), h.ex, h.sleep);
  CHECK(o.status == engine::StepStatus::escalated);
  CHECK(o.rung == 1);
  CHECK(h.sent() == std::vector<std::string>{"probe", "harder1", "probe"});
}

TEST_CASE("ratchet loop: retries re-run the check `delay` apart", "[engine]") {
  Harness h;
  auto ps = step(0);
  ps.rungs[0].retries = 2;
  ps.rungs[0].delay = util::Millis(250);
  h.t.push(1);  // first check
  h.t.push(0);  // fix
  h.t.push(1);  // check
  h.t.push(1);  // retry 1
  h.t.push(0);  // retry 2 passes
  auto o = engine::run_ratchet(ps, h.ex, h.sleep);
  CHECK(o.status == engine::StepStatus::changed);
  CHECK(h.slept == std::vector<long long>{250, 250});
}

TEST_CASE("ratchet loop: run without a check is judged by its exit status", "[engine]") {
  Harness h;
  steps::PreparedStep ps;
  steps::Rung r;
  r.action = cmd("action", "fix", "exit");
  r.action->expect.exit_codes = {0, 3};
  ps.rungs.push_back(r);
  ps.action_is_result = true;
  h.t.push(3);
  CHECK(engine::run_ratchet(ps, h.ex, h.sleep).status == engine::StepStatus::changed);
  h.t.push(4, "", "boom");
  auto o = engine::run_ratchet(ps, h.ex, h.sleep);
  CHECK(o.status == engine::StepStatus::failed);
  CHECK(o.reason == "exit 4: boom");
}

TEST_CASE("ratchet loop: a verify waits for its state with retries before any rung", "[engine]") {
  Harness h;
  auto ps = step(1, false);
  ps.rungs[0].retries = 3;
  ps.rungs[0].delay = util::Millis(1000);
  h.t.push(1);
  h.t.push(1);
  h.t.push(0);  // holds on the second retry: no rung fires
  auto o = engine::run_ratchet(ps, h.ex, h.sleep);
  CHECK(o.status == engine::StepStatus::ok);
  CHECK(h.sent() == std::vector<std::string>{"probe", "probe", "probe"});
  CHECK(h.slept == std::vector<long long>{1000, 1000});
}

TEST_CASE("ratchet loop: a failed step names the action's failure and the check's", "[engine]") {
  Harness h;
  h.t.push(1, "", "");
  h.t.push(2, "", "mkdir: permission denied");
  h.t.push(1, "still wrong");
  auto o = engine::run_ratchet(step(0), h.ex, h.sleep);
  CHECK(o.status == engine::StepStatus::failed);
  CHECK(o.reason == "action failed: exit 2: mkdir: permission denied; then the check: exit 1: still wrong");
}

TEST_CASE("ratchet loop: a check that never ran fails the step, no action on an unknown state", "[engine]") {
  // Found by a trial: a check the host could not start read as "does not hold" and the action ran.
  SECTION("before any action") {
    Harness h;
    h.t.push_error("connection lost");
    auto o = engine::run_ratchet(step(2), h.ex, h.sleep);
    CHECK(o.status == engine::StepStatus::failed);
    CHECK(o.rung == 0);
    CHECK(o.reason == "could not check: connection lost");
    CHECK(h.sent() == std::vector<std::string>{"probe"});
  }
  SECTION("after the action: no stronger rung") {
    Harness h;
    h.t.push(1, "not yet");
    h.t.push(0);
    h.t.push_error("connection lost");
    auto o = engine::run_ratchet(step(2), h.ex, h.sleep);
    CHECK(o.status == engine::StepStatus::failed);
    CHECK(o.rung == 0);
    CHECK(h.sent() == std::vector<std::string>{"probe", "fix", "probe"});
  }
}

TEST_CASE("ratchet loop: a survivor its tracer keeps stopped is named in the reason, and a KILL rung still runs",
          "[engine]") {
  const std::string line = "8\troot\t1\t1.0\tsleep\tsleep 9\tt\t-\t/d\n";
  steps::PreparedStep ps;
  steps::Rung r0;
  r0.check.push_back(cmd("check", "probe", "kill"));
  r0.action = cmd("action", "term", "kill_action");
  ps.rungs.push_back(r0);
  const std::string term_out = "signalled\t" + line + "continued\t" + line + "alive\t" + line + "traced\t8\t77\tgdb\n";
  const std::string traced =
      "PID 8 (sleep) is stopped by its tracer PID 77 (gdb): CONT does not resume it; detach or end the tracer";
  SECTION("the last rung: the step fails saying so") {
    Harness h;
    h.t.push(0, "alive\t" + line);  // check: alive
    h.t.push(0, term_out);          // TERM
    h.t.push(0, "alive\t" + line);  // check: still alive
    auto o = engine::run_ratchet(ps, h.ex, h.sleep);
    CHECK(o.status == engine::StepStatus::failed);
    CHECK(o.reason.rfind(traced + "; then the check: ", 0) == 0);
  }
  SECTION("a KILL rung follows: it runs and the step escalates") {
    steps::Rung r1;
    r1.action = cmd("action", "kill", "kill_action");
    ps.rungs.push_back(r1);
    Harness h;
    h.t.push(0, "alive\t" + line);
    h.t.push(0, term_out);
    h.t.push(0, "alive\t" + line);
    h.t.push(0, "signalled\t" + line);  // KILL
    h.t.push(0, "");                    // check: gone
    auto o = engine::run_ratchet(ps, h.ex, h.sleep);
    CHECK(o.status == engine::StepStatus::escalated);
    CHECK(o.rung == 1);
    CHECK(o.reason.empty());
    CHECK(h.sent() == std::vector<std::string>{"probe", "term", "probe", "kill", "probe"});
  }
}
