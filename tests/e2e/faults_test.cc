// Faults during a run, against real hosts (issue 4): a session an action drops,
// sshd dying mid-step, the network path going down, a command hanging past its
// timeout, SIGINT/SIGTERM/SIGKILL of ratchet, and a full transcript disk. Each
// test checks what ratchet did (exit code, transcript, the remote processes),
// and kills only processes it started itself, by PID.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/local_proc.h"
#include "support/netns_fixture.h"
#include "support/sshd_fixture.h"
#include "support/transcript_events.h"
#include "transcript/reader.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

struct Lab {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-faults");
  std::string inv = dir + "/inventory.toml";

  explicit Lab(const std::string& sshd_prefix = "") : sshd(sshd_prefix) {
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
  }
  ~Lab() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string playbook(const std::string& body) {
    std::string p = dir + "/p.toml";
    std::ofstream(p) << "name = \"faults\"\n" << body;
    return p;
  }
  std::string transport = "session";  ///< --transport: the default, or "channel"
  std::string args(const std::string& pb, const std::string& transcript) const {
    return " run " + pb + " -i " + inv + " -F none --transport " + transport + " --transcript " + transcript;
  }
};

std::string file_text(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::vector<pid_t> pids_in(const std::string& path) {
  std::istringstream in(file_text(path));
  std::vector<pid_t> out;
  for (pid_t p; in >> p;) out.push_back(p);
  return out;
}

/// A command line that sets p to the sshd process serving this connection: the
/// command's parent on a channel, the session shell's on a session.
const std::string kServingSshd =
    "p=$PPID; while read -r _ c _ q _ </proc/$p/stat && [ $c != '(sshd)' ]; do p=$q; done; ";

/// The ratchet binary started in the background, stdout/stderr to files; the
/// destructor SIGKILLs and reaps it if the test did not.
using Bg = BackgroundRatchet;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("faults: an action that drops its own session is verified after a reconnect",
          "[ssh][faults]") {
  Lab lab;
  lab.transport = GENERATE("session", "channel");
  const std::string mark = lab.dir + "/applied";
  // The action applies its change, then kills the sshd process serving this
  // connection (its parent on a channel, the session shell's on a session):
  // the session drops as when sshd restarts.
  std::string pb = lab.playbook("[[step]]\nid = \"apply\"\nkind = \"run\"\ncommand = \"touch " + mark +
                                "; " + kServingSshd + "kill -KILL $p; sleep 5\"\ncheck = \"test -f " + mark +
                                "\"\n[[step]]\nid = \"after\"\nkind = \"run\"\ncommand = \"echo still here\"\n");
  std::string t = lab.dir + "/t.jsonl";
  auto r = run_sh(RATCHET_BINARY + lab.args(pb, t));
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  auto tr = ratchet::transcript::read_transcript(t);
  auto rec = events_named(tr, "reconnect");
  REQUIRE(rec.size() == 1);
  CHECK(rec[0]["ok"] == true);
  CHECK(rec[0]["step"] == "apply");
  auto ends = events_named(tr, "step_end");
  REQUIRE(ends.size() == 2);
  CHECK(ends[0]["step"] == "apply");
  CHECK(ends[0]["status"] == "changed");  // the check after the reconnect passed
  CHECK(ends[1]["status"] == "changed");
  // The action's own exit names the drop; the later step ran on the new session.
  bool lost_seen = false;
  std::string exits;
  for (const auto& e : events_named(tr, "exit")) {
    exits += e.dump() + "\n";
    if (e["step"] == "apply" && e.value("error", "").find("connection lost") != std::string::npos) lost_seen = true;
  }
  INFO(exits);
  CHECK(lost_seen);
  CHECK(tr.events.back()["event"] == "run_end");
  CHECK(tr.events.back()["status"] == "ok");
  auto show = run_sh(std::string(RATCHET_BINARY) + " show " + t);
  CHECK(show.out.find("error: 127.0.0.1:" + std::to_string(lab.sshd.port()) + ": connection lost") !=
        std::string::npos);
  CHECK(show.out.find("reconnected (attempt 1, after ") != std::string::npos);
}

TEST_CASE("faults: sshd dies mid-step: the step fails, reconnecting is bounded, the transcript ends cleanly",
          "[ssh][faults]") {
  Lab lab;
  const std::string session = lab.dir + "/session";
  const std::string later = lab.dir + "/later";
  std::string pb = lab.playbook("[[step]]\nid = \"long\"\nkind = \"run\"\ncommand = \"" + kServingSshd + "echo $p > " + session +
                                "; sleep 30\"\ncheck = \"false\"\n[[step]]\nid = \"later\"\nkind = \"run\"\n"
                                "command = \"touch " + later + "\"\n");
  std::string t = lab.dir + "/t.jsonl";
  Bg bg(lab.dir, lab.args(pb, t) + " --reconnect-timeout 2s");
  REQUIRE(eventually([&] { return pids_in(session).size() == 1; }));
  auto t0 = std::chrono::steady_clock::now();
  // Both are this test's: the sshd it started, and that sshd's child serving the run.
  REQUIRE(kill(lab.sshd.pid(), SIGKILL) == 0);
  REQUIRE(kill(pids_in(session)[0], SIGKILL) == 0);
  int status = bg.wait();
  double secs = seconds_since(t0);
  INFO(file_text(bg.out) << file_text(bg.err));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(secs < 10);  // the 2 s reconnect window, not the 30 s sleep
  CHECK_FALSE(std::filesystem::exists(later));
  auto tr = ratchet::transcript::read_transcript(t);
  CHECK(tr.note == "");
  auto rec = events_named(tr, "reconnect");
  REQUIRE_FALSE(rec.empty());
  for (const auto& e : rec) CHECK(e["ok"] == false);
  // The first try may still meet the dying sshd (a reset: "other"); the last finds nothing listening.
  INFO(rec.back().dump());
  CHECK(rec.back()["cause"] == "refused");
  auto host_end = events_named(tr, "host_end");
  REQUIRE(host_end.size() == 1);
  CHECK(host_end[0]["status"] == "failed");
  CHECK(host_end[0]["reason"].get<std::string>().find("reconnecting failed") != std::string::npos);
  CHECK(tr.events.back()["event"] == "run_end");
  CHECK(file_text(bg.out).find("reconnecting failed") != std::string::npos);  // the recap says why
}

TEST_CASE("faults: a command hanging past its timeout is ended on the host, with its children",
          "[ssh][faults]") {
  Lab lab;
  lab.transport = GENERATE("session", "channel");
  const std::string pids = lab.dir + "/pids";
  std::string pb = lab.playbook("[[step]]\nid = \"hang\"\nkind = \"run\"\ntimeout = \"1s\"\ncommand = \"sleep 60 & echo $$ $! > " +
                                pids + "; wait\"\n");
  std::string t = lab.dir + "/t.jsonl";
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_sh(RATCHET_BINARY + lab.args(pb, t));
  CHECK(r.code == 1);
  CHECK(seconds_since(t0) < 8);
  auto tr = ratchet::transcript::read_transcript(t);
  auto exits = events_named(tr, "exit");
  REQUIRE(exits.size() == 1);
  CHECK(exits[0]["timed_out"] == true);
  CHECK(exits[0]["signal"] == "TERM");
  CHECK(exits[0]["watchdog"] == "armed");
  auto list = pids_in(pids);
  REQUIRE(list.size() == 2);
  for (pid_t p : list) CHECK(wait_pid_gone(p, 3000));
}

TEST_CASE("faults: the network path drops mid-step: ratchet gives up in bounded time, the host still ends the command",
          "[ssh][faults][netns]") {
  NetNs ns;
  Lab lab(ns.exec_prefix());
  const std::string pids = lab.dir + "/pids";
  std::string pb = lab.playbook("[[step]]\nid = \"cut\"\nkind = \"run\"\ntimeout = \"3s\"\ncommand = \"sleep 60 & echo $! > " +
                                pids + "; wait\"\n");
  std::string t = lab.dir + "/t.jsonl";
  // ratchet runs inside the namespace too, so taking its loopback down cuts the path.
  pid_t pid = fork();
  if (pid == 0) {
    int o = open((lab.dir + "/ns.out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(o, 1);
    dup2(o, 2);
    execl("/bin/sh", "sh", "-c",
          ("exec " + ns.exec_prefix() + " " + RATCHET_BINARY + lab.args(pb, t) + " --reconnect-timeout 2s").c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  REQUIRE(eventually([&] { return pids_in(pids).size() == 1; }));
  usleep(1'000'000);  // past arm_after (0.5 s for 3 s): the host-side watchdog is armed before the cut
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(run_sh(ns.exec_prefix() + " ip link set lo down").code == 0);
  int status = 0;
  bool done = eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 40'000);
  if (!done) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  double secs = seconds_since(t0);
  INFO(file_text(lab.dir + "/ns.out"));
  CHECK(done);
  CHECK(secs < 30);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  // The host's own deadline (3 s) ended the command although the client was cut off.
  auto list = pids_in(pids);
  REQUIRE(list.size() == 1);
  CHECK(wait_pid_gone(list[0], 5000));
  auto tr = ratchet::transcript::read_transcript(t);
  CHECK(tr.note == "");
  auto ends = events_named(tr, "step_end");
  REQUIRE(ends.size() == 1);
  CHECK(ends[0]["status"] == "failed");
  CHECK(tr.events.back()["event"] == "run_end");
  run_sh(ns.exec_prefix() + " ip link set lo up");
}

TEST_CASE("faults: SIGINT and SIGTERM stop the remote command, close the transcript and exit 130",
          "[ssh][faults]") {
  const std::string transport = GENERATE("session", "channel");
  for (int sig : {SIGINT, SIGTERM}) {
    DYNAMIC_SECTION("signal " << sig) {
      Lab lab;
      lab.transport = transport;
      const std::string pids = lab.dir + "/pids";
      std::string pb = lab.playbook("[[step]]\nid = \"slow\"\nkind = \"run\"\ncommand = \"sleep 60 & echo $$ $! > " +
                                    pids + "; wait\"\n[[step]]\nid = \"after\"\nkind = \"run\"\ncommand = \"true\"\n");
      std::string t = lab.dir + "/t.jsonl";
      Bg bg(lab.dir, lab.args(pb, t));
      REQUIRE(eventually([&] { return pids_in(pids).size() == 2; }));
      auto t0 = std::chrono::steady_clock::now();
      kill(bg.pid, sig);
      int status = bg.wait();
      CHECK(seconds_since(t0) < 5);
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 130);
      // The remote command and its child are gone although the login is root
      // (sshd refuses signal requests for root): ratchet stopped their group.
      for (pid_t p : pids_in(pids)) CHECK(wait_pid_gone(p, 5000));
      auto tr = ratchet::transcript::read_transcript(t);
      CHECK(tr.note == "");
      REQUIRE_FALSE(tr.events.empty());
      CHECK(tr.events.back()["event"] == "run_end");
      CHECK(tr.events.back()["status"] == "interrupted");
      CHECK(file_text(t).find("\"step\":\"after\"") == std::string::npos);
    }
  }
}

TEST_CASE("faults: a second ^C leaves at once, and the transcript still reads cleanly", "[ssh][faults]") {
  Lab lab;
  lab.transport = GENERATE("session", "channel");
  const std::string pids = lab.dir + "/pids";
  std::string pb = lab.playbook("[[step]]\nid = \"slow\"\nkind = \"run\"\ncommand = \"echo $$ > " + pids +
                                "; sleep 60\"\n");
  std::string t = lab.dir + "/t.jsonl";
  Bg bg(lab.dir, lab.args(pb, t));
  REQUIRE(eventually([&] { return pids_in(pids).size() == 1; }));
  auto t0 = std::chrono::steady_clock::now();
  kill(bg.pid, SIGINT);
  kill(bg.pid, SIGINT);
  int status = bg.wait();
  CHECK(seconds_since(t0) < 5);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  auto tr = ratchet::transcript::read_transcript(t);
  CHECK(tr.error == "");
  CHECK_FALSE(tr.cut_off);
  REQUIRE_FALSE(tr.events.empty());
  CHECK(tr.events.front()["event"] == "run_start");
  // The remote command is stopped by its deadline at the latest; here its
  // watchdog was armed, so it goes as soon as the first ^C stopped it, or at 60 s.
  auto r = run_sh(std::string(RATCHET_BINARY) + " show " + t);
  CHECK(r.code == 0);
}

TEST_CASE("faults: ratchet SIGKILLed mid-run leaves a transcript that reads up to its last event",
          "[ssh][faults]") {
  Lab lab;
  const std::string pids = lab.dir + "/pids";
  std::string pb = lab.playbook("[[step]]\nid = \"one\"\nkind = \"run\"\ncommand = \"echo first\"\n"
                                "[[step]]\nid = \"two\"\nkind = \"run\"\ntimeout = \"3s\"\ncommand = \"echo $$ > " + pids +
                                "; sleep 60\"\n");
  std::string t = lab.dir + "/t.jsonl";
  Bg bg(lab.dir, lab.args(pb, t));
  REQUIRE(eventually([&] { return pids_in(pids).size() == 1; }));
  usleep(1'200'000);  // past arm_after (0.5 s for 3 s): the host-side watchdog of step two is armed
  kill(bg.pid, SIGKILL);
  bg.wait();
  auto tr = ratchet::transcript::read_transcript(t);
  CHECK(tr.error == "");
  CHECK_FALSE(tr.cut_off);  // every line ratchet wrote is whole: one write(2) per event
  CHECK(tr.note == "transcript has no run_end after " + std::to_string(tr.events.size()) +
                       " events: the run did not finish");
  REQUIRE(tr.events.size() >= 4);
  CHECK(tr.events.front()["event"] == "run_start");
  CHECK(tr.events.back()["event"] == "command");  // the last thing it did: send step two
  CHECK(tr.events.back()["step"] == "two");
  auto r = run_sh(std::string(RATCHET_BINARY) + " show " + t);
  CHECK(r.code == 0);
  CHECK(r.out.find("first") != std::string::npos);
  CHECK(r.err.find("ratchet: note: transcript has no run_end after") != std::string::npos);
  CHECK(r.out.find("→ no exit recorded: the run stopped here") != std::string::npos);
  // The host-side deadline (3 s) still ends the orphaned command.
  CHECK(wait_pid_gone(pids_in(pids)[0], 8000));
}

TEST_CASE("faults: a transcript that cannot be written runs nothing", "[ssh][faults]") {
  Lab lab;
  const std::string mark = lab.dir + "/ran";
  std::string pb = lab.playbook("[[step]]\nid = \"one\"\nkind = \"run\"\ncommand = \"touch " + mark + "\"\n");
  auto r = run_sh(RATCHET_BINARY + lab.args(pb, "/dev/full"));
  CHECK(r.code == 1);
  CHECK(r.err == "ratchet: error: cannot write transcript /dev/full: No space left on device (event run_start); "
                 "nothing was run (free space or pick another --transcript)\n");
  CHECK_FALSE(std::filesystem::exists(mark));
}

TEST_CASE("faults: the transcript disk fills mid-run: the step in flight ends, nothing later runs, it says so",
          "[ssh][faults]") {
  Lab lab;
  const std::string mnt = lab.dir + "/small";
  std::filesystem::create_directories(mnt);
  const std::string mark = lab.dir + "/third-ran";
  // Step two prints more than the small disk has left.
  std::string pb = lab.playbook("[[step]]\nid = \"first\"\nkind = \"run\"\ncommand = \"echo small\"\n"
                                "[[step]]\nid = \"second\"\nkind = \"run\"\ncommand = \"yes x | head -c 300000\"\n"
                                "[[step]]\nid = \"third\"\nkind = \"run\"\ncommand = \"touch " + mark + "\"\n");
  // A 128 KiB tmpfs in a mount namespace of this command only.
  auto r = run_sh("unshare -m sh -c 'mount -t tmpfs -o size=128k tmpfs " + mnt + " && exec " + RATCHET_BINARY +
                  lab.args(pb, mnt + "/t.jsonl") + "; rc=$?; cp " + mnt + "/t.jsonl " + lab.dir + "/t.jsonl; exit $rc'");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("ratchet: error: cannot write transcript " + mnt + "/t.jsonl: No space left on device") !=
        std::string::npos);
  CHECK(r.err.find("every host stopped before its next step") != std::string::npos);
  CHECK(r.out.find("stopped before step third") != std::string::npos);  // the recap
  CHECK_FALSE(std::filesystem::exists(mark));
}

TEST_CASE("faults: ^C during ratchet exec stops the remote command and exits 130", "[ssh][faults]") {
  Lab lab;
  lab.transport = GENERATE("session", "channel");
  const std::string pids = lab.dir + "/pids";
  Bg bg(lab.dir, " exec box -i " + lab.inv + " -F none --transport " + lab.transport + " -- 'sleep 60 & echo $$ $! > " +
                     pids + "; wait'");
  REQUIRE(eventually([&] { return pids_in(pids).size() == 2; }));
  kill(bg.pid, SIGINT);
  int status = bg.wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(file_text(bg.err).find("ratchet: box: interrupted; the remote command was stopped") != std::string::npos);
  for (pid_t p : pids_in(pids)) CHECK(wait_pid_gone(p, 5000));
}

TEST_CASE("faults: a reader that goes away (ratchet run | head) does not stop the run half way",
          "[ssh][faults]") {
  Lab lab;
  const std::string mark = lab.dir + "/last-ran";
  std::string pb = lab.playbook("[[step]]\nid = \"one\"\nkind = \"run\"\ncommand = \"echo one\"\n"
                                "[[step]]\nid = \"two\"\nkind = \"run\"\ncommand = \"sleep 1\"\n"
                                "[[step]]\nid = \"three\"\nkind = \"run\"\ncommand = \"touch " + mark + "\"\n");
  std::string t = lab.dir + "/t.jsonl";
  auto r = run_sh("bash -c 'set -o pipefail; " + std::string(RATCHET_BINARY) + lab.args(pb, t) + " | head -c 1'");
  CHECK(r.out.size() == 1);
  CHECK(r.code == 0);  // ratchet's own status through pipefail: the run succeeded
  CHECK(std::filesystem::exists(mark));
  auto tr = ratchet::transcript::read_transcript(t);
  REQUIRE_FALSE(tr.events.empty());
  CHECK(tr.events.back()["event"] == "run_end");
  CHECK(tr.events.back()["status"] == "ok");
}

TEST_CASE("faults: show names why a transcript cannot be read", "[faults]") {
  auto r = run_sh(std::string(RATCHET_BINARY) + " show /nonexistent/t.jsonl");
  CHECK(r.code == 2);
  CHECK(r.err == "ratchet: error: cannot read transcript /nonexistent/t.jsonl: No such file or directory\n");
}

TEST_CASE("faults: a channel the server closes with no exit status is 'could not check' for a check and a failure "
          "for an action - never a state",
          "[ssh][faults]") {
  // OpenSSH's ChannelTimeout closes a session channel that is quiet for 1 s,
  // with no exit-status: nothing says how the command ended.
  Lab lab("EXTRA_SSHD_CONFIG='ChannelTimeout session:command=1s'");
  // On a session the quiet channel is the session shell's: the same verdicts,
  // in its words.
  lab.transport = GENERATE("session", "channel");
  const std::string marker = lab.dir + "/rung-ran";
  std::string pb = lab.playbook(
      "targets = [\"box\"]\n"
      "[[step]]\nid = \"quiet_check\"\nkind = \"verify\"\non_failure = \"continue\"\ntimeout = \"20s\"\n"
      "command = \"sleep 6\"\n"
      "  [[step.escalate]]\n  kind = \"run\"\n  command = \"touch " + marker + "\"\n"
      "[[step]]\nid = \"quiet_action\"\nkind = \"run\"\ntimeout = \"20s\"\ncommand = \"sleep 6\"\n");
  std::string t = lab.dir + "/t.jsonl";
  auto r = run_sh(std::string(RATCHET_BINARY) + lab.args(pb, t));
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  std::map<std::string, json> ends;
  for (const auto& ev : ratchet::transcript::read_transcript(t).events)
    if (ev["event"] == "step_end") ends[ev["step"]] = ev;
  REQUIRE(ends.count("quiet_check"));
  CHECK(ends["quiet_check"]["status"] == "failed");
  const std::string why = lab.transport == "channel"
                              ? "no exit status received (channel closed by the server)"
                              : "the session shell ended during the command (channel closed): the command may have "
                                "ended it, and how the command ended is unknown; the next command gets a fresh "
                                "session shell";
  CHECK(ends["quiet_check"]["reason"] == "could not check: " + why);
  CHECK_FALSE(std::filesystem::exists(marker));  // no rung on a state nobody saw
  REQUIRE(ends.count("quiet_action"));
  CHECK(ends["quiet_action"]["status"] == "failed");
  CHECK(ends["quiet_action"]["reason"] == why);
}
