// Reading command results into verdicts (steps/judge.cc): holds, does not
// hold, or could not check; one short line of reason.
#include <catch2/catch.hpp>

#include "support/exec_result.h"

#include <set>

#include "steps/action.h"
#include "steps/judge.h"

using namespace ratchet::steps;
using ratchet::testing::exec_result;
using ratchet::transport::ExecResult;
namespace {

Command check(const std::string& judge, Expect expect = {}) {
  Command c;
  c.role = Role::check;
  c.judge = parse_judge(judge).value();
  c.expect = std::move(expect);
  return c;
}


}  // namespace

TEST_CASE("a reason is one short line, whatever the command printed", "[steps]") {
  std::string huge(512 * 1024, 'x');
  auto v = judge_check(check("exit0"), exec_result(1, huge + "\nsecond line\n"));
  CHECK_FALSE(v.holds);
  CHECK(v.reason == "exit 1: " + std::string(kReasonLine, 'x') + "...");
  // Cut at a character, never inside one.
  std::string e_acute = "\xc3\xa9";
  std::string line(kReasonLine - 1, 'a');
  CHECK(short_line(line + e_acute + "zzz") == line + "...");
  CHECK(short_line("short") == "short");
}

TEST_CASE("library checks that exit 2 to 5 could not check, and send no action", "[steps]") {
  for (int code : {2, 3, 4, 5}) {
    INFO(code);
    auto v = judge_check(check("holders"), exec_result(code, "", "ratchet: no file matches /dev/x* (set missing_ok = true if that is expected)\n"));
    CHECK_FALSE(v.holds);
    CHECK(v.unknown);
    CHECK(v.reason == "could not check: no file matches /dev/x* (set missing_ok = true if that is expected)");
  }
  auto v = judge_check(check("holders"), exec_result(5, "", "ratchet: PID 9 (sshd) is part of this SSH session (ratchet itself): never selected\n"
                                                         "ratchet: could not check: 3 processes' open files are unreadable as alice (owners: root); run as root or set become = true\n"));
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: 3 processes' open files are unreadable as alice (owners: root); run as root or set become = true");
  // A holder seen by a partly blind scan: the state does not hold (it was seen), and the blindness is said.
  v = judge_check(check("holders"), exec_result(1, "holder\t7\troot\t1\t1.0\tsleep\tsleep 9\tS\t-\t/dev/x0\n",
                                           "ratchet: could not check: 1 process's open files are unreadable as alice (owners: root); run as root or set become = true\n"));
  CHECK_FALSE(v.holds);
  CHECK_FALSE(v.unknown);
  CHECK(v.reason == "1 process(es) hold the files; and could not check: 1 process's open files are unreadable as alice "
                    "(owners: root); run as root or set become = true");
  // A warning on a check that holds is its note.
  v = judge_check(check("holders"), exec_result(0, "", "ratchet: warning: processes of alice that are not dumpable ...\n"));
  CHECK(v.holds);
  CHECK(v.reason == "warning: processes of alice that are not dumpable ...");
}

TEST_CASE("an exit0 check whose library function could not look (exit 5) could not check - other exits fail", "[steps]") {
  // verify service_active on a host without systemctl, port_free without /proc (R27).
  auto v = judge_check(check("exit0"), exec_result(5, "", "ratchet: could not check: systemctl not found: not a systemd host\n"));
  CHECK_FALSE(v.holds);
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: systemctl not found: not a systemd host");
  // A command of the playbook's own that exits 5 (or 127) without those words simply does not hold.
  v = judge_check(check("exit0"), exec_result(5, "", "my tool: bad input\n"));
  CHECK_FALSE(v.holds);
  CHECK_FALSE(v.unknown);
  CHECK(v.reason == "exit 5: my tool: bad input");
  v = judge_check(check("exit0"), exec_result(127, "", "/bin/sh: eval: line 1: systemctl: not found\n"));
  CHECK_FALSE(v.unknown);
  CHECK(v.reason == "exit 127: /bin/sh: eval: line 1: systemctl: not found");
}

TEST_CASE("a check that timed out, was killed or got no exit status could not check", "[steps]") {
  auto r = exec_result(-1);
  r.timed_out = true;
  auto v = judge_check(check("exit0"), r);
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: the check timed out");
  r = exec_result(-1);
  r.signal = "KILL";
  CHECK(judge_check(check("exit0"), r).reason == "could not check: the check killed by SIGKILL");
  r = exec_result(-1);
  r.error = "no exit status received (channel closed by the server)";
  v = judge_check(check("exit0"), r);
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: no exit status received (channel closed by the server)");
}

