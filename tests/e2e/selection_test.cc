// A tagged selection over a real sshd on 127.0.0.1, with an included piece:
// only the selected steps run (their marker files appear on the host, the
// others' do not), and the transcript records the selection and where each
// included step came from.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"

using namespace ratchet::testing;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("run --tags over ssh: only the tagged steps run and the transcript records the selection", "[ssh][e2e][selection]") {
  SshdHost sshd;
  const std::string dir = temp_dir("ratchet-select-e2e");
  const std::string marks = dir + "/marks";  // the "host" is this machine: the steps touch files here
  fs::create_directories(marks);
  std::ofstream(dir + "/inventory.toml") << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                                         << "\nuser = \"root\"\nidentity = \"" << sshd.client_key()
                                         << "\"\nknown_hosts = \"" << sshd.known_hosts() << "\"\n";
  fs::create_directories(dir + "/common");
  std::ofstream(dir + "/common/mark.toml") << R"([vars]
marks = "/nonexistent"

[[step]]
id = "first"
kind = "run"
command = "touch {{ marks }}/piece-first"
tags = ["gpus"]

[[step]]
id = "second"
kind = "run"
command = "echo rc={{ steps.first.rc }} > {{ marks }}/piece-second"
tags = ["gpus"]
)";
  std::ofstream(dir + "/pb.toml") << R"(name = "sel-e2e"
[[step]]
id = "stop"
kind = "run"
command = "touch {{ marks }}/stop"
tags = ["service"]

[[step]]
id = "free"
include = "common/mark.toml"
vars = { marks = ")" + marks + R"(" }

[[step]]
id = "notes"
kind = "run"
command = "echo {{ steps.free.second.status }} > {{ marks }}/notes"
tags = ["notes"]

[[step]]
id = "start"
kind = "run"
command = "touch {{ marks }}/start"
tags = ["service"]
)";
  const std::string t = dir + "/t.jsonl";
  auto r = run_sh("cd '" + dir + "' && " + RATCHET_BINARY +
                  " run pb.toml -i inventory.toml -F none --tags gpus,notes --transcript " + t);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  // What ran on the host: the piece's steps and notes; neither service step.
  CHECK(fs::exists(marks + "/piece-first"));
  CHECK(fs::exists(marks + "/piece-second"));
  CHECK(fs::exists(marks + "/notes"));
  CHECK_FALSE(fs::exists(marks + "/stop"));
  CHECK_FALSE(fs::exists(marks + "/start"));
  std::ifstream second(marks + "/piece-second");
  std::string line;
  std::getline(second, line);
  CHECK(line == "rc=0");  // the piece's own reference, rewritten to free.first, rendered at run time
  std::ifstream notes(marks + "/notes");
  std::getline(notes, line);
  CHECK(line == "changed");

  auto tr = ratchet::transcript::read_transcript(t);
  REQUIRE(!tr.events.empty());
  const json& start = tr.events.front();
  REQUIRE(start["event"] == "run_start");
  CHECK(start["selection"]["tags"] == json::array({"gpus", "notes"}));
  CHECK(start["selection"]["not_selected"] ==
        json::parse(R"([{"step": "stop", "reason": "its tags (service) are not in --tags gpus,notes"},
                        {"step": "start", "reason": "its tags (service) are not in --tags gpus,notes"}])"));
  std::vector<std::string> started;
  for (const auto& ev : tr.events)
    if (ev["event"] == "step_start") {
      started.push_back(ev["step"]);
      if (ev["step"] == "free.first") CHECK(ev["source"] == "common/mark.toml:4:1, included from pb.toml:8:1");
      if (ev["step"] == "notes") CHECK_FALSE(ev.contains("source"));
    }
  CHECK(started == std::vector<std::string>{"free.first", "free.second", "notes"});

  // show prints the selection, and a probe of the same selection records it too.
  auto shown = run_sh(std::string(RATCHET_BINARY) + " show " + t);
  INFO(shown.out << shown.err);
  const std::string lines = "selection: --tags gpus --tags notes; 2 step(s) left out:\n"
                            "  not selected: stop: its tags (service) are not in --tags gpus,notes\n"
                            "  not selected: start: its tags (service) are not in --tags gpus,notes\n";
  CHECK(shown.out.find(lines) != std::string::npos);
  CHECK(r.out.find(lines) != std::string::npos);  // run printed it too, as plan does
  const std::string tp = dir + "/probe.jsonl";
  auto p = run_sh("cd '" + dir + "' && " + RATCHET_BINARY +
                  " plan pb.toml -i inventory.toml -F none --probe --skip-tags service --transcript " + tp);
  INFO(p.out << p.err);
  REQUIRE(p.code == 0);
  auto ptr = ratchet::transcript::read_transcript(tp);
  REQUIRE(!ptr.events.empty());
  const json& pstart = ptr.events.front();
  CHECK(pstart["mode"] == "probe");
  CHECK(pstart["selection"]["skip_tags"] == json::array({"service"}));
  CHECK(pstart["selection"]["not_selected"].size() == 2);
  CHECK_FALSE(fs::exists(marks + "/stop"));  // a probe runs no action
}
