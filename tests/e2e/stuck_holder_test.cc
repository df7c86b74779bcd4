// Signals that arrive (issue 27, item 3), on a real sshd on 127.0.0.1 as root:
// a holder stopped with SIGSTOP gets CONT right after TERM, so the TERM rung
// succeeds; a holder in tracing stop (a stand-in tracer,
// tests/support/tracer.cc) survives TERM named with its tracer, and a KILL
// rung ends it; a holder in uninterruptible sleep (R21: a cgroup v1 freezer
// this test creates, FROZEN: state D) survives KILL, is named unkillable with
// its wchan and its frozen cgroups (v1, and a v2 one it is also in) with the
// command that thaws them, and the step stops escalating: no further rung, no
// retry. The cgroups are thawed and removed in cleanup, always; the holders
// and tracers are stand-ins this test started, killed by PID.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

struct Host {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-stuck");
  std::string inv = dir + "/inventory.toml";
  Host() {
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
  }
  std::vector<json> run(const std::string& body) {
    const std::string pb = dir + "/pb.toml", t = dir + "/t.jsonl";
    write_file(pb, "name = \"stuck\"\ntargets = [\"box\"]\n" + body);
    std::filesystem::remove(t);
    auto r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inv + " -F none --transcript " + t);
    INFO(r.out << r.err);
    return ratchet::transcript::read_transcript(t).events;
  }
};

std::string state_of(pid_t pid) {
  return run_local("awk '{ print $3 }' /proc/" + std::to_string(pid) + "/stat 2>/dev/null | tr -d '\\n'");
}

/// A cgroup v1 freezer of this test's own, with one process in it, FROZEN;
/// thawed and removed when it goes (declared after the process: it goes first).
struct Freezer {
  std::string path;
  explicit Freezer(pid_t pid) : path("/sys/fs/cgroup/freezer/ratchet-r21-" + std::to_string(getpid())) {
    if (mkdir(path.c_str(), 0755) != 0) {
      path.clear();
      return;
    }
    std::ofstream(path + "/cgroup.procs") << pid << "\n";
    std::ofstream(path + "/freezer.state") << "FROZEN\n";
  }
  ~Freezer() {
    if (path.empty()) return;
    std::ofstream(path + "/freezer.state") << "THAWED\n";
    eventually([&] { return run_local("cat " + path + "/freezer.state") == "THAWED\n"; }, 5000);
    // The kill's SIGKILL was pending: the process ends as soon as it runs again.
    eventually([&] { return run_local("cat " + path + "/cgroup.procs") == ""; }, 5000);
    rmdir(path.c_str());
  }
};

std::string outputs_of(const std::vector<json>& events, const std::string& step) {
  std::string out;
  for (const auto& ev : events)
    if (ev["event"] == "output" && ev["step"] == step && ev.contains("data")) out += ev["data"].get<std::string>();
  return out;
}

}  // namespace

TEST_CASE("a stopped holder gets CONT after TERM: the graceful rung succeeds", "[ssh][stuck_holder]") {
  Host h;
  const std::string f = h.dir + "/dev0";
  write_file(f, "");
  OwnedProcess holder("exec sleep 300 3<'" + f + "'");
  REQUIRE(eventually([&] { return state_of(holder.pid()) == "S"; }));
  const std::string pid = std::to_string(holder.pid());
  kill(holder.pid(), SIGSTOP);
  REQUIRE(eventually([&] { return state_of(holder.pid()) == "T"; }));
  auto ev = h.run("[[step]]\nid = \"stop\"\nkind = \"kill\"\nsignal = \"TERM\"\nwait = \"3s\"\nholders_of = [\"" + f + "\"]\n");
  json end;
  std::string note;
  for (const auto& e : ev) {
    if (e["event"] == "step_end" && e["step"] == "stop") end = e;
    if (e["event"] == "evidence" && e["step"] == "stop" && e.value("role", "") == "action") note = e.value("note", "");
  }
  CHECK(end["status"] == "changed");
  CHECK(eventually([&] { return !holder.alive(); }));
  CHECK(outputs_of(ev, "stop").find("continued\t" + pid + "\t") != std::string::npos);  // the transcript shows the CONT
  CHECK(note == "PID " + pid + " (sleep) was stopped: CONT sent after the signal");
}