TEST_CASE("kill checks: a process seen alive does not hold, a blind scan with none seen could not check", "[steps]") {
  auto v = judge_check(check("kill"), exec_result(5, "alive\t7\troot\t1\t1.0\tsleep\tsleep 9\tS\t-\t\n", "ratchet: could not check: x\n"));
  CHECK_FALSE(v.holds);
  CHECK_FALSE(v.unknown);
  CHECK(v.reason == "1 selected process(es) still alive: PID 7 (sleep 9)");
  v = judge_check(check("kill"), exec_result(5, "", "ratchet: could not check: 2 processes' open files are unreadable as bob (owners: root); run as root or set become = true\n"));
  CHECK(v.unknown);
  CHECK(v.reason.rfind("could not check: 2 processes' open files", 0) == 0);
}

TEST_CASE("service checks: stale definitions, transitional states and leftovers", "[steps]") {
  Expect want_started, want_stopped;
  want_started.state = "started";
  want_stopped.state = "stopped";
  auto started = check("service", want_started);
  auto v = judge_check(started, exec_result(0, "load=loaded\nactive=active\nenabled=enabled\nreload=yes\n"));
  CHECK_FALSE(v.holds);
  CHECK(v.reason == "active on an old definition: the unit's file changed on disk (NeedDaemonReload=yes)");
  v = judge_check(started, exec_result(0, "load=loaded\nactive=active\nenabled=enabled\nreload=no\n"));
  CHECK(v.holds);
  v = judge_check(started, exec_result(0, "load=loaded\nactive=activating\nsub=start-pre\nfor=31\nenabled=enabled\n"));
  CHECK_FALSE(v.holds);
  CHECK(v.reason == "activating (start-pre) for 31s");
  auto stopped = check("service", want_stopped);
  v = judge_check(stopped, exec_result(0, "load=loaded\nactive=deactivating\nsub=stop-sigterm\nfor=8\n"));
  CHECK(v.reason == "deactivating (stop-sigterm) for 8s");
  v = judge_check(stopped, exec_result(0, "load=loaded\nactive=inactive\nleft=4242 python3\nleft=4243 sleep\n"));
  CHECK(v.holds);
  CHECK(v.reason == "2 process(es) left in the unit's cgroup: PID 4242 (python3), PID 4243 (sleep)");
  v = judge_check(stopped, exec_result(5, "", "ratchet: could not check: systemctl not found: not a systemd host\n"));
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: systemctl not found: not a systemd host");
}

TEST_CASE("judge names: every judge round-trips through its name", "[steps]") {
  std::vector<std::string> names;
  for (Judge j : kJudges) {
    names.emplace_back(name(j));
    CHECK(parse_judge(name(j)) == j);
  }
  // The plan's `judge` (docs/plan.md).
  CHECK(names == std::vector<std::string>{"exit0", "exit", "holders", "absent", "matches", "service", "write",
                                          "kill", "kill_action", "gpus", "copy"});
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == kJudges.size());
}

TEST_CASE("judge names: a name that is no judge is refused", "[steps]") {
  for (const char* s : {"", "exit1", "Exit0", "kill-action", "run", "holders ", "stdout_matches"}) {
    INFO(s);
    CHECK_FALSE(parse_judge(s));
  }
}

TEST_CASE("a check with nothing to compare with could not check and never holds", "[steps]") {
  for (const char* j : {"service", "write", "matches"}) {
    INFO(j);
    auto v = judge_check(check(j), exec_result(0, "load=loaded\nactive=active\n"));
    CHECK_FALSE(v.holds);
    CHECK(v.unknown);
    CHECK(v.reason.rfind("could not check: the check names no ", 0) == 0);
  }
}

