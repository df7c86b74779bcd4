#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "support/systemd_fixture.h"
#include "util/shell.h"

using ratchet::testing::SystemdHost;
using ratchet::util::shell_quote;

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(0, 1);
  return s;
}

// stdout of `cmd` on the host, trimmed; fails the test if ssh or the command fails.
std::string on_host(SystemdHost& host, const std::string& cmd) {
  std::string out, err;
  int rc = host.ssh(cmd, &out, &err);
  INFO("command: " << cmd << "\nstderr: " << err);
  REQUIRE(rc == 0);
  return trim(out);
}

}  // namespace

TEST_CASE("a systemd host boots and stages the GPU hand-over", "[systemd]") {
  std::string why;
  // A machine that cannot boot the lab host fails here, loudly (see README).
  if (!SystemdHost::available(&why)) FAIL("a systemd lab host is needed and cannot start here: " << why);

  auto host = std::make_unique<SystemdHost>();
  WARN("systemd host on 127.0.0.1:" << host->port() << ": ensure " << host->ensure_seconds() << " s, boot to ssh "
                                    << host->boot_seconds() << " s");

  // --wait: right after sshd answers, the boot may still be "starting".
  std::string state;
  host->ssh("systemctl is-system-running --wait", &state);  // exits 1 when degraded
  state = trim(state);
  CHECK((state == "running" || state == "degraded"));
  CHECK(on_host(*host, "ps -o comm= -p 1") == "systemd");

  auto t0 = std::chrono::steady_clock::now();
  auto scene = host->stage_inference();
  double stage_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("staged the inference scene in " << stage_s << " s");
  for (const char* key : {"DEVICE_DIR", "SERVER_PID", "CHILD_PID", "WORKER_PID", "KEEP_PID"}) {
    INFO(key);
    REQUIRE(!scene[key].empty());
  }
  const std::string dir = scene["DEVICE_DIR"];

  // The hand-started server is the one the PID file names; its tokenizer is its child.
  CHECK(on_host(*host, "cat /run/inference.pid") == scene["SERVER_PID"]);
  CHECK(on_host(*host, "ps -o ppid= -p " + scene["CHILD_PID"]) == scene["SERVER_PID"]);
  CHECK(on_host(*host, "readlink /proc/" + scene["SERVER_PID"] + "/fd/3") == dir + "/nvidiactl");

  // The worker is orphaned (re-parented to the container's PID 1), not in the server's
  // session, ignores SIGTERM, and holds all ten stand-in files.
  CHECK(on_host(*host, "ps -o ppid= -p " + scene["WORKER_PID"]) == "1");
  CHECK(on_host(*host, "ps -o sid= -p " + scene["WORKER_PID"]) != on_host(*host, "ps -o sid= -p " + scene["SERVER_PID"]));
  std::string count_held = "for f in /proc/" + scene["WORKER_PID"] + "/fd/*; do readlink \"$f\"; done | grep -c ^" +
                           shell_quote(dir + "/");
  CHECK(on_host(*host, count_held) == "10");
  CHECK(on_host(*host, "kill -TERM " + scene["WORKER_PID"] + "; sleep 0.2; kill -0 " + scene["WORKER_PID"] +
                           " && echo alive") == "alive");

  // The daemon in the keep list: comm is cut to 15 characters.
  CHECK(on_host(*host, "cat /proc/" + scene["KEEP_PID"] + "/comm") == "nvidia-persiste");
  CHECK(on_host(*host, "readlink /proc/" + scene["KEEP_PID"] + "/fd/3") == dir + "/nvidiactl");

  // The unit the runbook installs starts the real stand-in server with those devices.
  CHECK(on_host(*host, "printf '[Service]\\nEnvironmentFile=-/etc/default/inference\\n"
                       "ExecStart=/usr/local/bin/inference-server\\n' > /run/systemd/system/inference.service && "
                       "systemctl daemon-reload && systemctl start inference && sleep 0.3 && "
                       "systemctl is-active inference") == "active");
  CHECK(on_host(*host, "p=$(systemctl show -p MainPID --value inference); "
                       "for f in /proc/$p/fd/*; do readlink \"$f\"; done | grep -c ^" + shell_quote(dir + "/")) ==
        "10");

  t0 = std::chrono::steady_clock::now();
  std::string state_dir = host->state_dir();
  host.reset();
  WARN("stopped in " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s");
  CHECK(std::system(("test ! -e " + shell_quote(state_dir)).c_str()) == 0);
}