TEST_CASE("a holder its tracer keeps in tracing stop survives TERM named with its tracer, and a KILL rung ends it",
          "[ssh][stuck_holder]") {
  Host h;
  const std::string f = h.dir + "/dev2", g = h.dir + "/dev3";
  write_file(f, "");
  write_file(g, "");
  OwnedProcess held("exec sleep 300 3<'" + f + "'");
  OwnedProcess held2("exec sleep 300 3<'" + g + "'");
  REQUIRE(eventually([&] { return state_of(held.pid()) == "S" && state_of(held2.pid()) == "S"; }));
  OwnedProcess tracer(std::string("exec ") + RATCHET_TRACER + " " + std::to_string(held.pid()));
  OwnedProcess tracer2(std::string("exec ") + RATCHET_TRACER + " " + std::to_string(held2.pid()));
  REQUIRE(eventually([&] { return state_of(held.pid()) == "t" && state_of(held2.pid()) == "t"; }));
  const std::string pid = std::to_string(held.pid()), tpid = std::to_string(tracer.pid());
  // A TERM-only step fails naming the tracer; a TERM step with a KILL rung escalates.
  auto ev = h.run("[[step]]\nid = \"term\"\nkind = \"kill\"\nsignal = \"TERM\"\nwait = \"1s\"\non_failure = \"continue\"\n"
                  "holders_of = [\"" + f + "\"]\n"
                  "[[step]]\nid = \"harder\"\nkind = \"kill\"\nsignal = \"TERM\"\nwait = \"1s\"\nholders_of = [\"" + g + "\"]\n"
                  "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = [\"" + g + "\"]\n  signal = \"KILL\"\n  wait = \"2s\"\n");
  json term_end, harder_end, traced;
  for (const auto& e : ev) {
    if (e["event"] == "step_end" && e["step"] == "term") term_end = e;
    if (e["event"] == "step_end" && e["step"] == "harder") harder_end = e;
    if (e["event"] == "evidence" && e["step"] == "term" && e.contains("traced")) traced = e["traced"];
  }
  CHECK(term_end["status"] == "failed");
  CHECK(term_end.value("reason", "").rfind("PID " + pid + " (sleep) is stopped by its tracer PID " + tpid +
                                               " (tracer): CONT does not resume it; detach or end the tracer; then the "
                                               "check: ",
                                           0) == 0);
  REQUIRE(traced.is_array());
  REQUIRE(traced.size() == 1);
  CHECK(traced[0]["pid"] == held.pid());
  CHECK(traced[0]["comm"] == "sleep");
  CHECK(traced[0]["tracer_pid"] == tracer.pid());
  CHECK(traced[0]["tracer_comm"] == "tracer");
  CHECK(state_of(held.pid()) == "t");  // TERM is pending: the tracer still holds it
  CHECK(harder_end["status"] == "escalated");
  CHECK(harder_end["rung"] == 1);
  // KILL ended it: a zombie its tracer has not reaped, or gone.
  CHECK(eventually([&] { return state_of(held2.pid()) == "Z" || state_of(held2.pid()).empty(); }));
}

TEST_CASE("a holder in state D that survives KILL is named unkillable and the step stops escalating",
          "[ssh][stuck_holder]") {
  if (access("/sys/fs/cgroup/freezer/cgroup.procs", W_OK) != 0) {
    WARN("no cgroup v1 freezer here: not run");
    return;
  }
  Host h;
  const std::string f = h.dir + "/dev1";
  write_file(f, "");
  OwnedProcess holder("exec sleep 300 3<'" + f + "'");
  REQUIRE(eventually([&] { return state_of(holder.pid()) == "S"; }));
  Freezer frozen(holder.pid());
  REQUIRE(!frozen.path.empty());
  REQUIRE(eventually([&] { return state_of(holder.pid()) == "D"; }));
  const std::string wchan = run_local("cat /proc/" + std::to_string(holder.pid()) + "/wchan");
  // TERM, then KILL; a third rung and the retries must never run.
  auto ev = h.run("[[step]]\nid = \"free\"\nkind = \"verify\"\nno_holders = [\"" + f +
                  "\"]\n"
                  "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = [\"" + f + "\"]\n  signal = \"TERM\"\n  wait = \"1s\"\n"
                  "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = [\"" + f + "\"]\n  signal = \"KILL\"\n  wait = \"1s\"\n"
                  "  retries = 3\n  delay = \"1s\"\n"
                  "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = [\"" + f + "\"]\n  signal = \"KILL\"\n  wait = \"1s\"\n");
  json end, unkillable;
  int actions = 0, checks_after_kill = 0;
  for (const auto& e : ev) {
    if (e["event"] == "step_end") end = e;
    if (e["event"] == "command" && e["role"] == "action") ++actions;
    if (e["event"] == "command" && e["role"] == "check" && actions == 2) ++checks_after_kill;
    if (e["event"] == "evidence" && e.contains("unkillable")) unkillable = e["unkillable"];
  }
  const std::string pid = std::to_string(holder.pid());
  CHECK(end["status"] == "failed");
  CHECK(end["rung"] == 2);
  CHECK(actions == 2);            // TERM, KILL: no third rung
  CHECK(checks_after_kill == 1);  // no retry
  // Its freezer cgroup is named with the command that thaws it: no reboot.
  CHECK(end.value("reason", "").rfind("PID " + pid + " (sleep) is in state D (frozen, wchan " + wchan + "): its cgroup " +
                                          frozen.path + " is frozen, so KILL is pending until it is thawed, no reboot "
                                          "needed: echo THAWED > " + frozen.path + "/freezer.state; then the check: ",
                                      0) == 0);
  REQUIRE(unkillable.is_array());
  REQUIRE(unkillable.size() == 1);
  CHECK(unkillable[0]["pid"] == holder.pid());
  CHECK(unkillable[0]["state"] == "D");
  CHECK(unkillable[0]["wchan"] == wchan);
  CHECK(unkillable[0]["frozen"] ==
        json::array({{{"version", "v1"}, {"cgroup", frozen.path}, {"thaw", "echo THAWED > " + frozen.path + "/freezer.state"}}}));
}