TEST_CASE("a device held through another node: node lines join their holder, name it in the reason and round-trip",
          "[steps]") {
  const std::string out =
      "holder\t4242\troot\t1\t1.0\tpython3\tpython3 x.py\tS\t-\t/dev/nvidia0\n"
      "holder\t7\troot\t1\t1.0\tsleep\tsleep 9\tS\t-\t/dev/nvidia0\n"
      "node\t4242\t/dev/nvidia0\t/run/c%25/nvidia0\t4026532711\t195:0\n"
      "node\t99\t/dev/nvidia0\t/x\t-\t195:0\n"   // no holder line: dropped
      "node\t7\t/dev/nvidia0\t/tmp/n0\t-\t195:0\n";
  auto v = judge_check(check("holders"), exec_result(1, out, ""));
  CHECK_FALSE(v.holds);
  REQUIRE(v.holders.size() == 2);
  REQUIRE(v.holders[0].nodes.size() == 1);
  CHECK(v.holders[0].nodes[0] == HeldNode{"/dev/nvidia0", "/run/c%/nvidia0", "4026532711", "195:0"});
  REQUIRE(v.holders[1].nodes.size() == 1);
  CHECK(v.holders[1].nodes[0].mount_ns.empty());  // the scan's own namespace
  CHECK(v.reason ==
        "2 process(es) hold the files: PID 4242 holds /run/c%/nvidia0 of mount namespace 4026532711: same device 195:0 "
        "as /dev/nvidia0");
  CHECK(node_text(7, v.holders[1].nodes[0]) == "PID 7 holds /tmp/n0: same device 195:0 as /dev/nvidia0");
  for (const auto& h : v.holders) {
    auto val = to_value(h);
    CHECK(val["nodes"][0]["device"] == ratchet::util::Value("195:0"));
    CHECK(holder_from(val) == h);
  }
  CHECK_FALSE(to_value(v.holders[1])["nodes"][0].contains("mount_ns"));
  // A malformed node line is no node (and no holder).
  CHECK(parse_process_lines("holder\t7\troot\t1\t1.0\tsleep\tsleep 9\tS\t-\t/d\nnode\t7\t/d\n", "holder")[0].nodes.empty());
}

TEST_CASE("a deleted node, a node name with a newline and a thread's own descriptor table: parsed, said, round-tripped",
          "[steps]") {
  const std::string out =
      "holder\t7\troot\t1\t1.0\tsleep\tsleep 9\tS\t-\t/dev/nvidia0\n"
      "node\t7\t/dev/nvidia0\t/tmp/a%0Ab\t-\t195:0\tdeleted\n"
      "task\t7\t9\t/dev/nvidia0\n"
      "task\t99\t100\t/dev/nvidia0\n"  // no holder line: dropped
      "node\t7\t/dev/nvidia0\t/x\t-\t195:0\tgone\n";  // not a node line
  auto v = judge_check(check("holders"), exec_result(1, out, ""));
  REQUIRE(v.holders.size() == 1);
  const auto& h = v.holders[0];
  REQUIRE(h.nodes.size() == 1);
  CHECK(h.nodes[0] == HeldNode{"/dev/nvidia0", "/tmp/a\nb", "", "195:0", true});
  REQUIRE(h.threads.size() == 1);
  CHECK(h.threads[0] == HeldThread{9, "/dev/nvidia0"});
  CHECK(v.reason == "1 process(es) hold the files: PID 7 holds the deleted node \"/tmp/a\\nb\": same device 195:0 as "
                    "/dev/nvidia0; PID 7 holds /dev/nvidia0 through its thread 9, which has a descriptor table of its own");
  auto val = to_value(h);
  CHECK(val["nodes"][0]["deleted"] == ratchet::util::Value(true));
  CHECK(val["threads"][0]["tid"] == ratchet::util::Value(9LL));
  CHECK(holder_from(val) == h);
}

TEST_CASE("a kill's survivor of KILL in state D is named unkillable with its wchan, a stopped one as continued",
          "[steps]") {
  Command act;
  act.role = Role::action;
  act.judge = Judge::kill_action;
  const std::string out =
      "signalled\t7\troot\t1\t1.0\tpython3\tpython3 x.py\tD:__refrigerator\t-\t/d\n"
      "alive\t7\troot\t1\t1.0\tpython3\tpython3 x.py\tD:__refrigerator\t-\t/d\n"
      "unkillable\t7\tD\tnv_wait_for_gpu\n";
  auto v = judge_action(act, exec_result(0, out, ""), {0});
  REQUIRE(v.unkillable.size() == 1);
  CHECK(v.unkillable[0].frozen.empty());
  CHECK(unkillable_text(v.unkillable[0]) ==
        "PID 7 (python3) is in state D (uninterruptible, wchan nv_wait_for_gpu): KILL is pending until the kernel "
        "releases it; a reboot or a driver reset may be needed");
  v = judge_action(act,
                   exec_result(0,
                               "signalled\t8\troot\t1\t1.0\tsleep\tsleep 9\tT\t-\t/d\n"
                               "continued\t8\troot\t1\t1.0\tsleep\tsleep 9\tT\t-\t/d\n",
                               ""),
                   {0});
  CHECK(v.unkillable.empty());
  CHECK(v.reason == "PID 8 (sleep) was stopped: CONT sent after the signal");
}

