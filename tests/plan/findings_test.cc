// plan::changes_since and the findings' JSON: what `apply` of a probed plan
// compares, and how the plan file keeps a probe.
#include <catch2/catch.hpp>

#include "plan/codec.h"
#include "plan/findings.h"

using namespace ratchet;

namespace {

steps::Holder holder(long long pid, long long ticks, const std::string& cmdline) {
  steps::Holder h;
  h.pid = pid;
  h.user = "svc";
  h.start_ticks = ticks;
  h.started = ticks ? "2026-12-01T10:00:00Z" : "";
  h.comm = "python3";
  h.cmdline = cmdline;
  h.files = {"/dev/nvidia0"};
  return h;
}

plan::HostFindings sample() {
  plan::HostFindings h{"gpu-box", "ok", "", "root@10.0.0.5:22", {}, 900};
  plan::StepFinding stop;
  stop.id = "stop";
  stop.kind = playbook::Kind::service;
  stop.verdict = plan::ProbeVerdict::would_act;
  stop.state = {{"active", "active"}, {"sub", "running"}, {"enabled", "enabled"}};
  plan::StepFinding free;
  free.id = "gpus_free";
  free.kind = playbook::Kind::verify;
  free.verdict = plan::ProbeVerdict::would_act;
  free.holders = {holder(4242, 9000, "python3 -m server"), holder(4243, 0, "python3 -m worker")};
  plan::StepFinding notes;
  notes.id = "notes";
  notes.kind = playbook::Kind::write;
  notes.verdict = plan::ProbeVerdict::would_act;
  notes.diff = "--- a\n+++ b\n-old\n+new\n";
  h.steps = {stop, free, notes};
  return h;
}

}  // namespace

TEST_CASE("probe changes: the same findings give no change - timings and reasons are not compared", "[plan][probe]") {
  auto then = sample(), now = sample();
  now.ms = 12;
  now.steps[1].ms = 40;
  now.steps[1].reason = "2 process(es) hold the files";
  now.steps[0].output = "other words";
  CHECK(plan::changes_since(then, now).empty());
}

TEST_CASE("probe changes: a new holder - a gone one - and a recycled PID are each named", "[plan][probe]") {
  auto then = sample(), now = sample();
  now.steps[1].holders.push_back(holder(5000, 9100, "python3 -m orphan"));
  now.steps[1].holders.erase(now.steps[1].holders.begin() + 1);  // PID 4243 exited
  now.steps[1].holders[0].start_ticks = 9999;                     // PID 4242 is another process now
  auto c = plan::changes_since(then, now);
  CHECK(c == std::vector<std::string>{
                 "gpus_free: new holder PID 4242 python3 (user svc, started 2026-12-01T10:00:00Z): python3 -m server",
                 "gpus_free: new holder PID 5000 python3 (user svc, started 2026-12-01T10:00:00Z): python3 -m orphan",
                 "gpus_free: holder PID 4242 python3 is gone",
                 "gpus_free: holder PID 4243 python3 is gone"});
}

TEST_CASE("probe changes: the same process running another program or holding other files is named", "[plan][probe]") {
  auto then = sample(), now = sample();
  now.steps[1].holders[0].cmdline = "evil-miner 600";
  now.steps[1].holders[0].comm = "sleep";
  now.steps[1].holders[0].files.push_back("/dev/nvidia1");
  CHECK(plan::changes_since(then, now) ==
        std::vector<std::string>{"gpus_free: holder PID 4242 is another program now: was python3 (user svc): python3 "
                                 "-m server; now PID 4242 sleep (user svc, started 2026-12-01T10:00:00Z): evil-miner 600",
                                 "gpus_free: holder PID 4242 sleep holds other files now: /dev/nvidia0, /dev/nvidia1"});
  // A write's file state: a change past the diff's first 256 KiB shows in its sha256.
  auto a = sample(), b = sample();
  a.steps[2].state = {{"sha256", "aa"}, {"mode", "644"}};
  b.steps[2].state = {{"sha256", "bb"}, {"mode", "600"}};
  CHECK(plan::changes_since(a, b) ==
        std::vector<std::string>{"notes: sha256 was aa, now bb", "notes: mode was 644, now 600"});
}

TEST_CASE("probe changes: a unit state - a verdict - a file and the host's reach", "[plan][probe]") {
  auto then = sample();
  {
    auto now = sample();
    now.steps[0].state[0].second = "inactive";
    now.steps[0].verdict = plan::ProbeVerdict::ok;
    CHECK(plan::changes_since(then, now) ==
          std::vector<std::string>{"stop: was would act, now ok", "stop: active was active, now inactive"});
  }
  {
    auto now = sample();
    now.steps[2].diff = "--- a\n+++ b\n-older\n+new\n";
    CHECK(plan::changes_since(then, now) == std::vector<std::string>{"notes: the file changed since the probe"});
    now.steps[2].diff.clear();
    now.steps[2].would_create = true;
    CHECK(plan::changes_since(then, now) == std::vector<std::string>{"notes: the file is gone (would create it)"});
  }
  {
    plan::HostFindings now{"gpu-box", "unreachable", "connection refused", "", {}, 3};
    CHECK(plan::changes_since(then, now) ==
          std::vector<std::string>{"host was ok, now unreachable: connection refused"});
  }
  {
    auto now = sample();
    now.steps.pop_back();  // interrupted before notes
    CHECK(plan::changes_since(then, now) ==
          std::vector<std::string>{"notes: not probed now (the probe stopped before it)"});
  }
}

TEST_CASE("probe findings: the JSON reads back to the same values - a foreign member is refused", "[plan][probe]") {
  plan::Findings f{"2026-12-01T10:00:00Z", {sample()}};
  f.hosts[0].steps[0].reason = "unit is active";
  f.hosts[0].steps[1].depends_on = {"stop"};
  f.hosts[0].steps[1].rung = "ratchet_kill ...";
  f.hosts[0].steps[2].would_create = false;
  f.hosts[0].steps[2].output = "x\n";
  auto j = plan::findings_json(f);
  auto back = plan::findings_from(j);
  // state is a table in JSON: it reads back in key order
  auto want = f;
  std::sort(want.hosts[0].steps[0].state.begin(), want.hosts[0].steps[0].state.end());
  CHECK(back == want);
  CHECK(plan::findings_json(back) == j);
  auto bad = j;
  bad["hosts"][0]["steps"][1]["holders"][0]["euid"] = 0;
  CHECK_THROWS_WITH(plan::findings_from(bad), "probe gpu-box step gpus_free: a holder is not one ratchet writes");
  bad = j;
  bad["hosts"][0]["steps"][0]["verdict"] = "fine";
  CHECK_THROWS_WITH(plan::findings_from(bad), "probe gpu-box step stop: `kind` or `verdict` is not one ratchet writes");
}