namespace {

/// A cgroup v2 child of this test's own (under the unified mount beside v1,
/// or /sys/fs/cgroup itself), with one process moved in; freeze() sets its
/// cgroup.freeze to 1. Thawed and removed when it goes, after its process has
/// left (declare it before a Freezer: that one goes first, and ends the process).
struct FrozenV2 {
  std::string path;
  explicit FrozenV2(pid_t pid) {
    for (std::string m : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
      if (access((m + "/cgroup.controllers").c_str(), F_OK) != 0) continue;
      path = m + "/ratchet-r21v2-" + std::to_string(getpid());
      if (mkdir(path.c_str(), 0755) != 0) {
        path.clear();
        return;
      }
      std::ofstream(path + "/cgroup.procs") << pid << "\n";
      return;
    }
  }
  void freeze() { std::ofstream(path + "/cgroup.freeze") << "1\n"; }
  ~FrozenV2() {
    if (path.empty()) return;
    std::ofstream(path + "/cgroup.freeze") << "0\n";
    eventually([&] { return run_local("cat " + path + "/cgroup.procs") == ""; }, 5000);
    rmdir(path.c_str());
  }
};

}  // namespace

TEST_CASE("a holder in a frozen v1 freezer and a frozen v2 cgroup that survives KILL is told to thaw both",
          "[ssh][stuck_holder]") {
  if (access("/sys/fs/cgroup/freezer/cgroup.procs", W_OK) != 0 ||
      (access("/sys/fs/cgroup/unified/cgroup.procs", W_OK) != 0 && access("/sys/fs/cgroup/cgroup.procs", W_OK) != 0)) {
    WARN("no cgroup v1 freezer beside a writable cgroup v2 here: not run");
    return;
  }
  // (A v2 freeze alone leaves a process in state S, which KILL ends: only the
  // v1 freezer keeps one in D. A process in both is named in both.)
  Host h;
  const std::string f = h.dir + "/dev4";
  write_file(f, "");
  OwnedProcess holder("exec sleep 300 3<'" + f + "'");
  REQUIRE(eventually([&] { return state_of(holder.pid()) == "S"; }));
  FrozenV2 v2(holder.pid());
  REQUIRE(!v2.path.empty());
  Freezer v1(holder.pid());
  REQUIRE(!v1.path.empty());
  REQUIRE(eventually([&] { return state_of(holder.pid()) == "D"; }));
  v2.freeze();
  REQUIRE(eventually([&] { return run_local("cat " + v2.path + "/cgroup.freeze") == "1\n"; }));
  const std::string wchan = run_local("cat /proc/" + std::to_string(holder.pid()) + "/wchan");
  auto ev = h.run("[[step]]\nid = \"stop\"\nkind = \"kill\"\nsignal = \"KILL\"\nwait = \"1s\"\nholders_of = [\"" + f + "\"]\n");
  json end, unkillable;
  for (const auto& e : ev) {
    if (e["event"] == "step_end") end = e;
    if (e["event"] == "evidence" && e.contains("unkillable")) unkillable = e["unkillable"];
  }
  const std::string pid = std::to_string(holder.pid());
  CHECK(end["status"] == "failed");
  // /proc/PID/cgroup lists the v1 hierarchies before the v2 line: v1 first.
  CHECK(end.value("reason", "").rfind("PID " + pid + " (sleep) is in state D (frozen, wchan " + wchan + "): its cgroups " +
                                          v1.path + " and " + v2.path + " are frozen, so KILL is pending until they are "
                                          "thawed, no reboot needed: echo THAWED > " + v1.path + "/freezer.state && echo 0 > " +
                                          v2.path + "/cgroup.freeze; then the check: ",
                                      0) == 0);
  REQUIRE(unkillable.is_array());
  REQUIRE(unkillable.size() == 1);
  REQUIRE(unkillable[0]["frozen"].size() == 2);
  CHECK(unkillable[0]["frozen"][1]["version"] == "v2");
  CHECK(unkillable[0]["frozen"][1]["cgroup"] == v2.path);
}