TEST_CASE("a kill's survivor in tracing stop is named with its tracer, not as resumed by CONT", "[steps]") {
  Command act;
  act.role = Role::action;
  act.judge = Judge::kill_action;
  const std::string out =
      "signalled\t8\troot\t1\t1.0\tsleep\tsleep 9\tt\t-\t/d\n"
      "continued\t8\troot\t1\t1.0\tsleep\tsleep 9\tt\t-\t/d\n"
      "signalled\t9\troot\t1\t1.0\tsleep\tsleep 9\tT\t-\t/d\n"
      "continued\t9\troot\t1\t1.0\tsleep\tsleep 9\tT\t-\t/d\n"
      "alive\t8\troot\t1\t1.0\tsleep\tsleep 9\tt\t-\t/d\n"
      "traced\t8\t77\tgdb\n"
      "traced\t5\t0\tnone\n"       // TracerPid 0: no tracer, skipped
      "traced\tx\t77\tgdb\n";      // malformed: skipped
  auto v = judge_action(act, exec_result(0, out, ""), {0});
  CHECK(v.holds);
  REQUIRE(v.traced.size() == 1);
  CHECK(v.traced[0] == Traced{8, "sleep", 77, "gdb"});
  CHECK(v.reason == "PID 9 (sleep) was stopped: CONT sent after the signal; PID 8 (sleep) is stopped by its tracer "
                    "PID 77 (gdb): CONT does not resume it; detach or end the tracer");
  // A tracer whose comm could not be read; a survivor with no alive line.
  auto t = parse_traced("traced\t8\t77\t\n");
  REQUIRE(t.size() == 1);
  CHECK(traced_text(t[0]) == "PID 8 is stopped by its tracer PID 77 (?): CONT does not resume it; detach or end the tracer");
}

TEST_CASE("a survivor of KILL in a frozen cgroup is told to be thawed, not rebooted", "[steps]") {
  Command act;
  act.role = Role::action;
  act.judge = Judge::kill_action;
  const std::string alive = "alive\t7\troot\t1\t1.0\tpython3\tpython3 x.py\tD:__refrigerator\t-\t/d\n";
  // One frozen cgroup (v2), named with the command that thaws it.
  auto v = judge_action(act,
                        exec_result(0, alive + "unkillable\t7\tD\t__refrigerator\n"
                                               "frozen\t7\tv2\t/sys/fs/cgroup/system.slice/job.scope\n"
                                               "frozen\t9\tv2\t/sys/fs/cgroup/other\n",  // another PID's: not this one's
                                    ""),
                        {0});
  REQUIRE(v.unkillable.size() == 1);
  REQUIRE(v.unkillable[0].frozen.size() == 1);
  CHECK(v.unkillable[0].frozen[0] ==
        FrozenCgroup{FrozenCgroup::Version::v2, "/sys/fs/cgroup/system.slice/job.scope"});
  CHECK(unkillable_text(v.unkillable[0]) ==
        "PID 7 (python3) is in state D (frozen, wchan __refrigerator): its cgroup "
        "/sys/fs/cgroup/system.slice/job.scope is frozen, so KILL is pending until it is thawed, no reboot needed: "
        "echo 0 > /sys/fs/cgroup/system.slice/job.scope/cgroup.freeze");
  // Two (v1 and v2, a name that needs quoting): both, and both commands.
  v = judge_action(act,
                   exec_result(0, alive + "unkillable\t7\tD\t__refrigerator\n"
                                          "frozen\t7\tv1\t/sys/fs/cgroup/freezer/a%09b\n"
                                          "frozen\t7\tv2\t/sys/fs/cgroup/unified/my job\n",
                               ""),
                   {0});
  REQUIRE(v.unkillable.size() == 1);
  CHECK(unkillable_text(v.unkillable[0]) ==
        "PID 7 (python3) is in state D (frozen, wchan __refrigerator): its cgroups \"/sys/fs/cgroup/freezer/a\\tb\" and "
        "/sys/fs/cgroup/unified/my job are frozen, so KILL is pending until they are thawed, no reboot needed: "
        "echo THAWED > \"/sys/fs/cgroup/freezer/a\\tb/freezer.state\" && "
        "echo 0 > '/sys/fs/cgroup/unified/my job/cgroup.freeze'");
  // A freezer wchan with no frozen cgroup named (unreadable, or frozen another way): thaw advice, generic.
  for (const char* w : {"__refrigerator", "do_freezer_trap", "freezer_wait"}) {
    Unkillable u{7, "python3", "D", w, {}};
    CHECK(freezer_wchan(w));
    CHECK(unkillable_text(u) == std::string("PID 7 (python3) is in state D (frozen, wchan ") + w +
                                    ": the cgroup freezer's wait): KILL is pending until its cgroup is thawed, no "
                                    "reboot needed: echo 0 > /sys/fs/cgroup/PATH/cgroup.freeze (cgroup v2) or echo "
                                    "THAWED > /sys/fs/cgroup/freezer/PATH/freezer.state (v1), PATH from /proc/7/cgroup");
  }
  CHECK_FALSE(freezer_wchan("nv_wait_for_gpu"));
  CHECK_FALSE(freezer_wchan("?"));
  CHECK(thaw_command({FrozenCgroup::Version::v1, "/sys/fs/cgroup/freezer/x"}) ==
        "echo THAWED > /sys/fs/cgroup/freezer/x/freezer.state");
}

