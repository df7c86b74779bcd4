// sshd's `MaxSessions 1` (issue 26, item 4): the session shell takes the
// only session a connection may have, so nothing may need a second channel.
// The deadline and ^C reach a command that `exec`s and starts a `setsid`
// child through the shell's own channel (its guard, session.sh); copy and
// fetch, which stream on a channel of their own, get the slot the idle shell
// gives back. On `--transport channel` no second channel opens while the
// command's own is open: the run wrapper's own watchdog on the host holds the
// deadline, and ends the command once ratchet's connection is gone (^C).
// Everything runs against a real sshd on 127.0.0.1 and kills only what the
// test started, by PID.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "support/transcript_events.h"
#include "transcript/reader.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

struct Lab {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-one-session");
  std::string inv = dir + "/inventory.toml";
  std::string pids = dir + "/pids";
  std::string transcript = dir + "/t.jsonl";
  std::string transport;  ///< "" = the default; else --transport's value

  explicit Lab(const std::string& sshd_env = "SSHD_MAX_SESSIONS=1") : sshd(sshd_env) {
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
  }
  ~Lab() {
    for (pid_t p : listed()) ::kill(p, SIGKILL);  // only if a test failed: ours, by PID
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string playbook(const std::string& body) {
    std::string p = dir + "/p.toml";
    std::ofstream(p) << "name = \"one-session\"\n" << body;
    return p;
  }
  std::string args(const std::string& pb) const {
    return " run " + pb + " -i " + inv + " -F none --transcript " + transcript + " --artifacts " + dir + "/art" +
           (transport.empty() ? "" : " --transport " + transport);
  }
  /// The PIDs the step wrote: its own shell (which `exec`s) and a `setsid` child.
  std::vector<pid_t> listed() const {
    std::ifstream in(pids);
    std::vector<pid_t> out;
    for (pid_t p; in >> p;) out.push_back(p);
    return out;
  }
};

/// A step whose command is what services do: a child in a session of its own,
/// then `exec` (the argv the shell had is gone).
std::string exec_step(const std::string& pids, const std::string& extra) {
  return "[[step]]\nid = \"server\"\nkind = \"run\"\n" + extra +
         "command = \"setsid sleep 300 & echo $! >> " + pids + "; echo $$ >> " + pids + "; exec sleep 300\"\n";
}

/// As exec_step, with the child double-forked: `setsid` started from a
/// subshell that has exited (the child's parent is gone before the deadline).
std::string double_fork_step(const std::string& pids, const std::string& extra) {
  return "[[step]]\nid = \"server\"\nkind = \"run\"\n" + extra + "command = \"(setsid sleep 300 & echo $! >> " +
         pids + "); echo $$ >> " + pids + "; exec sleep 300\"\n";
}

}  // namespace

TEST_CASE("one session: on the channel path under MaxSessions 1 the deadline ends a command that execs and its "
          "double-forked setsid child",
          "[ssh][session]") {
  Lab lab;
  lab.transport = "channel";
  std::string pb = lab.playbook(double_fork_step(lab.pids, "timeout = \"2s\"\n") +
                                "[[step]]\nid = \"after\"\nkind = \"run\"\ncommand = \"true\"\n");
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_sh(RATCHET_BINARY + lab.args(pb));
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(8));
  auto list = lab.listed();
  REQUIRE(list.size() == 2);
  for (pid_t p : list) CHECK(wait_pid_gone(p, 5000));
  auto tr = ratchet::transcript::read_transcript(lab.transcript);
  auto exits = events_named(tr, "exit");
  REQUIRE(exits.size() == 1);
  CHECK(exits[0]["timed_out"] == true);
  CHECK(exits[0]["signal"] == "TERM");  // the host's deadline, not the client's
  CHECK(exits[0]["watchdog"] == "on host");  // no second channel opened: the wrapper's own watchdog
  auto ends = events_named(tr, "step_end");
  REQUIRE(ends.size() == 2);  // after: skipped
  CHECK(ends[0]["step"] == "server");
  CHECK(ends[0].value("reason", "") == "timed out");  // not "it may still run on the host"
}

TEST_CASE("one session: on the channel path under MaxSessions 1 ^C ends a command that execs and its double-forked "
          "setsid child",
          "[ssh][session]") {
  Lab lab;
  lab.transport = "channel";
  std::string pb = lab.playbook(double_fork_step(lab.pids, "timeout = \"5m\"\n"));
  BackgroundRatchet bg(lab.dir, lab.args(pb));
  REQUIRE(eventually([&] { return lab.listed().size() == 2; }));
  auto t0 = std::chrono::steady_clock::now();
  ::kill(bg.pid, SIGINT);
  int status = bg.wait();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(6));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  // ratchet's connection is gone: the watchdog the wrapper started ends both.
  for (pid_t p : lab.listed()) CHECK(wait_pid_gone(p, 5000));
  auto tr = ratchet::transcript::read_transcript(lab.transcript);
  auto exits = events_named(tr, "exit");
  REQUIRE(exits.size() == 1);
  CHECK(exits[0]["error"] == "interrupted");
  CHECK(exits[0]["watchdog"] == "on host");
  REQUIRE_FALSE(tr.events.empty());
  CHECK(tr.events.back()["event"] == "run_end");
  CHECK(tr.events.back()["status"] == "interrupted");
}

