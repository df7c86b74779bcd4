// R25 (b) (docs/reliability.md): a path that silently drops the host's packets
// mid-step is noticed by keepalives (ssh config ServerAliveInterval and
// ServerAliveCountMax) within interval x count after the first unanswered one,
// not at the step's timeout. ratchet and a real sshd run in a network
// namespace the test creates; `iptables -j DROP` there of the sshd's packets
// cuts the path while a silent `sleep` runs. Part (a) is in
// tests/transport/ssh_transport_test.cc.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>

#include "support/every_kind.h"
#include "support/files.h"
#include "support/local_proc.h"
#include "support/netns_fixture.h"
#include "support/sshd_fixture.h"

using namespace ratchet::testing;

namespace {

struct Lab {
  NetNs ns;
  SshdHost sshd{ns.exec_prefix()};
  std::string dir = temp_dir("ratchet-r25");

  /// `ratchet run` inside the namespace with an ssh config of ServerAliveInterval 1,
  /// ServerAliveCountMax 2, of one `run` step (timeout 60s) that runs `command`.
  pid_t start(const std::string& command, const std::string& transport, const std::string& t) {
    write_file(dir + "/ssh_config", "Host *\n  ServerAliveInterval 1\n  ServerAliveCountMax 2\n");
    write_file(dir + "/inventory.toml", "[hosts.box]\naddress = \"127.0.0.1\"\nport = " +
                                            std::to_string(sshd.port()) + "\nuser = \"root\"\nidentity = \"" +
                                            sshd.client_key() + "\"\nknown_hosts = \"" + sshd.known_hosts() + "\"\n");
    write_file(dir + "/pb.toml", "name = \"r25\"\ntargets = [\"box\"]\naudit_log = false\n[[step]]\nid = \"quiet\"\n"
                                 "kind = \"run\"\ntimeout = \"60s\"\ncommand = \"" + command + "\"\n");
    const std::string cmd = "exec " + ns.exec_prefix() + " " + RATCHET_BINARY + " run " + dir + "/pb.toml -i " + dir +
                            "/inventory.toml -F " + dir + "/ssh_config --transport " + transport +
                            " --reconnect-timeout 0 --transcript " + t;
    pid_t pid = fork();
    if (pid == 0) {
      int o = open((t + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(o, 1);
      dup2(o, 2);
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    return pid;
  }
};

/// Waits up to `ms` for `pid` (then SIGKILLs it); returns its exit code, -1 when it did not exit in time.
int wait_exit(pid_t pid, int ms) {
  int status = 0;
  if (!eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, ms)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("R25: keepalives from the ssh config notice a path that drops silently mid-step within interval x count "
          "- not at the step's timeout - on both transports",
          "[ssh][e2e][netns]") {
  for (const char* transport : {"session", "channel"}) {
    INFO("over " << transport);
    Lab lab;
    // Answered keepalives keep a silent command going.
    const std::string quiet = lab.dir + "/quiet.jsonl";
    CHECK(wait_exit(lab.start("sleep 4", transport, quiet), 30'000) == 0);
    CHECK(step_statuses(quiet)["quiet"] == "changed");

    const std::string started = lab.dir + "/started", t = lab.dir + "/cut.jsonl";
    // The sleep's PID, to end it here: the cut session's watchdog would only at 60 s.
    pid_t pid = lab.start("sleep 50 & echo $! > " + started + "; wait", transport, t);
    REQUIRE(eventually([&] { return read_file(started).find('\n') != std::string::npos; }));
    struct EndSleep {
      pid_t pid;
      ~EndSleep() { kill(pid, SIGKILL); }
    } end_sleep{pid_t(std::stol(read_file(started)))};
    const auto cut = std::chrono::steady_clock::now();
    ShellResult drop = run_sh(lab.ns.exec_prefix() + " iptables -A INPUT -p tcp --sport " +
                              std::to_string(lab.sshd.port()) + " -j DROP");
    INFO(drop.out << drop.err);
    REQUIRE(drop.code == 0);
    const int code = wait_exit(pid, 40'000);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - cut).count();
    INFO(read_file(t + ".out"));
    CHECK(code == 1);
    // The last packet came at most an interval before the cut; then an
    // interval to the first keepalive and two without an answer: 3 s, and
    // the polls' slack. The step's own timeout is 60 s.
    CHECK(secs < 5.0);
    CHECK(step_statuses(t)["quiet"] == "failed");
    CHECK(std::regex_match(step_reasons(t)["quiet"],
                           std::regex("127\\.0\\.0\\.1:[0-9]+: connection lost: no answer to keepalives for 2\\.[0-9]s "
                                      "\\(ServerAliveInterval 1s, ServerAliveCountMax 2\\)")));
    run_sh(lab.ns.exec_prefix() + " iptables -F INPUT");  // the sshd can be stopped over its own loopback
  }
}
