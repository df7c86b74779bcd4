// Scheduling of many hosts (engine/fleet.h) over the local transport: the order
// of events in the transcript shows linear vs free, batches and max_fail.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "engine/fleet.h"
#include "plan/build.h"
#include "plan/scope.h"
#include "playbook/loader.h"
#include "support/scratch_dir.h"
#include "transcript/reader.h"

using namespace ratchet;
using playbook::HostCount;

namespace {

/// A transport whose connect() always fails as "refused".
class RefusingTransport : public transport::Transport {
 public:
  std::optional<transport::ConnectError> connect(transport::ConnectInfo*) override {
    return transport::ConnectError{transport::FailureKind::refused, "127.0.0.1:1: connection refused", {}};
  }
  transport::ExecResult exec(const transport::ExecRequest&) override { return {}; }
  void close() override {}
};

/// Loads `toml` as a playbook and makes one job per host name. Host "down*" is
/// refused; host var `pause` (seconds) slows its steps.
struct Fleet {
  testing::ScratchDir dir{"ratchet-fleet"};
  playbook::Playbook pb;
  std::vector<engine::HostJob> jobs;
  std::vector<plan::HostPlan> plans;  // one per job, what each runs
  std::string transcript;

  Fleet(const std::string& toml, const std::vector<std::pair<std::string, double>>& hosts) {
    std::string path = dir.path + "/pb.toml";
    std::ofstream(path) << toml;
    std::vector<playbook::LoadError> errors;
    auto loaded = playbook::load_playbook(path, {}, &errors);
    REQUIRE(errors.empty());
    pb = *loaded;
    plans.resize(hosts.size());
    for (const auto& [name, pause] : hosts) {
      engine::HostJob j;
      j.pb = &pb;
      j.host.name = name;
      j.host.vars = {{"pause", pause}};
      j.endpoint.name = name;
      j.scope = plan::host_scope(pb, nullptr, j.host, {}, playbook::Value::table(), nullptr);
      std::vector<std::string> plan_errors;
      REQUIRE(plan::plan_host(pb, j.host, j.scope, &plans[jobs.size()], &plan_errors));
      j.plan = &plans[jobs.size()];
      jobs.push_back(j);
    }
    transcript = dir.path + "/t.jsonl";
  }

  std::vector<engine::HostReport> run(int forks) {
    transcript::Writer w(transcript);
    engine::SilentProgress quiet;
    engine::RunShared shared;
    shared.w = &w;
    shared.progress = &quiet;
    shared.sleep = [](util::Millis) {};
    engine::FleetPolicy policy{pb.policy, forks};
    return engine::run_fleet(
        jobs, policy,
        [](const transport::Endpoint& e) -> std::unique_ptr<transport::Transport> {
          if (e.name.rfind("down", 0) == 0) return std::make_unique<RefusingTransport>();
          return transport::make_local_transport();
        },
        shared);
  }

  std::vector<nlohmann::json> events(const std::string& name) const {
    std::vector<nlohmann::json> out;
    for (const auto& e : transcript::read_transcript(transcript).events)
      if (e["event"] == name) out.push_back(e);
    return out;
  }
};

const char* kThreeSteps = R"(
name = "fleet"
{POLICY}
[[step]]
id = "one"
kind = "run"
command = "sleep {{ pause }}"
[[step]]
id = "two"
kind = "run"
command = "sleep {{ pause }}"
[[step]]
id = "three"
kind = "run"
command = "true"
)";

std::string with_policy(const std::string& policy) {
  std::string s = kThreeSteps;
  return s.replace(s.find("{POLICY}"), 8, policy);
}

/// Index in the transcript of each (event, host, step).
std::map<std::string, size_t> positions(const Fleet& f) {
  std::map<std::string, size_t> pos;
  auto all = transcript::read_transcript(f.transcript).events;
  for (size_t i = 0; i < all.size(); ++i) {
    const auto& e = all[i];
    if (e["event"] == "step_start" || e["event"] == "step_end")
      pos[e["event"].get<std::string>() + ":" + e["host"].get<std::string>() + ":" +
          e["step"].get<std::string>()] = i;
  }
  return pos;
}

}  // namespace