TEST_CASE("one session: ratchet exec under MaxSessions 1 ^C ends a command that execs and its double-forked setsid "
          "child",
          "[ssh][session]") {
  Lab lab;
  // exec's default transport is the channel path.
  BackgroundRatchet bg(lab.dir, " exec box -i " + lab.inv + " -F none --timeout 5m -- '(setsid sleep 300 & echo $! >> " +
                                    lab.pids + "); echo $$ >> " + lab.pids + "; exec sleep 300'");
  REQUIRE(eventually([&] { return lab.listed().size() == 2; }));
  ::kill(bg.pid, SIGINT);
  int status = bg.wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  std::ifstream err(bg.err);
  std::stringstream said;
  said << err.rdbuf();
  CHECK(said.str().find("box: interrupted; the remote command ends as ratchet's connection closes") !=
        std::string::npos);
  for (pid_t p : lab.listed()) CHECK(wait_pid_gone(p, 5000));
}

TEST_CASE("one session: under MaxSessions 1 the deadline ends a command that execs and its setsid child",
          "[ssh][session]") {
  Lab lab;
  std::string pb = lab.playbook(exec_step(lab.pids, "timeout = \"2s\"\n") +
                                "[[step]]\nid = \"after\"\nkind = \"run\"\ncommand = \"true\"\n");
  auto r = run_sh(RATCHET_BINARY + lab.args(pb));
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  auto list = lab.listed();
  REQUIRE(list.size() == 2);
  for (pid_t p : list) CHECK(wait_pid_gone(p, 5000));
  auto tr = ratchet::transcript::read_transcript(lab.transcript);
  auto exits = events_named(tr, "exit");
  REQUIRE(exits.size() == 1);
  CHECK(exits[0]["timed_out"] == true);
  CHECK(exits[0]["signal"] == "TERM");
  CHECK(exits[0]["watchdog"] == "armed");  // in band: no second channel was there to open
}

TEST_CASE("one session: under MaxSessions 1 ^C ends a command that execs and its setsid child", "[ssh][session]") {
  Lab lab;
  std::string pb = lab.playbook(exec_step(lab.pids, ""));
  BackgroundRatchet bg(lab.dir, lab.args(pb));
  REQUIRE(eventually([&] { return lab.listed().size() == 2; }));
  auto t0 = std::chrono::steady_clock::now();
  ::kill(bg.pid, SIGINT);
  int status = bg.wait();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(6));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  for (pid_t p : lab.listed()) CHECK(wait_pid_gone(p, 5000));
  auto tr = ratchet::transcript::read_transcript(lab.transcript);
  CHECK(tr.note == "");
  auto exits = events_named(tr, "exit");
  REQUIRE(exits.size() == 1);
  CHECK(exits[0]["watchdog"] == "armed");
  REQUIRE_FALSE(tr.events.empty());
  CHECK(tr.events.back()["event"] == "run_end");
  CHECK(tr.events.back()["status"] == "interrupted");
}

TEST_CASE("one session: under MaxSessions 1 copy and fetch run between session shell commands", "[ssh][session]") {
  Lab lab;
  lab.transport = GENERATE("", "channel");  // on the channel path too: one channel at a time
  INFO("transport " << lab.transport);
  std::filesystem::create_directories(lab.dir + "/src");
  std::ofstream(lab.dir + "/src/notes.md") << "production notes\n";
  const std::string dest = lab.dir + "/dest";
  std::string pb = lab.playbook(
      "[[step]]\nid = \"before\"\nkind = \"run\"\ncommand = \"echo before\"\n"
      "[[step]]\nid = \"put\"\nkind = \"copy\"\nsrc = \"src\"\ndest = \"" + dest + "\"\n"
      "[[step]]\nid = \"between\"\nkind = \"run\"\ncommand = \"cat " + dest + "/notes.md\"\n"
      "[[step]]\nid = \"get\"\nkind = \"fetch\"\nsrc = \"" + dest + "/notes.md\"\n"
      "[[step]]\nid = \"after\"\nkind = \"run\"\ncommand = \"echo after\"\n");
  auto r = run_sh(RATCHET_BINARY + lab.args(pb));
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  std::ifstream copied(dest + "/notes.md");
  std::string line;
  CHECK(std::getline(copied, line));
  CHECK(line == "production notes");
  std::ifstream fetched(lab.dir + "/art/box" + dest + "/notes.md");
  CHECK(std::getline(fetched, line));
  CHECK(line == "production notes");
  auto tr = ratchet::transcript::read_transcript(lab.transcript);
  auto ends = events_named(tr, "step_end");
  REQUIRE(ends.size() == 5);
  for (const auto& e : ends) CHECK(e["status"] != "failed");
}

