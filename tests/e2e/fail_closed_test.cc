// Checks fail closed on a real systemd host (issue 11, item 1): a login that is
// not root and has no become cannot read root's open files, so a holder scan
// says "could not check", never "free"; with become the same playbook frees
// the device. And nothing a host prints can widen a kill: a login shell's rc
// file that forges the wrapper's marker line (PID 1's numbers, another
// process's group) never points the watchdog, which runs as root through sudo,
// at anything but the command. Only processes these tests start are signalled.
#include <catch2/catch.hpp>

#include <fstream>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/systemd_fixture.h"
#include "transcript/reader.h"

using ratchet::testing::run_sh;
using ratchet::testing::SystemdHost;
using nlohmann::json;

namespace {

std::string inventory(SystemdHost& host, const std::string& dir, const std::string& user, bool become) {
  std::string p = dir + "/inv-" + user + (become ? "-become" : "") + ".toml";
  std::ofstream(p) << "[hosts.lab]\naddress = \"127.0.0.1\"\nport = " << host.port() << "\nuser = \"" << user
                   << "\"\nidentity = \"" << host.client_key() << "\"\nknown_hosts = \"" << host.known_hosts()
                   << "\"\nbecome = " << (become ? "true" : "false") << "\n";
  return p;
}

std::vector<json> events(const std::string& t, const std::string& kind) {
  std::vector<json> out;
  for (const auto& e : ratchet::transcript::read_transcript(t).events)
    if (e["event"] == kind) out.push_back(e);
  return out;
}

json step_end(const std::string& t, const std::string& step) {
  for (const auto& e : events(t, "step_end"))
    if (e["step"] == step) return e;
  return nullptr;
}

std::string on_host(SystemdHost& host, const std::string& cmd) {
  std::string out;
  host.ssh(cmd, &out);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

/// Starts `cmd` as root on the host in its own session; returns its PID.
std::string start_root(SystemdHost& host, const std::string& cmd) {
  return on_host(host, "setsid sh -c '" + cmd + "' </dev/null >/dev/null 2>&1 & echo $!");
}

}  // namespace

TEST_CASE("fail closed: a non-root login without become cannot see root's holder and kills nothing - "
          "with become the same playbook frees it",
          "[systemd][e2e]") {
  SystemdHost host;
  std::string dir = ratchet::testing::temp_dir("ratchet-failclosed");
  REQUIRE(run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " alice nopasswd").code == 0);
  REQUIRE(on_host(host, "mkdir -p /srv/fc && chmod 755 /srv/fc && : > /srv/fc/gpu0 && chmod 644 /srv/fc/gpu0 && echo ok") == "ok");
  std::string holder = start_root(host, "exec 3</srv/fc/gpu0; exec sleep 300");
  REQUIRE(!holder.empty());
  REQUIRE(ratchet::testing::eventually([&] {
    return on_host(host, "find /proc/" + holder + "/fd -lname /srv/fc/gpu0 | wc -l") == "1";
  }));
  std::string pb = dir + "/pb.toml";
  ratchet::testing::write_file(pb, "name = \"fc\"\ntargets = [\"lab\"]\n[[step]]\nid = \"free\"\nkind = \"verify\"\n"
                                   "no_holders = \"/srv/fc/gpu*\"\n  [[step.escalate]]\n  kind = \"kill\"\n"
                                   "  holders_of = \"/srv/fc/gpu*\"\n  signal = \"KILL\"\n  wait = \"3s\"\n");
  std::string t = dir + "/alice.jsonl";
  auto r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inventory(host, dir, "alice", false) +
                  " -F none --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  json end = step_end(t, "free");
  REQUIRE(end.is_object());
  CHECK(end["status"] == "failed");
  const std::string reason = end.value("reason", "");
  CHECK(reason.rfind("could not check: ", 0) == 0);
  CHECK(reason.find("open files are unreadable as alice (owners: root") != std::string::npos);
  CHECK(reason.find("run as root or set become = true") != std::string::npos);
  for (const auto& e : events(t, "command")) CHECK(e["rung"] == 0);  // no rung ran on a state nobody saw
  CHECK(on_host(host, "test -d /proc/" + holder + " && echo alive") == "alive");

