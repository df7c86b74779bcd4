// The run's own events as structs (transcript/run_events.h): each writer
// function writes exactly the fields docs/transcript.md lists for its mode.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "support/local_proc.h"
#include "transcript/reader.h"
#include "transcript/run_events.h"

using namespace ratchet::transcript;
using nlohmann::json;

namespace {

std::set<std::string> keys(const json& e) {
  std::set<std::string> out;
  for (auto it = e.begin(); it != e.end(); ++it) out.insert(it.key());
  return out;
}

}  // namespace

TEST_CASE("run events: run_start of each mode has its own fields", "[transcript]") {
  std::string p = ratchet::testing::temp_dir("ratchet-run-events") + "/t.jsonl";
  Writer w(p);
  RunStart run;
  run.run_id = "R1";
  run.argv = {"ratchet", "run", "pb.toml"};
  run.playbook = "pb";
  run.vars = ratchet::util::Value::table({{"unit", "x"}});
  run.secret_names = {"token"};
  run.targets = {"a", "b"};
  run.strategy = "linear";
  run.forks = 3;
  run.serial = {true, true, 25};
  run.run_by = "me@here";
  run.plan = RunStart::Plan{"sha256:ab", "/p.json", "2026-01-01T00:00:00Z", "you@there"};
  write_run_start(w, run);
  RunStart probe = run;
  probe.mode = RunStart::Mode::probe;
  probe.plan.reset();
  write_run_start(w, probe);
  RunStart exec;
  exec.mode = RunStart::Mode::exec;
  exec.run_id = "R3";
  exec.exec = "uptime";
  exec.targets = {"a"};
  write_run_start(w, exec);
  auto r = read_transcript(p);
  REQUIRE(r.events.size() == 3);
  const auto& e0 = r.events[0];
  CHECK(keys(e0) == std::set<std::string>{"event", "t", "schema", "ratchet_version", "run_id", "argv", "playbook",
                                          "playbook_path", "playbook_sha256", "playbook_source", "vars", "targets",
                                          "policy", "become_password", "run_by", "plan"});
  CHECK(e0["vars"] == json{{"unit", "x"}, {"token", "***"}});
  CHECK(e0["policy"] == json{{"strategy", "linear"}, {"forks", 3}, {"serial", "25%"}, {"max_fail", nullptr}});
  CHECK(e0["plan"]["made_by"] == "you@there");
  const auto& e1 = r.events[1];
  CHECK(e1["mode"] == "probe");
  CHECK(e1["policy"] == json{{"forks", 3}});
  CHECK_FALSE(e1.contains("run_by"));
  CHECK_FALSE(e1.contains("playbook_source"));
  CHECK(keys(r.events[2]) ==
        std::set<std::string>{"event", "t", "schema", "ratchet_version", "run_id", "exec", "targets"});
}

TEST_CASE("run events: host_end and run_end write the optional fields only when set", "[transcript]") {
  std::string p = ratchet::testing::temp_dir("ratchet-run-events") + "/t.jsonl";
  Writer w(p);
  RunStart exec;
  exec.mode = RunStart::Mode::exec;
  exec.run_id = "R1";
  write_run_start(w, exec);
  write_host_end(w, {"a", "ok", {{"ok", 2}}, 15, std::nullopt, std::nullopt});
  write_host_end(w, {"b", "unreachable", {}, 0, "", "s1"});
  write_run_end(w, {"failed", 1, std::map<std::string, int>{{"ok", 2}}, {{"ok", 1}}, std::nullopt, 20});
  write_run_end(w, {"ok", 0, std::nullopt, {}, std::map<std::string, std::string>{{"a", "ok"}}, std::nullopt});
  auto r = read_transcript(p);
  REQUIRE(r.events.size() == 5);
  CHECK(r.events[1]["counts"] == json{{"ok", 2}});
  CHECK_FALSE(r.events[1].contains("reason"));
  CHECK(r.events[2]["counts"] == json::object());
  CHECK(r.events[2]["reason"] == "");  // set, even empty: written
  CHECK(r.events[2]["stopped_at"] == "s1");
  CHECK(r.events[3]["hosts"] == json{{"ok", 1}});
  CHECK(r.events[3]["ms"] == 20);
  CHECK(r.events[4]["hosts"] == json{{"a", "ok"}});
  CHECK_FALSE(r.events[4].contains("ms"));
  CHECK_FALSE(r.events[4].contains("counts"));
}
