// End to end on a real systemd host (systemd-nspawn on 127.0.0.1): the demo
// scenario of README, driven through the ratchet binary.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>

#include "support/local_proc.h"
#include "support/systemd_fixture.h"
#include "transcript/reader.h"

using ratchet::testing::run_sh;
using ratchet::testing::SystemdHost;
using nlohmann::json;

namespace {

std::string write_inventory(SystemdHost& host, const std::string& dir) {
  std::string p = dir + "/inventory.toml";
  std::ofstream(p) << "[hosts.lab]\naddress = \"127.0.0.1\"\nport = " << host.port()
                   << "\nuser = \"root\"\nidentity = \"" << host.client_key() << "\"\nknown_hosts = \""
                   << host.known_hosts() << "\"\n\n[groups]\ngpu = [\"lab\"]\n";
  return p;
}

std::string ratchet_cmd(const std::string& verb, const std::string& inv, const std::string& glob,
                        const std::string& extra = "") {
  return std::string(RATCHET_BINARY) + " " + verb + " " + RATCHET_SOURCE_DIR +
         "/playbooks/gpu-release.toml -i " + inv + " -e 'devices=[\"" + glob + "\"]' " + extra;
}

std::map<std::string, json> step_ends(const std::vector<json>& ev) {
  std::map<std::string, json> out;
  for (const auto& e : ev)
    if (e["event"] == "step_end") out[e["step"]] = e;
  return out;
}

bool alive_on(SystemdHost& h, const std::string& pid) {
  std::string out;
  h.ssh("test -d /proc/" + pid + " && awk '{print $3}' /proc/" + pid + "/stat", &out);
  return !out.empty() && out != "Z\n";
}

}  // namespace

TEST_CASE("gpu-release frees held stand-in devices on a real systemd host, then is idempotent",
          "[systemd][e2e]") {
  SystemdHost host;
  auto scene = host.stage_inference();
  std::string dir = ratchet::testing::temp_dir("ratchet-e2e");
  std::string inv = write_inventory(host, dir);
  std::string glob = scene.at("DEVICE_GLOB");

  // The dry run connects to nothing and names every command.
  auto plan = run_sh(ratchet_cmd("plan", inv, glob, "--json"));
  REQUIRE(plan.code == 0);
  json pj = json::parse(plan.out);
  std::map<std::string, std::set<std::string>> planned;  // step -> commands
  for (const auto& s : pj["hosts"][0]["steps"])
    for (const auto& c : s["commands"]) planned[s["id"]].insert(c["command"].get<std::string>());

  std::string t1 = dir + "/run1.jsonl";
  auto run1 = run_sh(ratchet_cmd("run", inv, glob, "--transcript " + t1));
  INFO(run1.out << run1.err);
  CHECK(run1.code == 0);

  // Every stand-in holder is dead; the daemon kept by design is not.
  for (const char* k : {"SERVER_PID", "CHILD_PID", "WORKER_PID"}) {
    INFO(k);
    CHECK_FALSE(alive_on(host, scene.at(k)));
  }
  CHECK(alive_on(host, scene.at("KEEP_PID")));

  // The unit is enabled and active.
  std::string out;  // ssh() appends
  host.ssh("systemctl is-enabled inference; systemctl is-active inference", &out);
  CHECK(out == "enabled\nactive\n");

  // The notes list the holders that were found.
  std::string notes;
  REQUIRE(host.ssh("cat /root/production.md", &notes) == 0);
  CHECK(notes.find("PID " + scene.at("WORKER_PID") + " user root") != std::string::npos);
  CHECK(notes.find("PID " + scene.at("SERVER_PID") + " user root") != std::string::npos);
  CHECK(notes.find("free after rung 2") != std::string::npos);

  // The transcript: events in order with exit codes; plan's commands = run's.
  auto tr = ratchet::transcript::read_transcript(t1);
  REQUIRE(tr.note.empty());
  REQUIRE(tr.events.size() > 10);
  CHECK(tr.events.front()["event"] == "run_start");
  CHECK(tr.events.back()["event"] == "run_end");
  CHECK(tr.events.back()["exit_code"] == 0);
  CHECK(tr.events[1]["event"] == "host_library");  // stored once, before anything connects
  CHECK(tr.events[2]["event"] == "connect");
  int commands = 0;
  for (size_t i = 0; i < tr.events.size(); ++i) {
    const auto& e = tr.events[i];
    if (e["event"] != "command") continue;
    ++commands;
    INFO(e.dump());
    CHECK(planned[e["step"]].count(e["command"].get<std::string>()) == 1);
    // each command is followed by its exit (outputs may come between)
    size_t j = i + 1;
    while (j < tr.events.size() && tr.events[j]["event"] == "output") ++j;
    REQUIRE(j < tr.events.size());
    CHECK(tr.events[j]["event"] == "exit");
    CHECK((tr.events[j].contains("code") || tr.events[j].contains("signal")));
  }
  CHECK(commands >= 15);
  auto ends = step_ends(tr.events);
  CHECK(ends["stop"]["status"] == "ok");
  CHECK(ends["kill_server"]["status"] == "changed");
  CHECK(ends["gpus_free"]["status"] == "escalated");
  CHECK(ends["gpus_free"]["rung"] == 2);
  CHECK(ends["notes"]["status"] == "changed");
  CHECK(ends["unit_file"]["status"] == "changed");
  CHECK(ends["enable"]["status"] == "changed");
  CHECK(ends["start"]["status"] == "changed");
  CHECK(ends["active"]["status"] == "ok");

  // Second run on the same host: no kill sent, no rung fired.
  std::string t2 = dir + "/run2.jsonl";
  auto run2 = run_sh(ratchet_cmd("run", inv, glob, "--transcript " + t2));
  INFO(run2.out << run2.err);
  CHECK(run2.code == 0);
  auto tr2 = ratchet::transcript::read_transcript(t2);
  for (const auto& e : tr2.events) {
    if (e["event"] == "command") {
      INFO(e.dump());
      CHECK(e["rung"] == 0);
      CHECK(e["command"].get<std::string>().rfind("ratchet_kill ", 0) != 0);
    }
  }
  auto ends2 = step_ends(tr2.events);
  for (const char* s : {"kill_server", "gpus_free", "unit_file", "enable", "active"}) {
    INFO(s);
    CHECK(ends2[s]["status"] == "ok");
    CHECK(ends2[s]["rung"] == 0);
  }
  CHECK(alive_on(host, scene.at("KEEP_PID")));
  out.clear();
  host.ssh("systemctl is-active inference", &out);
  CHECK(out == "active\n");
}
