// R09 (../shared/cases/real-hosts.md; issue 27, item 5a): a host whose PID 1
// is not systemd (a container, WSL; this build machine) has systemctl, which
// reads no state there. A service step and verify service_active say they
// could not check, in the same words, run no action and no escalation rung,
// and plan --probe says the same. The loopback sshd is such a host: where
// this machine does run systemd, the sshd's own /run (an overlay in its mount
// namespace) lacks /run/systemd/system, as sd_booted(3) tests it.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "support/transcript_events.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

struct NoSystemdHost {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-r09");
  std::string inv = dir + "/inventory.toml";
  NoSystemdHost() {
    if (std::filesystem::exists("/run/systemd/system")) {
      ShellResult r = run_sh("nsenter -t " + std::to_string(sshd.pid()) + " -m rm -rf /run/systemd/system");
      INFO(r.out << r.err);
      REQUIRE(r.code == 0);
    }
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
  }
  /// The words every service check says here.
  static std::string reason() {
    std::string comm = read_file("/proc/1/comm");
    while (!comm.empty() && comm.back() == '\n') comm.pop_back();
    return "could not check: systemd is not running on this host (PID 1 is " + comm +
           "; /run/systemd/system is missing)";
  }
};

}  // namespace

TEST_CASE("R09: where PID 1 is not systemd a service step could not check - no systemctl action, no rung",
          "[ssh][e2e]") {
  NoSystemdHost h;
  // A stand-in the kill rungs would match, with an argument no other process has.
  const std::string arg = std::to_string(700000 + getpid() % 100000);
  OwnedProcess stand_in("exec sleep " + arg);
  REQUIRE(eventually([&] { return stand_in.alive(); }));
  const std::string rung = "  [[step.escalate]]\n  kind = \"kill\"\n  pattern = \"^sleep " + arg +
                           "$\"\n  signal = \"KILL\"\n";
  const std::string pb = h.dir + "/pb.toml";
  write_file(pb, "name = \"r09\"\n"
                 "[[step]]\nid = \"persistenced\"\nkind = \"service\"\nunit = \"nvidia-persistenced.service\"\n"
                 "state = \"stopped\"\non_failure = \"continue\"\n" + rung +
                 "[[step]]\nid = \"restart\"\nkind = \"service\"\nunit = \"nvidia-persistenced.service\"\n"
                 "state = \"restarted\"\non_failure = \"continue\"\n" + rung +
                 "[[step]]\nid = \"active\"\nkind = \"verify\"\nservice_active = [\"nvidia-persistenced\"]\n" + rung);
  const std::string t = h.dir + "/run.jsonl";
  ShellResult r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + h.inv + " -F none --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  std::map<std::string, std::string> why;
  for (const auto& e : events_named(t, "step_end")) {
    CHECK(e["status"] == "failed");
    CHECK(e["rung"] == 0);
    why[e["step"]] = e.value("reason", "");
  }
  CHECK(why.at("persistenced") == NoSystemdHost::reason());
  CHECK(why.at("restart") == NoSystemdHost::reason());  // said once, not "action failed: ...; then the check: ..."
  CHECK(why.at("active") == NoSystemdHost::reason());
  for (const auto& e : events_named(t, "command")) {
    INFO(e.dump());
    CHECK(e.value("rung", 0) == 0);  // no escalation rung ran
    // No action of the stop, nor of the verify. The restart acts without a
    // first check (restarted acts every time): its library call refused
    // before any systemctl (exit 5 below).
    if (e["role"] == "action") CHECK(e["step"] == "restart");
  }
  for (const auto& e : events_named(t, "exit"))
    if (e["step"] == "restart" && e.value("role", "") == "action") CHECK(e["exit_code"] == 5);
  CHECK(stand_in.alive());

  // plan --probe: the same words for every step, nothing sent but checks.
  const std::string pt = h.dir + "/probe.jsonl";
  ShellResult p = run_sh(std::string(RATCHET_BINARY) + " plan " + pb + " --probe --json -i " + h.inv +
                         " -F none --transcript " + pt);
  INFO(p.out << p.err);
  CHECK(p.code == 1);
  auto j = json::parse(p.out);
  const auto& steps = j["hosts"][0]["steps"];
  REQUIRE(steps.size() == 3);
  for (const auto& s : steps) {
    INFO(s.dump());
    CHECK(s["verdict"] == "could_not_check");
    // The verdict says "could not check"; the reason is the rest.
    CHECK("could not check: " + s.value("reason", "") == NoSystemdHost::reason());
  }
  for (const auto& e : events_named(pt, "command")) CHECK(e["role"] == "check");
  CHECK(stand_in.alive());
  const pid_t pid = stand_in.pid();
  stand_in.stop();  // by its PID
  CHECK(wait_pid_gone(pid, 5000));
}

TEST_CASE("verify service_active where /run/systemd/system exists but no manager answers: could not check, no rung",
          "[ssh][e2e]") {
  NoSystemdHost h;
  // sd_booted() says yes (in the sshd's own /run overlay only), but nothing answers on the bus.
  ShellResult mk = run_sh("nsenter -t " + std::to_string(h.sshd.pid()) + " -m mkdir -p /run/systemd/system");
  INFO(mk.out << mk.err);
  REQUIRE(mk.code == 0);
  const std::string arg = std::to_string(800000 + getpid() % 100000);
  OwnedProcess stand_in("exec sleep " + arg);
  REQUIRE(eventually([&] { return stand_in.alive(); }));
  const std::string pb = h.dir + "/pb.toml";
  write_file(pb, "name = \"nobus\"\n[[step]]\nid = \"active\"\nkind = \"verify\"\nservice_active = [\"brkx.service\"]\n"
                 "  [[step.escalate]]\n  kind = \"kill\"\n  pattern = \"^sleep " + arg + "$\"\n  signal = \"KILL\"\n");
  const std::string t = h.dir + "/run.jsonl";
  ShellResult r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + h.inv + " -F none --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  auto ends = events_named(t, "step_end");
  REQUIRE(ends.size() == 1);
  CHECK(ends[0]["status"] == "failed");
  CHECK(ends[0]["rung"] == 0);
  CHECK(ends[0].value("reason", "").rfind("could not check: systemctl show brkx.service read no LoadState: ", 0) == 0);
  for (const auto& e : events_named(t, "command")) CHECK(e["role"] == "check");
  CHECK(stand_in.alive());
  const pid_t pid = stand_in.pid();
  stand_in.stop();  // by its PID
  CHECK(wait_pid_gone(pid, 5000));
}