  // The same playbook with become: the holder is seen, killed, and the check passes.
  t = dir + "/alice-become.jsonl";
  r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inventory(host, dir, "alice", true) +
             " -F none --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  end = step_end(t, "free");
  REQUIRE(end.is_object());
  CHECK(end["status"] == "escalated");
  CHECK(ratchet::testing::eventually([&] { return on_host(host, "test -d /proc/" + holder + " || echo gone") == "gone"; }));

  // /proc with hidepid=2: other users' processes are not even listed; a scan
  // that would see nothing says so instead of "free".
  holder = start_root(host, "exec 3</srv/fc/gpu0; exec sleep 301");
  REQUIRE(on_host(host, "mount -o remount,hidepid=2 /proc && echo ok") == "ok");
  t = dir + "/alice-hidepid.jsonl";
  ratchet::testing::write_file(pb, "name = \"fc\"\ntargets = [\"lab\"]\n[[step]]\nid = \"free\"\nkind = \"verify\"\n"
                                   "no_holders = \"/srv/fc/gpu*\"\n");
  r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inventory(host, dir, "alice", false) +
             " -F none --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  end = step_end(t, "free");
  REQUIRE(end.is_object());
  CHECK(end.value("reason", "").rfind("could not check: /proc is mounted with hidepid=", 0) == 0);
  CHECK(end.value("reason", "").find("other users' processes are invisible to alice; run as root or set become = true") !=
        std::string::npos);
  // Filtered to alice's own processes, the hidden ones do not matter.
  ratchet::testing::write_file(pb, "name = \"fc\"\ntargets = [\"lab\"]\n[[step]]\nid = \"free\"\nkind = \"verify\"\n"
                                   "no_holders = \"/srv/fc/gpu*\"\nuser = \"alice\"\n");
  r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inventory(host, dir, "alice", false) +
             " -F none --transcript " + dir + "/alice-own.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  // R08: the run lock fails closed too: alice cannot tell a lock whose owner
  // names a live root process held from stale, so nothing runs.
  REQUIRE(on_host(host, "mkdir /run/lock/ratchet-r08 && echo \"r08run root@lab 2026-12-03T00:00:00Z " + holder +
                            " $(awk '{print $22}' /proc/" + holder + "/stat)\" > /run/lock/ratchet-r08/owner && echo ok") ==
          "ok");
  ratchet::testing::write_file(pb, "name = \"fc\"\ntargets = [\"lab\"]\nlock = true\nlock_path = \"/run/lock/ratchet-r08\"\n"
                                   "[[step]]\nid = \"free\"\nkind = \"verify\"\nno_holders = \"/srv/fc/gpu*\"\nuser = \"alice\"\n");
  t = dir + "/alice-hidepid-lock.jsonl";
  r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inventory(host, dir, "alice", false) +
             " -F none --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code != 0);
  CHECK(step_end(t, "free").value("status", "") == "skipped");  // no step ran
  // (Under hidepid alice cannot even see her session's root-owned sshd: it says so.)
  CHECK((r.out + r.err).find("could not check the lock /run/lock/ratchet-r08: ") != std::string::npos);
  on_host(host, "rm -rf /run/lock/ratchet-r08");
  // R08: with become the same login sees through hidepid and finds the holder.
  ratchet::testing::write_file(pb, "name = \"fc\"\ntargets = [\"lab\"]\n[[step]]\nid = \"free\"\nkind = \"verify\"\n"
                                   "no_holders = \"/srv/fc/gpu*\"\n");
  t = dir + "/alice-hidepid-become.jsonl";
  r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inventory(host, dir, "alice", true) +
             " -F none --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  end = step_end(t, "free");
  REQUIRE(end.is_object());
  CHECK(end.value("reason", "") == "1 process(es) hold the files");
  bool named = false;
  for (const auto& e : events(t, "evidence"))
    if (e.contains("holders"))
      for (const auto& h : e["holders"]) named |= std::to_string(h["pid"].get<long>()) == holder;
  CHECK(named);
  on_host(host, "mount -o remount,hidepid=0 /proc; kill " + holder);
}

