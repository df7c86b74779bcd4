// The session shell (--transport session) against the real loopback sshd:
// each guarantee of the channel path, and a command that breaks the shell.
#include <signal.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <string>
#include <thread>

#include "support/sshd_fixture.h"
#include "transport/transport.h"
#include "transport/wire.h"

using namespace ratchet;
using namespace ratchet::transport;
using ratchet::testing::SshdHost;
using std::chrono::milliseconds;

namespace {

std::unique_ptr<Transport> session_to(const SshdHost& host) {
  Endpoint ep = host.endpoint();
  ep.exec_mode = ExecMode::session;
  auto t = make_ssh_transport(ep);
  ConnectInfo info;
  auto err = t->connect(&info);
  INFO((err ? err->message : std::string("connected")));
  REQUIRE_FALSE(err);
  return t;
}

/// As the engine sends it: a run id, a host deadline, the client's after it.
ExecRequest wired(const std::string& command, int timeout_ms = 10'000) {
  ExecRequest req;
  req.run_id = new_run_id();
  req.script = command;
  req.host_timeout = milliseconds(timeout_ms);
  req.timeout = client_deadline(milliseconds(timeout_ms));
  return req;
}

/// Runs `command` and checks that it ran on the session shell (no fallback warning).
ExecResult run(Transport& t, const std::string& command) {
  ExecResult r = t.exec(wired(command));
  INFO(command << "\nerror: " << r.error << "\nwarning: " << r.warning << "\nerr: " << r.err.data);
  CHECK(r.error.empty());
  CHECK(r.warning.empty());
  return r;
}

}  // namespace

TEST_CASE("session: exit codes, signals and the two streams, command after command", "[ssh][session]") {
  SshdHost host;
  auto t = session_to(host);
  ExecResult r = run(*t, "echo out; echo err >&2; exit 3");
  CHECK(r.exit_code == 3);
  CHECK(r.out.data == "out\n");
  CHECK(r.err.data == "err\n");  // the wrapper's pid line taken out
  CHECK(r.remote_pid > 1);
  r = run(*t, "kill -KILL $$");
  CHECK(r.exit_code == -1);
  CHECK(r.signal == "KILL");
  // sh reads both as 143: the status trap tells them apart.
  r = run(*t, "exit 143");
  CHECK(r.exit_code == 143);
  CHECK(r.signal.empty());
  r = run(*t, "kill -TERM $$");
  CHECK(r.signal == "TERM");
  for (int i = 0; i < 5; ++i) CHECK(run(*t, "true").exit_code == 0);
}

TEST_CASE("session: every byte value and fake end markers come back as output", "[ssh][session]") {
  SshdHost host;
  auto t = session_to(host);
  // All 256 byte values on both streams, then what a trailer looks like.
  const std::string gen = "i=0; while [ $i -lt 256 ]; do printf \"\\\\$(printf %o $i)\"; i=$((i+1)); done";
  ExecResult r = run(*t, "{ " + gen + "; } ; { " + gen + "; } >&2; "
                         "echo ' end exit 0 0 0'; printf 'ratchet-session x ready /tmp\\n0123456789abcdef0123456789abcdef' >&2");
  std::string all;
  for (int i = 0; i < 256; ++i) all += char(i);
  CHECK(r.exit_code == 0);
  CHECK(r.out.data == all + " end exit 0 0 0\n");
  CHECK(r.err.data == all + "ratchet-session x ready /tmp\n0123456789abcdef0123456789abcdef");
  CHECK(run(*t, "echo next").out.data == "next\n");
}

TEST_CASE("session: no variable, cwd, umask, trap or descriptor carries to the next command", "[ssh][session]") {
  SshdHost host;
  auto t = session_to(host);
  const std::string look = "echo \"${RATCHET_LEAK-unset} ${LEAK2-unset}\"; pwd; umask; trap; ulimit -n; ls /proc/$$/fd";
  ExecResult before = run(*t, look);
  run(*t, "export RATCHET_LEAK=1; LEAK2=2; cd /tmp; umask 077; trap 'echo t' INT TERM; ulimit -n 64; exec 7>/dev/null; true");
  ExecResult after = run(*t, look);
  CHECK(before.out.data.rfind("unset unset\n", 0) == 0);
  CHECK(after.out.data == before.out.data);
}