TEST_CASE("one session: under MaxSessions 1 a command that kills its session shell is still ended", "[ssh][session]") {
  Lab lab;
  std::string pb = lab.playbook("[[step]]\nid = \"breaker\"\nkind = \"run\"\ntimeout = \"30s\"\n"
                                "on_failure = \"continue\"\ncommand = \"echo $$ >> " + lab.pids +
                                "; kill -9 $PPID; exec sleep 300\"\n"
                                "[[step]]\nid = \"after\"\nkind = \"run\"\ncommand = \"echo after\"\n");
  auto r = run_sh(RATCHET_BINARY + lab.args(pb));
  INFO(r.out << r.err);
  auto list = lab.listed();
  REQUIRE(list.size() == 1);
  CHECK(wait_pid_gone(list[0], 5000));
  auto tr = ratchet::transcript::read_transcript(lab.transcript);
  auto exits = events_named(tr, "exit");
  REQUIRE(exits.size() == 2);
  CHECK(exits[0]["error"].get<std::string>().find("the session shell ended during the command") != std::string::npos);
  CHECK(exits[0]["watchdog"] == "armed");  // its channel, asked for again once sshd let the shell's session go
  CHECK(exits[1]["code"] == 0);
}

/// A command line that removes the session shell's directory (the one its
/// stderr, DIR/e, is in), and nothing else.
const std::string kRemoveSessionDir =
    "d=$(dirname \\\"$(readlink /proc/$$/fd/2)\\\"); case $d in */ratchet-session.*) rm -rf \\\"$d\\\";; esac; ";

TEST_CASE("one session: a command that removes the session shell's directory is still ended and the next steps run",
          "[ssh][session]") {
  const std::string sessions = GENERATE("1", "100");
  Lab lab("SSHD_MAX_SESSIONS=" + sessions);
  INFO("MaxSessions " << sessions);
  // clean removes the directory and ends; server removes the one of the shell
  // it runs in (a fresh one), then runs past its deadline; after runs.
  std::string pb = lab.playbook(
      "[[step]]\nid = \"clean\"\nkind = \"run\"\ncommand = \"" + kRemoveSessionDir + "echo removed\"\n" +
      "[[step]]\nid = \"server\"\nkind = \"run\"\ntimeout = \"2s\"\non_failure = \"continue\"\ncommand = \"" +
      kRemoveSessionDir + "setsid sleep 300 & echo $! >> " + lab.pids + "; echo $$ >> " + lab.pids +
      "; exec sleep 300\"\n" + "[[step]]\nid = \"after\"\nkind = \"run\"\ncommand = \"echo after\"\n");
  auto r = run_sh(RATCHET_BINARY + lab.args(pb));
  INFO(r.out << r.err);
  auto list = lab.listed();
  REQUIRE(list.size() == 2);
  for (pid_t p : list) CHECK(wait_pid_gone(p, 5000));
  auto tr = ratchet::transcript::read_transcript(lab.transcript);
  auto ends = events_named(tr, "step_end");
  REQUIRE(ends.size() == 3);
  CHECK(ends[0]["status"] == "changed");
  CHECK(ends[1]["status"] == "failed");  // past its deadline
  CHECK(ends[2]["status"] == "changed");
  auto exits = events_named(tr, "exit");
  REQUIRE(exits.size() == 3);
  // server never started in clean's shell: it ran in a fresh one, and says so.
  CHECK(exits[1].value("warning", "").find("directory had been removed") != std::string::npos);
  CHECK(exits[1]["timed_out"] == true);
  CHECK(exits[1]["signal"] == "TERM");
  CHECK(exits[2]["code"] == 0);
}

TEST_CASE("one session: under MaxSessions 1 ^C during an upload leaves no temporary file on the host",
          "[ssh][session]") {
  Lab lab;
  lab.transport = GENERATE("", "channel");
  INFO("transport " << lab.transport);
  std::filesystem::create_directories(lab.dir + "/src");
  std::filesystem::create_directories(lab.dir + "/dest");
  // Big enough to be cut mid-way on loopback (the upload streams at some 100 MB/s).
  REQUIRE(run_sh("head -c 400000000 /dev/zero > " + lab.dir + "/src/big.bin").code == 0);
  std::string pb = lab.playbook("[[step]]\nid = \"put\"\nkind = \"copy\"\nsrc = \"src/big.bin\"\ndest = \"" + lab.dir +
                                "/dest/big.bin\"\n");
  BackgroundRatchet bg(lab.dir, lab.args(pb));
  auto temp_there = [&] {
    for (const auto& e : std::filesystem::directory_iterator(lab.dir + "/dest"))
      if (e.path().filename().string().rfind(".ratchet-copy.", 0) == 0) return true;
    return false;
  };
  REQUIRE(eventually(temp_there));  // the upload is under way
  ::kill(bg.pid, SIGINT);
  int status = bg.wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  // The host's side saw its input cut short and its streams closed (SIGPIPE):
  // it removes its temporary file, and installs nothing.
  CHECK(eventually([&] { return !temp_there(); }));
  CHECK_FALSE(std::filesystem::exists(lab.dir + "/dest/big.bin"));
  std::filesystem::remove(lab.dir + "/src/big.bin");
}