TEST_CASE("a login shell's rc file that forges the marker line never points the watchdog at PID 1 or another group",
          "[systemd][e2e]") {
  SystemdHost host;
  std::string dir = ratchet::testing::temp_dir("ratchet-forged");
  REQUIRE(run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " mallory nopasswd").code == 0);
  // A bystander group leader that root started: a forged line names it.
  std::string victim = start_root(host, "exec sleep 300");
  REQUIRE(!victim.empty());
  std::string vticks = on_host(host, "awk '{print $22}' /proc/" + victim + "/stat");
  // The rc file tries to read this command's run id from its own command line
  // (the exec request is fixed: there is none) and knows PID 1's numbers; it
  // prints forged lines before the wrapper's own.
  auto write_rc = [&](bool name_victim) {
    std::string rc =
        "id=$(printf '%s' \"$BASH_EXECUTION_STRING\" | sed -n 's/.* \\/bin\\/sh \\([0-9a-f]\\{16\\}\\) .*/\\1/p')\n"
        "t1=$(awk '{print $22}' /proc/1/stat)\n"
        "echo \"[ratchet-pid] 1 1 $t1\" >&2\n"
        "echo \"[ratchet-pid $id] 1 1 $t1\" >&2\n";
    if (name_victim) rc += "echo \"[ratchet-pid $id] " + victim + " " + victim + " " + vticks + "\" >&2\n";
    ratchet::testing::write_file(dir + "/bashrc", rc);
    REQUIRE(run_sh("ssh -o BatchMode=yes -o UserKnownHostsFile=" + host.known_hosts() + " -i " + host.client_key() +
                   " -p " + std::to_string(host.port()) + " root@127.0.0.1 'cat > /home/mallory/.bashrc' < " + dir +
                   "/bashrc")
                .code == 0);
  };
  std::string pb = dir + "/pb.toml";
  ratchet::testing::write_file(pb, "name = \"forged\"\ntargets = [\"lab\"]\n[[step]]\nid = \"hang\"\nkind = \"run\"\n"
                                   "timeout = \"2s\"\ncommand = \"echo $$ > /tmp/hang.pid; sleep 30\"\n");
  // The rc file runs before each command on a channel; on a session, once
  // before the session shell's ready line, which ratchet skips to.
  auto run = [&](const std::string& t, const char* transport = "channel") {
    return run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inventory(host, dir, "mallory", true) +
                  " -F none --transport " + transport + " --transcript " + t);
  };
  auto watchdogs = [&](const std::string& t) {
    std::vector<std::string> out;
    for (const auto& e : events(t, "exit"))
      if (e["step"] == "hang" && e.contains("watchdog")) out.push_back(e["watchdog"]);
    return out;
  };

  // The command the watchdog must end, gone; what the step printed on stderr.
  auto hang_ended = [&] {
    std::string pid = on_host(host, "cat /tmp/hang.pid");
    return ratchet::testing::eventually([&] { return on_host(host, "test -d /proc/" + pid + " || echo gone") == "gone"; });
  };
  // What the command printed on stderr, and what the login printed before it (exit.login_output).
  auto stderr_of = [&](const std::string& t) {
    std::string err;
    for (const auto& e : events(t, "output"))
      if (e["step"] == "hang" && e["stream"] == "stderr") err += e.value("data", "");
    return err;
  };
  auto login_of = [&](const std::string& t) {
    std::string said;
    for (const auto& e : events(t, "exit"))
      if (e["step"] == "hang") said += e.value("login_output", "");
    return said;
  };

  SECTION("lines naming PID 1 come before the go line: the login's, not output - the command's own marker arms the watchdog, which ends it") {
    write_rc(false);
    std::string t = dir + "/pid1.jsonl";
    auto r = run(t);
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    json end = step_end(t, "hang");
    REQUIRE(end.is_object());
    CHECK(end["status"] == "failed");
    CHECK(watchdogs(t) == std::vector<std::string>{"armed"});
    CHECK(hang_ended());
    const std::string err = stderr_of(t);
    CHECK(err.find("[ratchet-pid") == std::string::npos);  // the forgeries are not the command's output
    CHECK(login_of(t).find("[ratchet-pid] 1 1 ") != std::string::npos);  // but on record, as the login's
  }
  SECTION("the rc file cannot learn the run id (it travels on stdin, in no argv): its line naming another group is "
          "the login's, and the command's own marker arms the watchdog") {
    write_rc(true);
    std::string t = dir + "/victim.jsonl";
    auto r = run(t);
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK(watchdogs(t) == std::vector<std::string>{"armed"});
    CHECK(hang_ended());
    const std::string err = stderr_of(t);
    CHECK(err.find("[ratchet-pid") == std::string::npos);
    CHECK(login_of(t).find("[ratchet-pid ] " + victim + " ") != std::string::npos);  // no id to forge with
  }
  SECTION("on a session shell the forgeries come before its ready line: never output, never a watchdog's target") {
    write_rc(true);
    std::string t = dir + "/session.jsonl";
    auto r = run(t, "session");
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK(watchdogs(t) == std::vector<std::string>{"armed"});
    CHECK(hang_ended());
    const std::string err = stderr_of(t);
    CHECK(err.find("[ratchet-pid") == std::string::npos);
  }
  CHECK(on_host(host, "test -d /proc/" + victim + " && echo alive") == "alive");
  on_host(host, "kill " + victim);
}

