// scripts/lab.sh: a throwaway systemd lab host for a user's own playbook (README's
// tour, after the demo). start prints the inventory and how to use it; a playbook
// runs on it with that inventory; ssh reaches it; stop stops only the host it
// started (the launcher PID it recorded) and removes its state directory.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/systemd_fixture.h"

using namespace ratchet::testing;
namespace fs = std::filesystem;

namespace {

const std::string kLab = std::string(RATCHET_SOURCE_DIR) + "/scripts/lab.sh";

}  // namespace

TEST_CASE("scripts/lab.sh: --help prints the usage (exit 0) and an unknown command prints it on stderr (exit 2)",
          "[cli]") {
  auto help = run_sh(kLab + " --help");
  CHECK(help.code == 0);
  for (const char* line : {"scripts/lab.sh start [--port N] [--group G]...", "scripts/lab.sh inventory",
                           "scripts/lab.sh ssh [CMD...]", "scripts/lab.sh stop"})
    CHECK(help.out.find(line) != std::string::npos);
  auto bad = run_sh(kLab + " launch");
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("scripts/lab.sh start") != std::string::npos);
  // Nothing started: inventory and ssh say so, stop has nothing to do.
  std::string dir = temp_dir("ratchet-lab-none") + "/lab";
  auto inv = run_sh("RATCHET_LAB_DIR=" + dir + " " + kLab + " inventory");
  CHECK(inv.code == 1);
  CHECK(inv.err == "lab: not running (scripts/lab.sh start)\n");
  auto stop = run_sh("RATCHET_LAB_DIR=" + dir + " " + kLab + " stop");
  CHECK(stop.code == 0);
  CHECK(stop.out == "lab: not running (no " + dir + ")\n");
}

TEST_CASE("scripts/lab.sh start, a playbook run with its inventory, ssh, stop", "[systemd][e2e]") {
  std::string why;
  if (!SystemdHost::available(&why)) FAIL("systemd host unavailable: " << why);
  std::string dir = temp_dir("ratchet-lab-script");
  std::string state = dir + "/lab";
  // LAB_OWNER_PID: systemd-host.sh's watchdog stops the host if this test dies unwound.
  const std::string env = "RATCHET_LAB_DIR=" + state + " LAB_OWNER_PID=" + std::to_string(getpid()) + " ";
  struct Stop {  // also when a check below throws
    std::string cmd;
    ~Stop() { run_sh(cmd); }
  } stop{env + kLab + " stop"};

  auto start = run_sh(env + kLab + " start --group gpu");
  INFO(start.out << start.err);
  REQUIRE(start.code == 0);
  const std::string inv = state + "/inventory.toml";
  CHECK(start.out.find("lab: inventory: " + inv + "  (host lab; groups: gpu)\n") != std::string::npos);
  CHECK(start.out.find(" run YOUR.toml -i " + inv + "\n") != std::string::npos);
  CHECK(start.out.find("scripts/lab.sh stop") != std::string::npos);
  auto printed = run_sh(env + kLab + " inventory");
  CHECK(printed.out == inv + "\n");
  const pid_t launcher = std::atoi(read_file(state + "/launcher.pid").c_str());
  REQUIRE(launcher > 0);

  // A user's own playbook, targeting the group given with --group, runs there.
  write_file(dir + "/mine.toml",
             "name = \"mine\"\ntargets = [\"gpu\"]\n\n[[step]]\nid = \"hello\"\nkind = \"run\"\n"
             "command = \"systemctl is-system-running --wait >/dev/null; hostname > /root/hello\"\n"
             "creates = \"/root/hello\"\n");
  auto run = run_sh(std::string(RATCHET_BINARY) + " run " + dir + "/mine.toml -i " + inv + " --transcript " + dir +
                    "/t.jsonl");
  INFO(run.out << run.err);
  CHECK(run.code == 0);
  auto ssh = run_sh(env + kLab + " ssh cat /root/hello");
  CHECK(ssh.code == 0);
  CHECK(ssh.out.rfind("lab-", 0) == 0);  // the lab host's hostname, lab-PORT

  auto stopped = run_sh(env + kLab + " stop");
  INFO(stopped.out << stopped.err);
  CHECK(stopped.code == 0);
  CHECK(stopped.out.find("lab: stopped; removed " + state + "\n") != std::string::npos);
  CHECK(eventually([&] { return kill(launcher, 0) != 0; }));
  CHECK_FALSE(fs::exists(state));
}