TEST_CASE("batch sizes: N hosts, N% rounded down (at least 1), the rest last", "[engine][fleet]") {
  using V = std::vector<size_t>;
  CHECK(engine::batch_sizes(5, HostCount{}) == V{5});
  CHECK(engine::batch_sizes(5, HostCount{true, 2, false}) == V{2, 2, 1});
  CHECK(engine::batch_sizes(10, HostCount{true, 30, true}) == V{3, 3, 3, 1});
  CHECK(engine::batch_sizes(3, HostCount{true, 10, true}) == V{1, 1, 1});  // 0.3 → 1
  CHECK(engine::batch_sizes(4, HostCount{true, 100, true}) == V{4});
  CHECK(engine::batch_sizes(2, HostCount{true, 9, false}) == V{2});
  CHECK(engine::batch_sizes(0, HostCount{true, 2, false}).empty());
}

TEST_CASE("fail limit: N, N% rounded down, -1 when unset", "[engine][fleet]") {
  CHECK(engine::fail_limit(10, HostCount{}) == -1);
  CHECK(engine::fail_limit(10, HostCount{true, 0, false}) == 0);
  CHECK(engine::fail_limit(10, HostCount{true, 25, true}) == 2);
  CHECK(engine::fail_limit(3, HostCount{true, 3, false}) == 3);
}

TEST_CASE("linear: every host ends step k before any host starts step k+1", "[engine][fleet]") {
  Fleet f(with_policy("strategy = \"linear\""), {{"fast", 0}, {"slow", 0.3}, {"mid", 0.1}});
  auto reps = f.run(10);
  for (const auto& r : reps) CHECK(r.status == engine::HostStatus::ok);
  auto pos = positions(f);
  for (const char* a : {"fast", "slow", "mid"})
    for (const char* b : {"fast", "slow", "mid"}) {
      CHECK(pos.at(fmt::format("step_end:{}:one", a)) < pos.at(fmt::format("step_start:{}:two", b)));
      CHECK(pos.at(fmt::format("step_end:{}:two", a)) < pos.at(fmt::format("step_start:{}:three", b)));
    }
}

TEST_CASE("free: a fast host runs ahead of a slow one", "[engine][fleet]") {
  Fleet f(with_policy("strategy = \"free\""), {{"fast", 0}, {"slow", 3}});  // 3 s: ample under load
  auto reps = f.run(10);
  CHECK(reps[0].status == engine::HostStatus::ok);
  CHECK(reps[1].status == engine::HostStatus::ok);
  auto pos = positions(f);
  CHECK(pos.at("step_end:fast:three") < pos.at("step_end:slow:one"));
}

TEST_CASE("linear: a failed host drops out, the others go on", "[engine][fleet]") {
  Fleet f(R"(
name = "fleet"
[[step]]
id = "one"
kind = "run"
command = "test {{ host.name }} != bad"
[[step]]
id = "two"
kind = "run"
command = "true"
)",
          {{"good", 0}, {"bad", 1}, {"down1", 0}, {"good2", 0}});
  auto reps = f.run(2);  // fewer forks than hosts: still correct
  CHECK(reps[0].status == engine::HostStatus::ok);
  CHECK(reps[1].status == engine::HostStatus::failed);
  CHECK(reps[1].failed_step == "one");
  CHECK(reps[2].status == engine::HostStatus::unreachable);
  CHECK(reps[2].reason.find("connection refused") != std::string::npos);
  CHECK(reps[3].status == engine::HostStatus::ok);
  CHECK(reps[3].counts.at("ok") + reps[3].counts.at("changed") == 2);
  CHECK(f.events("host_end").size() == 4);
}

TEST_CASE("the host's failed step is the one that stopped it, not one it continued past", "[engine][fleet]") {
  // Found by a trial: the recap and --json named the first (continued) failure.
  Fleet f(R"(
name = "fleet"
[[step]]
id = "soft"
kind = "run"
on_failure = "continue"
command = "exit 1"
[[step]]
id = "hard"
kind = "run"
command = "exit 3"
[[step]]
id = "never"
kind = "run"
command = "true"
)",
          {{"h", 0}});
  auto reps = f.run(1);
  CHECK(reps[0].status == engine::HostStatus::failed);
  CHECK(reps[0].failed_step == "hard");
  CHECK(reps[0].reason == "exit 3");
  auto ends = f.events("host_end");
  REQUIRE(ends.size() == 1);
  CHECK(ends[0]["reason"] == "exit 3");
  // `never` did not run: it is recorded skipped, "host stopped at hard" (was: absent).
  auto starts = f.events("step_start");
  REQUIRE(starts.size() == 3);
  CHECK(starts[2]["step"] == "never");
  auto step_ends = f.events("step_end");
  REQUIRE(step_ends.size() == 3);
  CHECK(step_ends[2]["step"] == "never");
  CHECK(step_ends[2]["status"] == "skipped");
  CHECK(step_ends[2]["reason"] == "host stopped at hard");
  CHECK(step_ends[2]["stopped_at"] == "hard");
  CHECK(step_ends[2]["ms"] == 0);
  CHECK(f.events("command").size() == 2);  // nothing of `never` was sent
  CHECK(reps[0].stopped_at == "hard");
  CHECK(reps[0].counts.at("skipped") == 1);
  CHECK(reps[0].skipped == std::vector<std::pair<std::string, std::string>>{{"never", "host stopped at hard"}});
  CHECK(ends[0]["counts"]["skipped"] == 1);
  CHECK(ends[0]["stopped_at"] == "hard");
}