TEST_CASE("a thread that holds a stand-in device after its group leader exited is found and killed on a real "
          "systemd host - the verify passes only after",
          "[systemd][e2e]") {
  SystemdHost host;
  std::string dir = ratchet::testing::temp_dir("ratchet-thread");
  // The stand-in CUDA program: main thread returned, a worker thread holds the device.
  REQUIRE(run_sh("ssh -o BatchMode=yes -o UserKnownHostsFile=" + host.known_hosts() + " -i " + host.client_key() +
                 " -p " + std::to_string(host.port()) +
                 " root@127.0.0.1 'cat > /root/thread_holder && chmod 755 /root/thread_holder' < " +
                 RATCHET_THREAD_HOLDER)
              .code == 0);
  REQUIRE(on_host(host, "mkdir -p /srv/th && : > /srv/th/gpu0 && echo ok") == "ok");
  std::string pid = start_root(host, "exec /root/thread_holder /srv/th/gpu0");
  REQUIRE(ratchet::testing::eventually([&] {
    return on_host(host, "grep -q '^State:.Z' /proc/" + pid + "/status && find /proc/" + pid +
                             "/task/*/fd -lname /srv/th/gpu0 | grep -c .") == "1";
  }));
  std::string pb = dir + "/pb.toml";
  ratchet::testing::write_file(pb, "name = \"th\"\ntargets = [\"lab\"]\n[[step]]\nid = \"free\"\nkind = \"verify\"\n"
                                   "no_holders = \"/srv/th/gpu*\"\n  [[step.escalate]]\n  kind = \"kill\"\n"
                                   "  holders_of = \"/srv/th/gpu*\"\n  signal = \"TERM\"\n  wait = \"5s\"\n");
  std::string t = dir + "/t.jsonl";
  auto r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inventory(host, dir, "root", false) +
                  " -F none --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  json end = step_end(t, "free");
  REQUIRE(end.is_object());
  CHECK(end["status"] == "escalated");
  // The first check saw the thread group as the holder.
  bool seen = false;
  for (const auto& e : events(t, "evidence"))
    if (e["step"] == "free" && e.value("role", "") == "check" && e.contains("holders"))
      for (const auto& h : e["holders"]) seen |= std::to_string(h["pid"].get<long long>()) == pid;
  CHECK(seen);
  CHECK(on_host(host, "test -d /proc/" + pid + " || echo gone") == "gone");
}
