// Integration tests against a real sshd on 127.0.0.1 (tests/lab/sshd-host.sh).
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <filesystem>
#include <thread>
#include <fstream>
#include <sstream>

#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transport/transport.h"
#include "transport/wire.h"
#include "util/hash.h"

using namespace ratchet;
using namespace ratchet::transport;
using ratchet::testing::SshdHost;
using std::chrono::milliseconds;

namespace {

std::unique_ptr<Transport> connected(const Endpoint& ep, ConnectInfo* info = nullptr) {
  auto t = make_ssh_transport(ep);
  ConnectInfo scratch;
  auto err = t->connect(info ? info : &scratch);
  INFO((err ? err->message : std::string("connected")));
  REQUIRE_FALSE(err);
  return t;
}

/// ep with its commands sent through `mode` (one channel each, or the session shell).
Endpoint in_mode(Endpoint ep, ExecMode mode) {
  ep.exec_mode = mode;
  return ep;
}

ExecRequest request(const std::string& command, int timeout_ms = 10'000) {
  ExecRequest req;
  req.script = command;
  req.timeout = milliseconds(timeout_ms);
  return req;
}

/// A request through the deadline wrapper, as the engine sends it.
ExecRequest wired(const std::string& command, int timeout_ms) {
  ExecRequest req;
  req.run_id = new_run_id();
  req.script = command;
  req.timeout = client_deadline(milliseconds(timeout_ms));
  req.host_timeout = milliseconds(timeout_ms);
  return req;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<pid_t> read_pids(const std::string& path) {
  std::istringstream in(slurp(path));
  std::vector<pid_t> pids;
  for (pid_t p; in >> p;) pids.push_back(p);
  return pids;
}

std::string fingerprint_of(const std::string& pubkey_file) {
  // "256 SHA256:xxxx comment (ED25519)" -> "SHA256:xxxx"
  std::istringstream in(ratchet::testing::run_local("ssh-keygen -lf " + pubkey_file));
  std::string bits, fp;
  in >> bits >> fp;
  return fp;
}

}  // namespace

TEST_CASE("ssh: connect reports the peer and keeps stdout, stderr and the exit code apart",
          "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host;
  ConnectInfo info;
  auto t = connected(in_mode(host.endpoint(), mode), &info);
  CHECK(info.address == "127.0.0.1");
  CHECK(info.port == host.port());
  CHECK(info.user == "root");
  CHECK(info.fingerprint == fingerprint_of(host.host_pubkey()));
  CHECK(info.auth_method == "publickey (" + host.client_key() + ")");
  CHECK(info.ms >= 0);

  ExecResult r = t->exec(request("printf 'out\\n'; printf 'err\\n' >&2; printf more; exit 7"));
  CHECK(r.error == "");
  CHECK(r.out.data == "out\nmore");
  CHECK(r.out.total == 8);
  CHECK(r.out.dropped == 0);
  CHECK(r.err.data == "err\n");
  CHECK(r.exit_code == 7);
  CHECK(r.signal == "");
  CHECK_FALSE(r.timed_out);
  t->close();
  t->close();  // idempotent
}

TEST_CASE("ssh: death by signal reports the signal name and exit code -1", "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host;
  auto t = connected(in_mode(host.endpoint(), mode));
  // Every typed command runs as `exec /bin/sh -c SCRIPT` (wire.h), whatever the login shell.
  ExecResult r = t->exec(request("sh -c 'kill -KILL $$'; exit $?"));
  CHECK(r.exit_code == 137);  // /bin/sh survived: it reports 128+9 itself
  CHECK(r.signal == "");
  r = t->exec(request("exec sh -c 'kill -KILL $$'"));  // the process sshd waits for died: sshd sees the signal
  CHECK(r.signal == "KILL");
  CHECK(r.exit_code == -1);
  r = t->exec(request("kill -KILL $$"));
  CHECK(r.signal == "KILL");
  CHECK(r.exit_code == -1);
  CHECK_FALSE(r.timed_out);
  r = t->exec(wired("kill -TERM $$", 5000));  // through the wrapper: still the signal
  CHECK(r.signal == "TERM");
  CHECK(r.exit_code == -1);
  CHECK_FALSE(r.timed_out);
}

TEST_CASE("ssh: several commands share one session", "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host;
  auto t = connected(in_mode(host.endpoint(), mode));
  std::string first_sshd;
  for (int i = 0; i < 20; ++i) {
    ExecResult r = t->exec(request("echo $i" + std::to_string(i) + " $PPID"));
    std::istringstream in(r.out.data);
    std::string word, sshd;
    in >> word >> sshd;
    CHECK(r.exit_code == 0);
    if (i == 0) first_sshd = sshd;
    CHECK(sshd == first_sshd);  // the same sshd session process each time
  }
}

TEST_CASE("ssh: finished channels are closed on both sides (MaxSessions 2, 12 commands)", "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host("SSHD_MAX_SESSIONS=2");
  auto t = connected(in_mode(host.endpoint(), mode));
  for (int i = 0; i < 12; ++i) {
    ExecResult r = t->exec(request("echo " + std::to_string(i)));
    CHECK(r.error == "");
    CHECK(r.out.data == std::to_string(i) + "\n");
  }
  // Even channels given up at the client deadline, and the watchdog's, are
  // released once the command ends: a session slot comes back each time (under
  // load sshd may take a moment; a leak never gives it back).
  for (int i = 0; i < 3; ++i) {
    REQUIRE(ratchet::testing::eventually([&] { return t->exec(request("true")).error == ""; }, 5000));
    CHECK(t->exec(wired("sleep 5", 300)).error == "");
  }
  REQUIRE(ratchet::testing::eventually([&] { return t->exec(request("true")).error == ""; }, 5000));
}

TEST_CASE("ssh: the host deadline ends a command and its children", "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host;
  auto t = connected(in_mode(host.endpoint(), mode));
  const std::string pid_file = host.dir() + "/pids";
  auto start = std::chrono::steady_clock::now();
  ExecResult r = t->exec(wired("sleep 30 & echo $$ $! > " + pid_file + "; wait", 1000));
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(took < std::chrono::seconds(5));
  CHECK(r.ms >= 1000);
  CHECK(r.signal == "TERM");
  CHECK(r.exit_code == -1);
  CHECK(r.timed_out);
  CHECK(r.error == "");
  auto pids = read_pids(pid_file);
  REQUIRE(pids.size() == 2);
  for (pid_t p : pids) CHECK(ratchet::testing::wait_pid_gone(p, 3000));
}

TEST_CASE("ssh: a background child holding stdout is named and left running after the drain grace", "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host;
  auto t = connected(in_mode(host.endpoint(), mode));
  const std::string pid_file = host.dir() + "/bg";
  ExecResult r = t->exec(wired("sleep 30 & echo $! > " + pid_file + "; echo hi", 20'000));
  auto pids = read_pids(pid_file);
  REQUIRE(pids.size() == 1);
  CHECK(r.out.data == "hi\n");
  CHECK(r.exit_code == 0);
  CHECK(r.signal == "");
  CHECK_FALSE(r.timed_out);
  CHECK(r.ms >= 2000);  // the drain grace
  CHECK(r.ms < 10'000);  // not the 20 s timeout
  // Never armed on a channel for a command that had ended (its exit status
  // came); a session shell says so only after the grace, which ends with the
  // 2 s arm_after(20 s): the watchdog may start, find the command gone, leave.
  if (mode == ExecMode::channel) CHECK(r.watchdog == "");
  else CHECK((r.watchdog == "" || r.watchdog == "armed"));
  CHECK(r.warning == "output still held open 2s after the command exited, by PID " + std::to_string(pids[0]) +
                         " (sleep): left running, not waited for");
  CHECK(ratchet::testing::pid_alive(pids[0]));
  ::kill(pids[0], SIGTERM);
  CHECK(ratchet::testing::wait_pid_gone(pids[0], 3000));
  // The session still works afterwards.
  CHECK(t->exec(wired("echo again", 5000)).out.data == "again\n");
}

TEST_CASE("ssh: the client deadline stops waiting on an unwrapped command", "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host;
  auto t = connected(in_mode(host.endpoint(), mode));
  ExecResult r = t->exec(request("echo started; sleep 3", 1000));
  CHECK(r.timed_out);
  CHECK(r.exit_code == -1);
  CHECK(r.out.data == "started\n");
  CHECK(r.ms >= 1000);
  CHECK(r.ms < 2500);
  CHECK(t->exec(request("echo next")).out.data == "next\n");
}

TEST_CASE("ssh: 4 MiB of stdin arrive intact, also while output streams back", "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host;
  auto t = connected(in_mode(host.endpoint(), mode));
  std::string data;
  data.reserve(4 << 20);
  for (size_t i = 0; data.size() < (4u << 20); ++i) data += std::to_string(i * 7919) + '\n';
  data.resize(4 << 20);
  ExecRequest req = request("sha256sum", 30'000);
  req.stdin_data = data;
  ExecResult r = t->exec(req);
  CHECK(r.exit_code == 0);
  CHECK(r.out.data == util::sha256_hex(data) + "  -\n");

  req = wired("sha256sum", 30'000);  // the wrapper hands the channel's stdin to the command
  req.stdin_data = data;
  r = t->exec(req);
  CHECK(r.exit_code == 0);
  CHECK(r.out.data == util::sha256_hex(data) + "  -\n");

  req = request("cat; echo done >&2", 30'000);  // echoes everything back while we still write
  req.stdin_data = data;
  req.capture = 8 << 20;
  r = t->exec(req);
  CHECK(r.exit_code == 0);
  CHECK(r.out.total == data.size());
  CHECK((r.out.data == data));
  CHECK(r.err.data == "done\n");
}

TEST_CASE("ssh: a command that ignores its stdin does not hang the writer", "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host;
  auto t = connected(in_mode(host.endpoint(), mode));
  ExecRequest req = request("echo quick", 10'000);
  req.stdin_data = std::string(8 << 20, 'x');
  ExecResult r = t->exec(req);
  CHECK(r.out.data == "quick\n");
  CHECK(r.exit_code == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(r.error == "");
}

TEST_CASE("ssh: the capture cap keeps head and tail and counts what it dropped", "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host;
  auto t = connected(in_mode(host.endpoint(), mode));
  std::string expected;
  for (int i = 1; i <= 20000; ++i) expected += std::to_string(i) + '\n';
  ExecRequest req = request("seq 1 20000; seq 1 20000 >&2");
  req.capture = 1000;
  ExecResult r = t->exec(req);
  const unsigned long long dropped = expected.size() - 1000;
  const std::string kept =
      expected.substr(0, 500) + capture_marker(dropped) + expected.substr(expected.size() - 500);
  CHECK(r.out.total == expected.size());
  CHECK(r.out.dropped == dropped);
  CHECK(r.out.data == kept);
  CHECK(r.err.data == kept);
  CHECK(capture_marker(dropped) == "\n[ratchet: " + std::to_string(dropped) + " bytes dropped]\n");
}

TEST_CASE("ssh: a lost connection is an ExecResult error, not a hang or a throw", "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host;
  auto t = connected(in_mode(host.endpoint(), mode));
  // The sshd process serving this connection (a child of the sshd this test
  // started) is the command's parent on a channel, the session shell's on a
  // session (field 4 of its stat): killing it drops the connection.
  ExecResult r = t->exec(request(mode == ExecMode::channel ? "echo $PPID" : "read -r _ _ _ p _ </proc/$PPID/stat; echo $p"));
  pid_t session_sshd = std::stoi(r.out.data);
  REQUIRE(session_sshd > 1);
  REQUIRE(ratchet::testing::run_local("cat /proc/" + std::to_string(session_sshd) + "/cmdline")
              .find("sshd") != std::string::npos);
  REQUIRE(::kill(session_sshd, SIGKILL) == 0);
  auto start = std::chrono::steady_clock::now();
  r = t->exec(request("echo unreachable", 3000));
  CHECK(r.error.find("127.0.0.1:" + std::to_string(host.port()) + ": ") == 0);
  CHECK(r.out.data == "");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(6));
  t->close();
  t->close();
}

namespace {

/// True while a watchdog for remote pid `pid` runs on this machine (the hosts
/// are local): its argv ends "ratchet PID PGID TICKS MS".
bool watchdog_running(long pid) {
  std::string needle = std::string("\0ratchet\0", 9) + std::to_string(pid) + std::string("\0", 1);
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::ifstream f(e.path() / "cmdline");
    std::string argv((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (argv.find("alive()") != std::string::npos && argv.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("ssh: the wrapper's pid line is taken out of stderr and names the command's process",
          "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host;
  auto t = connected(in_mode(host.endpoint(), mode));
  ExecResult r = t->exec(wired("echo $$; echo oops >&2; exit 4", 10'000));
  CHECK(r.exit_code == 4);
  CHECK(r.err.data == "oops\n");
  REQUIRE(r.remote_pid > 1);
  CHECK(r.out.data == std::to_string(r.remote_pid) + "\n");  // exec keeps the PID down to the command
  CHECK(r.watchdog == "");  // done well before arm_after: no watchdog was needed
  // An unwrapped command's stderr is left as it is, even a look-alike line
  // (the session shell wraps every command: its own pid line is taken out).
  r = t->exec(request("echo '[ratchet-pid] 1 1 1' >&2"));
  CHECK(r.err.data == "[ratchet-pid] 1 1 1\n");
  CHECK((r.remote_pid == 0) == (mode == ExecMode::channel));
}

TEST_CASE("ssh: a long command gets its watchdog, which leaves once the command is done", "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host;
  auto t = connected(in_mode(host.endpoint(), mode));
  ExecResult r = t->exec(wired("sleep 1.2; echo done", 5'000));  // armed at 0.5 s
  CHECK(r.out.data == "done\n");
  CHECK(r.exit_code == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(r.watchdog == "armed");
  REQUIRE(r.remote_pid > 1);
  CHECK(ratchet::testing::eventually([&] { return !watchdog_running(r.remote_pid); }, 3000));
}

TEST_CASE("ssh: cancel stops the remote command and its children, also for a root login", "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);  // the same on both
  SshdHost host;  // user root: sshd refuses signal requests for root sessions
  auto t = connected(in_mode(host.endpoint(), mode));
  const std::string pid_file = host.dir() + "/cancel-pids";
  std::atomic<bool> cancel{false};
  ExecRequest req = wired("sleep 60 & echo $$ $! > " + pid_file + "; wait", 60'000);
  req.cancel = &cancel;
  std::thread stopper([&] {
    ratchet::testing::eventually([&] { return read_pids(pid_file).size() == 2; }, 10'000);
    cancel = true;
  });
  auto start = std::chrono::steady_clock::now();
  ExecResult r = t->exec(req);
  stopper.join();
  CHECK(r.error == "interrupted");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  CHECK(r.watchdog == "armed");
  auto pids = read_pids(pid_file);
  REQUIRE(pids.size() == 2);
  for (pid_t p : pids) CHECK(ratchet::testing::wait_pid_gone(p, 5000));
  CHECK(t->exec(wired("echo after", 5000)).out.data == "after\n");  // the session goes on
}

TEST_CASE("ssh: a silent command outlives sshd's ClientAliveInterval 1 and CountMax 1 (keepalives answered, R25)",
          "[ssh]") {
  const ExecMode mode = GENERATE(ExecMode::channel, ExecMode::session);
  SshdHost sshd("EXTRA_SSHD_CONFIG='ClientAliveInterval 1\\nClientAliveCountMax 1'");
  auto t = connected(in_mode(sshd.endpoint(), mode));
  // Four intervals of silence: sshd asks keepalive@openssh.com each second and
  // drops the client after one unanswered request.
  ExecResult r = t->exec(wired("sleep 4; echo done", 20'000));
  INFO(r.error << r.err.data);
  CHECK(r.error.empty());
  CHECK(r.exit_code == 0);
  CHECK(r.out.data == "done\n");
  CHECK(t->connected());
}