TEST_CASE("session: each command gets its own stdin, closed after it", "[ssh][session]") {
  SshdHost host;
  auto t = session_to(host);
  ExecRequest req = wired("cat; echo end");
  req.stdin_data = std::string("line\0two\n", 9);
  ExecResult r = t->exec(req);
  CHECK(r.error.empty());
  CHECK(r.out.data == req.stdin_data + "end\n");
  r = run(*t, "cat; echo empty");  // EOF at once, not the next request
  CHECK(r.out.data == "empty\n");
  // 2 MiB arrive whole.
  req = wired("wc -c");
  req.stdin_data.assign(2 << 20, 'x');
  r = t->exec(req);
  CHECK(r.out.data == std::to_string(2 << 20) + "\n");
}

TEST_CASE("session: a background child holding stdout is left after the grace and leaks nothing",
          "[ssh][session]") {
  SshdHost host;
  auto t = session_to(host);
  ExecRequest req = wired("sleep 30 & echo $! >&2; echo started");
  req.drain_grace = milliseconds(300);
  ExecResult r = t->exec(req);
  CHECK(r.error.empty());
  CHECK(r.exit_code == 0);
  CHECK(r.out.data == "started\n");
  CHECK(r.warning.find("sleep") != std::string::npos);
  const pid_t holder = std::stoi(r.err.data);
  CHECK(ratchet::testing::pid_alive(holder));
  ExecResult next = run(*t, "echo next");
  CHECK(next.out.data == "next\n");
  ::kill(holder, SIGKILL);  // the loopback host is this machine: our own child
  CHECK(ratchet::testing::wait_pid_gone(holder, 5000));
}

TEST_CASE("session: the host deadline ends a command and its group, the shell stays", "[ssh][session]") {
  SshdHost host;
  auto t = session_to(host);
  ExecResult r = t->exec(wired("sleep 30 & sleep 30; echo never", 1000));
  CHECK(r.signal == "TERM");
  CHECK(r.timed_out);
  CHECK(r.watchdog == "armed");
  CHECK(r.out.data.empty());
  CHECK(run(*t, "echo next").out.data == "next\n");
}

TEST_CASE("session: a command that kills the session shell fails alone, the next one runs", "[ssh][session]") {
  SshdHost host;
  auto t = session_to(host);
  for (const char* breaker : {"kill -KILL $PPID; sleep 5", "kill -TERM $PPID; sleep 5"}) {
    INFO(breaker);
    ExecResult r = t->exec(wired(breaker));
    CHECK(r.error.find("the session shell ended during the command") != std::string::npos);
    CHECK(t->connected());
    ExecResult next = run(*t, "echo next");
    CHECK(next.exit_code == 0);
    CHECK(next.out.data == "next\n");
  }
  // Reading the shell's own stdin or closing its streams reaches nothing of it.
  ExecResult r = run(*t, "exec 0<&- 1>&- 2>&-; sleep 0.1; exit 5");
  CHECK(r.exit_code == 5);
  CHECK(run(*t, "echo still").out.data == "still\n");
}

TEST_CASE("session: cancel stops the remote command, the next one runs", "[ssh][session]") {
  SshdHost host;
  auto t = session_to(host);
  std::atomic<bool> cancel{false};
  ExecRequest req = wired("echo $$ >&2; sleep 30");
  req.cancel = &cancel;
  std::thread stop([&] {
    std::this_thread::sleep_for(milliseconds(500));
    cancel.store(true);
  });
  ExecResult r = t->exec(req);
  stop.join();
  CHECK(r.error == "interrupted");
  CHECK(r.remote_pid > 1);
  CHECK(ratchet::testing::wait_pid_gone(pid_t(r.remote_pid), 5000));
  CHECK(run(*t, "echo next").out.data == "next\n");
}

TEST_CASE("session: where the shell cannot start, channels run the commands and the first says why",
          "[ssh][session]") {
  SshdHost host{"EXTRA_SSHD_CONFIG='SetEnv TMPDIR=/nonexistent/ratchet-session-test'"};  // mktemp -d fails
  auto t = session_to(host);
  ExecResult r = t->exec(wired("echo hi"));
  INFO(r.warning);
  CHECK(r.exit_code == 0);
  CHECK(r.out.data == "hi\n");
  CHECK(r.warning.find("the session shell could not start (the shell ended (exit 97): ratchet-session: "
                       "mktemp -d failed)") != std::string::npos);
  r = t->exec(wired("echo again"));
  CHECK(r.warning.empty());
  CHECK(r.out.data == "again\n");
}