TEST_CASE("a host that continues past failures stops nowhere: nothing skipped", "[engine][fleet]") {
  Fleet f(R"(
name = "fleet"
[[step]]
id = "soft"
kind = "run"
on_failure = "continue"
command = "exit 1"
[[step]]
id = "after"
kind = "run"
command = "true"
)",
          {{"h", 0}});
  auto reps = f.run(1);
  CHECK(reps[0].status == engine::HostStatus::failed);
  CHECK(reps[0].stopped_at == "");
  CHECK(reps[0].skipped.empty());
  CHECK(reps[0].counts.at("skipped") == 0);
  CHECK(f.events("host_end")[0].contains("stopped_at") == false);
}

TEST_CASE("continued failures only: the host names the first of them", "[engine][fleet]") {
  Fleet f(R"(
name = "fleet"
[[step]]
id = "soft1"
kind = "run"
on_failure = "continue"
command = "exit 1"
[[step]]
id = "soft2"
kind = "run"
on_failure = "continue"
command = "exit 2"
)",
          {{"h", 0}});
  auto reps = f.run(1);
  CHECK(reps[0].status == engine::HostStatus::failed);
  CHECK(reps[0].failed_step == "soft1");
  CHECK(reps[0].reason == "exit 1");
}

TEST_CASE("serial batches run one after another, max_fail stops later batches", "[engine][fleet]") {
  SECTION("batches in order, no failures: all run") {
    Fleet f(with_policy("serial = 2"), {{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}, {"e", 0}});
    auto reps = f.run(10);
    for (const auto& r : reps) CHECK(r.status == engine::HostStatus::ok);
    auto batches = f.events("batch_start");
    REQUIRE(batches.size() == 3);
    CHECK(batches[0]["hosts"] == nlohmann::json::array({"a", "b"}));
    CHECK(batches[2]["hosts"] == nlohmann::json::array({"e"}));
    auto pos = positions(f);
    CHECK(pos.at("step_end:b:three") < pos.at("step_start:c:one"));
    CHECK(pos.at("step_end:d:three") < pos.at("step_start:e:one"));
  }
  SECTION("max_fail = 0: the batch after a failure never starts") {
    Fleet f(with_policy("serial = \"40%\"\nmax_fail = 0"),
            {{"a", 0}, {"down1", 0}, {"c", 0}, {"d", 0}, {"e", 0}});
    auto reps = f.run(10);
    CHECK(reps[0].status == engine::HostStatus::ok);
    CHECK(reps[1].status == engine::HostStatus::unreachable);
    for (size_t i : {2, 3, 4}) {
      CHECK(reps[i].status == engine::HostStatus::skipped);
      CHECK(reps[i].reason == "not run: 1 host(s) failed, more than max_fail = 0");
      CHECK(reps[i].counts.size() == 5);  // the same shape as a host that ran (was {})
    }
    for (const auto& e : f.events("host_end"))
      CHECK(e["counts"] == nlohmann::json({{"ok", e["counts"]["ok"]}, {"changed", e["counts"]["changed"]},
                                           {"escalated", e["counts"]["escalated"]},
                                           {"failed", e["counts"]["failed"]}, {"skipped", e["counts"]["skipped"]}}));
    CHECK(f.events("batch_start").size() == 1);
    CHECK(f.events("host_end").size() == 5);
    CHECK(f.events("connect").size() == 1);  // only `a`: nothing of c, d, e connected
  }
  SECTION("max_fail = 1 tolerates one failed host") {
    Fleet f(with_policy("serial = 1\nmax_fail = 1"), {{"down1", 0}, {"b", 0}, {"c", 0}});
    auto reps = f.run(10);
    CHECK(reps[0].status == engine::HostStatus::unreachable);
    CHECK(reps[1].status == engine::HostStatus::ok);
    CHECK(reps[2].status == engine::HostStatus::ok);
  }
}