TEST_CASE("a kill's survivor in a frozen cgroup in state S is named frozen with the thaw command, one traced from "
          "outside the PID namespace is said so",
          "[steps]") {
  Command act;
  act.role = Role::action;
  act.judge = Judge::kill_action;
  const std::string out =
      "signalled\t7\troot\t1\t1.0\tpython3\tpython3 x.py\tS\t-\t/d\n"
      "alive\t7\troot\t1\t1.0\tpython3\tpython3 x.py\tS\t-\t/d\n"
      "frozen\t7\tv2\t/sys/fs/cgroup/job\n"
      "frozen\t7\tv2\t/sys/fs/cgroup/job\n"  // twice: once
      "signalled\t8\troot\t1\t1.0\tsleep\tsleep 9\tt\t-\t/d\n"
      "alive\t8\troot\t1\t1.0\tsleep\tsleep 9\tt\t-\t/d\n"
      "traced\t8\t0\t-\n";
  auto v = judge_action(act, exec_result(0, out, ""), {0});
  CHECK(v.unkillable.empty());
  REQUIRE(v.frozen.size() == 1);
  CHECK(v.frozen[0] == Frozen{7, "python3", "S", {{FrozenCgroup::Version::v2, "/sys/fs/cgroup/job"}}});
  REQUIRE(v.traced.size() == 1);
  CHECK(v.traced[0] == Traced{8, "sleep", 0, ""});
  CHECK(v.reason == "PID 8 (sleep) is stopped by a tracer outside this PID namespace (TracerPid reads 0 here): CONT "
                    "does not resume it; detach or end the tracer where it runs; PID 7 (python3), in state S, is in the "
                    "frozen cgroup /sys/fs/cgroup/job: it does not run, so the signal is pending until it is thawed: "
                    "echo 0 > /sys/fs/cgroup/job/cgroup.freeze");
  // A survivor of KILL in D keeps its frozen cgroups under `unkillable`, not twice.
  v = judge_action(act,
                   exec_result(0, "alive\t7\troot\t1\t1.0\tpython3\tpython3 x.py\tD:__refrigerator\t-\t/d\n"
                                  "unkillable\t7\tD\t__refrigerator\nfrozen\t7\tv1\t/sys/fs/cgroup/freezer/j\n",
                               ""),
                   {0});
  CHECK(v.frozen.empty());
  REQUIRE(v.unkillable.size() == 1);
  CHECK(v.unkillable[0].frozen.size() == 1);
  // v1, two cgroups.
  auto f = parse_frozen("frozen\t9\tv1\t/sys/fs/cgroup/freezer/a\nfrozen\t9\tv2\t/sys/fs/cgroup/unified/b\n");
  REQUIRE(f.size() == 1);
  CHECK(frozen_text(f[0]) == "PID 9 is in the frozen cgroups /sys/fs/cgroup/freezer/a and /sys/fs/cgroup/unified/b: it "
                             "does not run, so the signal is pending until they are thawed: echo THAWED > "
                             "/sys/fs/cgroup/freezer/a/freezer.state && echo 0 > /sys/fs/cgroup/unified/b/cgroup.freeze");
}
