#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "support/sshd_fixture.h"
#include "transport/transport.h"
#include "transport/wire.h"
#include "util/hash.h"

using namespace ratchet;
using namespace ratchet::transport;
using std::chrono::milliseconds;

namespace {

ExecResult run(const std::string& command, int timeout_ms = 10'000, std::string stdin_data = "") {
  auto t = make_local_transport();
  ConnectInfo info;
  REQUIRE_FALSE(t->connect(&info));
  ExecRequest req;
  req.script = command;
  req.timeout = milliseconds(timeout_ms);
  req.stdin_data = std::move(stdin_data);
  return t->exec(req);
}

ExecResult run_wired(const std::string& command, int timeout_ms) {
  auto t = make_local_transport();
  ExecRequest req;
  req.run_id = new_run_id();
  req.script = command;
  req.timeout = client_deadline(milliseconds(timeout_ms));
  req.host_timeout = milliseconds(timeout_ms);
  return t->exec(req);
}

/// A temp file path that the test removes.
struct TempPath {
  std::string path;
  TempPath() {
    char tmpl[] = "/tmp/ratchet-local-XXXXXX";
    int fd = mkstemp(tmpl);
    ::close(fd);
    path = tmpl;
  }
  ~TempPath() { std::remove(path.c_str()); }
  std::vector<pid_t> pids() const {
    std::ifstream f(path);
    std::vector<pid_t> out;
    for (pid_t p; f >> p;) out.push_back(p);
    return out;
  }
};

}  // namespace

TEST_CASE("local: streams, exit code and connect info", "[transport]") {
  auto t = make_local_transport();
  ConnectInfo info;
  REQUIRE_FALSE(t->connect(&info));
  CHECK(info.address == "localhost");
  CHECK(info.auth_method == "local");
  ExecRequest req;
  req.script = "printf 'a\\n'; printf 'b' >&2; exit 7";
  ExecResult r = t->exec(req);
  CHECK(r.out.data == "a\n");
  CHECK(r.err.data == "b");
  CHECK(r.exit_code == 7);
  CHECK(r.signal == "");
  CHECK_FALSE(r.timed_out);
  CHECK(r.error == "");
  t->close();
  t->close();
}

TEST_CASE("local: a signal death reports its name", "[transport]") {
  ExecResult r = run("kill -TERM $$");
  CHECK(r.signal == "TERM");
  CHECK(r.exit_code == -1);
  r = run("kill -KILL $$");
  CHECK(r.signal == "KILL");
}