TEST_CASE("a holder in a frozen cgroup v2 (state S) that survives TERM is named frozen with the thaw command, and a "
          "KILL rung ends it",
          "[ssh][stuck_holder]") {
  if (access("/sys/fs/cgroup/unified/cgroup.procs", W_OK) != 0 && access("/sys/fs/cgroup/cgroup.procs", W_OK) != 0) {
    WARN("no writable cgroup v2 here: not run");
    return;
  }
  Host h;
  const std::string f = h.dir + "/dev5", g = h.dir + "/dev6";
  write_file(f, "");
  write_file(g, "");
  // Holders that exec, and catch TERM (as servers do): a signal whose default action is
  // to end the process ends a frozen v2 task too; one its handler must take waits for a thaw.
  const std::string catches_term = "exec perl -e '$SIG{TERM} = sub { exit 0 }; sleep 300' 3<'";
  OwnedProcess holder(catches_term + f + "'");
  OwnedProcess holder2(catches_term + g + "'");
  auto catching = [](pid_t p) {  // its TERM handler is set (SigCgt bit 15) and it sleeps
    return state_of(p) == "S" && run_local("awk '$1 == \"SigCgt:\" { print substr($2, 13, 1) }' /proc/" +
                                           std::to_string(p) + "/status") == "4\n";
  };
  REQUIRE(eventually([&] { return catching(holder.pid()) && catching(holder2.pid()); }));
  FrozenV2 v2(holder.pid());
  REQUIRE(!v2.path.empty());
  std::ofstream(v2.path + "/cgroup.procs") << holder2.pid() << "\n";
  // Thawed and killed by PID at the end, also when a check fails (goes before v2 and the holders).
  struct ThawKill {
    std::string dir;
    pid_t a, b;
    ~ThawKill() {
      std::ofstream(dir + "/cgroup.freeze") << "0\n";
      kill(a, SIGKILL);
      kill(b, SIGKILL);
    }
  } thaw_kill{v2.path, holder.pid(), holder2.pid()};
  v2.freeze();
  REQUIRE(eventually([&] { return run_local("grep -x 'frozen 1' " + v2.path + "/cgroup.events") == "frozen 1\n"; }));
  REQUIRE(state_of(holder.pid()) == "S");  // a v2 freeze: not D
  auto ev = h.run("[[step]]\nid = \"term\"\nkind = \"kill\"\nsignal = \"TERM\"\nwait = \"1s\"\non_failure = \"continue\"\n"
                  "holders_of = [\"" + f + "\"]\n"
                  "[[step]]\nid = \"harder\"\nkind = \"kill\"\nsignal = \"TERM\"\nwait = \"1s\"\nholders_of = [\"" + g + "\"]\n"
                  "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = [\"" + g + "\"]\n  signal = \"KILL\"\n  wait = \"2s\"\n");
  json term_end, harder_end, frozen;
  for (const auto& e : ev) {
    if (e["event"] == "step_end" && e["step"] == "term") term_end = e;
    if (e["event"] == "step_end" && e["step"] == "harder") harder_end = e;
    if (e["event"] == "evidence" && e["step"] == "term" && e.contains("frozen")) frozen = e["frozen"];
  }
  const std::string pid = std::to_string(holder.pid());
  CHECK(term_end["status"] == "failed");
  CHECK(term_end.value("reason", "").rfind("PID " + pid + " (perl), in state S, is in the frozen cgroup " + v2.path +
                                               ": it does not run, so the signal is pending until it is thawed: echo 0 > " +
                                               v2.path + "/cgroup.freeze; then the check: ",
                                           0) == 0);
  REQUIRE(frozen.is_array());
  REQUIRE(frozen.size() == 1);
  CHECK(frozen[0] == json{{"pid", holder.pid()},
                          {"comm", "perl"},
                          {"state", "S"},
                          {"frozen", json::array({{{"version", "v2"}, {"cgroup", v2.path},
                                                   {"thaw", "echo 0 > " + v2.path + "/cgroup.freeze"}}})}});
  CHECK(state_of(holder.pid()) == "S");  // TERM pending: still frozen
  CHECK(run_local("awk '$1 == \"ShdPnd:\" { print $2 }' /proc/" + pid + "/status") == "0000000000004000\n");
  // KILL ends a task of a frozen v2 cgroup.
  CHECK(harder_end["status"] == "escalated");
  CHECK(eventually([&] { return !holder2.alive(); }));
}