TEST_CASE("local: stdin round trip of 4 MiB", "[transport]") {
  std::string data(4 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = char((i * 131) % 251);
  ExecResult r = run("sha256sum", 30'000, data);
  CHECK(r.out.data == util::sha256_hex(data) + "  -\n");
  r = run("echo ignored", 10'000, data);  // a reader that never reads
  CHECK(r.out.data == "ignored\n");
  CHECK(r.exit_code == 0);
}

TEST_CASE("local: the client deadline kills the command", "[transport]") {
  ExecResult r = run("echo started; sleep 30", 500);
  CHECK(r.timed_out);
  CHECK(r.exit_code == -1);
  CHECK(r.signal == "KILL");
  CHECK(r.out.data == "started\n");
  CHECK(r.ms < 2000);
}

TEST_CASE("local: the wire wrapper ends a command and its children at the deadline",
          "[transport]") {
  TempPath pids;
  ExecResult r = run_wired("sleep 30 & echo $$ $! > " + pids.path + "; wait", 1000);
  CHECK(r.signal == "TERM");
  CHECK(r.timed_out);
  CHECK(r.ms >= 1000);
  CHECK(r.ms < 3000);
  auto list = pids.pids();
  REQUIRE(list.size() == 2);
  for (pid_t p : list) CHECK(ratchet::testing::wait_pid_gone(p, 3000));
}

TEST_CASE("local: the wire wrapper kills a stubborn command with KILL", "[transport]") {
  ExecResult r = run_wired("trap '' TERM; echo armed; while :; do sleep 0.1; done", 500);
  CHECK(r.out.data == "armed\n");
  CHECK(r.signal == "KILL");
  CHECK(r.timed_out);
  CHECK(r.ms >= 1400);  // TERM at 0.5 s was ignored; KILL one second later
  CHECK(r.ms < 3000);
}

TEST_CASE("local: a background child holding stdout is not waited for past the drain grace, and is left running",
          "[transport]") {
  TempPath pid;
  ExecResult r = run_wired("sleep 30 & echo $! > " + pid.path + "; echo hi", 20'000);
  auto list = pid.pids();
  REQUIRE(list.size() == 1);
  CHECK(r.out.data == "hi\n");
  CHECK(r.exit_code == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(r.ms >= 2000);  // the drain grace
  CHECK(r.ms < 5000);   // not the 20 s timeout
  CHECK(r.warning == "output still held open 2s after the command exited, by PID " + std::to_string(list[0]) +
                         " (sleep): left running, not waited for");
  CHECK(ratchet::testing::pid_alive(list[0]));  // the worker the command started lives on
  ::kill(list[0], SIGTERM);
  CHECK(ratchet::testing::wait_pid_gone(list[0], 3000));
}

TEST_CASE("local: the wire wrapper leaves quick commands and detached children alone",
          "[transport]") {
  TempPath pid;
  ExecResult r = run_wired("echo fast; exit 3", 5000);
  CHECK(r.out.data == "fast\n");
  CHECK(r.exit_code == 3);
  CHECK(r.ms < 1000);
  // Redirected away from the channel: survives the deadline (we stop it ourselves).
  r = run_wired("sleep 5 >/dev/null 2>&1 & echo $! > " + pid.path, 500);
  CHECK(r.exit_code == 0);
  CHECK(r.ms < 1000);
  auto list = pid.pids();
  REQUIRE(list.size() == 1);
  usleep(1'200'000);  // past the deadline
  CHECK(ratchet::testing::pid_alive(list[0]));
  ::kill(list[0], SIGTERM);
  CHECK(ratchet::testing::wait_pid_gone(list[0], 3000));
}

TEST_CASE("local: wire wrapper output and status pass through unchanged", "[transport]") {
  ExecResult r = run_wired("printf 'x\\n'; printf 'y\\n' >&2; exit 42", 5000);
  CHECK(r.out.data == "x\n");
  CHECK(r.err.data == "y\n");
  CHECK(r.exit_code == 42);
  r = run_wired("echo \"$0 $# [$1]\"", 5000);  // the command sees a plain sh -c
  CHECK(r.out.data == "/bin/sh 0 []\n");
}

TEST_CASE("local: each stream's byte count and sha256 cover every byte, also past the capture cap", "[transport]") {
  auto t = make_local_transport();
  ConnectInfo info;
  REQUIRE_FALSE(t->connect(&info));
  ExecRequest req;
  req.script = "head -c 3000000 /dev/zero | tr '\\000' a; printf e >&2";
  req.capture = 1 << 20;
  ExecResult r = t->exec(req);
  CHECK(r.out.total == 3000000);
  CHECK(r.out.dropped > 0);
  CHECK(r.out.sha256 == util::sha256_hex(std::string(3000000, 'a')));
  CHECK(r.err.sha256 == util::sha256_hex("e"));
}

TEST_CASE("local: a typed command gets its library and a run id drawn by the transport", "[transport]") {
  auto t = make_local_transport();
  ConnectInfo info;
  REQUIRE_FALSE(t->connect(&info));
  static const Library lib{"ratchet_hi() { echo \"hi $1\"; }", "# lib", "ratchet_"};
  ExecRequest req;
  req.script = "ratchet_hi there; echo $RATCHET_RUN_ID";
  req.library = &lib;
  req.host_timeout = milliseconds(5000);
  req.timeout = client_deadline(req.host_timeout);
  ExecResult r = t->exec(req);  // req.run_id is "": the transport names the command
  std::istringstream out(r.out.data);
  std::string first, id;
  std::getline(out, first);
  std::getline(out, id);
  CHECK(first == "hi there");
  CHECK(valid_run_id(id));
  CHECK(r.remote_pid > 1);  // wrapped: the marker line named the process and was taken out
  CHECK(r.err.data.empty());
}
