// The service kind on a real systemd host (issue 11, item 2): a unit whose
// file changed on disk is reloaded (daemon-reload, recorded) and, when active
// on its old definition, restarted; a unit stuck in a transitional state is
// judged after `transition_wait`, with the state in the reason; processes left
// in a stopped unit's cgroup are evidence on the step.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/systemd_fixture.h"
#include "transcript/reader.h"

using ratchet::testing::run_sh;
using ratchet::testing::SystemdHost;
using nlohmann::json;

namespace {

struct Lab {
  SystemdHost host;
  std::string dir = ratchet::testing::temp_dir("ratchet-service");
  std::string inv = dir + "/inv.toml";
  Lab() {
    std::ofstream(inv) << "[hosts.lab]\naddress = \"127.0.0.1\"\nport = " << host.port()
                       << "\nuser = \"root\"\nidentity = \"" << host.client_key() << "\"\nknown_hosts = \""
                       << host.known_hosts() << "\"\n";
  }
  std::string sh(const std::string& cmd) {
    std::string out;
    host.ssh(cmd, &out);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  /// Writes /etc/systemd/system/NAME.service (no daemon-reload).
  void unit(const std::string& name, const std::string& body) {
    ratchet::testing::write_file(dir + "/" + name, body);
    REQUIRE(run_sh("ssh -o BatchMode=yes -o UserKnownHostsFile=" + host.known_hosts() + " -i " + host.client_key() +
                   " -p " + std::to_string(host.port()) + " root@127.0.0.1 'cat > /etc/systemd/system/" + name +
                   ".service' < " + dir + "/" + name)
                .code == 0);
  }
  ratchet::testing::ShellResult run(const std::string& steps, const std::string& t) {
    std::string pb = dir + "/pb.toml";
    ratchet::testing::write_file(pb, "name = \"svc\"\ntargets = [\"lab\"]\n" + steps);
    return run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inv + " -F none --transcript " + t);
  }
};

std::vector<json> events(const std::string& t, const std::string& kind, const std::string& step) {
  std::vector<json> out;
  for (const auto& e : ratchet::transcript::read_transcript(t).events)
    if (e["event"] == kind && e.value("step", "") == step) out.push_back(e);
  return out;
}

std::string stdout_of(const std::string& t, const std::string& step) {
  std::string out;
  for (const auto& e : events(t, "output", step))
    if (e["stream"] == "stdout") out += e.value("data", "");
  return out;
}

}  // namespace

TEST_CASE("service: a unit file changed on disk is reloaded and the active unit restarted on its new definition",
          "[systemd][e2e]") {
  Lab lab;
  lab.unit("fc", "[Service]\nExecStart=/bin/sh -c 'echo one > /run/fc.out; exec sleep 300'\n");
  REQUIRE(lab.sh("systemctl daemon-reload && systemctl start fc && echo started") == "started");
  REQUIRE(ratchet::testing::eventually([&] { return lab.sh("cat /run/fc.out 2>/dev/null") == "one"; }));
  // A person edits the unit and forgets daemon-reload: systemd still runs the old one.
  lab.unit("fc", "[Service]\nExecStart=/bin/sh -c 'echo two > /run/fc.out; exec sleep 300'\n");
  REQUIRE(lab.sh("systemctl show -p NeedDaemonReload --value fc") == "yes");

  std::string t = lab.dir + "/t.jsonl";
  auto r = lab.run("[[step]]\nid = \"up\"\nkind = \"service\"\nunit = \"fc\"\nstate = \"started\"\n", t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  auto end = events(t, "step_end", "up");
  REQUIRE(end.size() == 1);
  CHECK(end[0]["status"] == "changed");
  // The first check said why it acted.
  auto ev = events(t, "evidence", "up");
  REQUIRE(!ev.empty());
  CHECK(ev[0].value("note", "") ==
        "active on an old definition: the unit's file changed on disk (NeedDaemonReload=yes)");
  const std::string out = stdout_of(t, "up");
  CHECK(out.find("ratchet: daemon-reload: fc changed on disk since systemd loaded it\n") != std::string::npos);
  CHECK(out.find("ratchet: restart: fc was active on its old definition\n") != std::string::npos);
  CHECK(ratchet::testing::eventually([&] { return lab.sh("cat /run/fc.out") == "two"; }));
  CHECK(lab.sh("systemctl show -p NeedDaemonReload --value fc") == "no");

  // Run again: nothing to do.
  r = lab.run("[[step]]\nid = \"up\"\nkind = \"service\"\nunit = \"fc\"\nstate = \"started\"\n", lab.dir + "/t2.jsonl");
  CHECK(r.code == 0);
  CHECK(events(lab.dir + "/t2.jsonl", "step_end", "up")[0]["status"] == "ok");
}

TEST_CASE("service: a unit stuck activating is judged after transition_wait and the reason names its state",
          "[systemd][e2e]") {
  Lab lab;
  lab.unit("stuck", "[Service]\nExecStartPre=/bin/sleep 300\nExecStart=/bin/sleep 300\n");
  REQUIRE(lab.sh("systemctl daemon-reload && systemctl start --no-block stuck && sleep 0.5; systemctl is-active stuck; true") ==
          "activating");
  std::string t = lab.dir + "/t.jsonl";
  auto t0 = std::chrono::steady_clock::now();
  auto r = lab.run("[[step]]\nid = \"up\"\nkind = \"service\"\nunit = \"stuck\"\nstate = \"started\"\n"
                   "transition_wait = \"2s\"\ntimeout = \"4s\"\n",
                   t);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(secs < 30);
  auto ev = events(t, "evidence", "up");
  REQUIRE(!ev.empty());
  const std::string note = ev[0].value("note", "");
  CHECK(note.rfind("activating (start-pre) for ", 0) == 0);
  // The first check took about transition_wait, not the command's timeout.
  auto exits = events(t, "exit", "up");
  REQUIRE(!exits.empty());
  CHECK(exits[0]["ms"].get<long long>() >= 2000);
  CHECK(exits[0]["ms"].get<long long>() < 4000);
  lab.sh("systemctl stop --no-block stuck; true");

  // A stop that hangs (ExecStop never returns): the check is bounded the same way.
  lab.unit("hangstop", "[Service]\nExecStart=/bin/sleep 300\nExecStop=/bin/sleep 300\n");
  REQUIRE(lab.sh("systemctl daemon-reload && systemctl start hangstop && systemctl stop --no-block hangstop && sleep 0.5; "
                 "systemctl is-active hangstop; true") == "deactivating");
  t = lab.dir + "/stop.jsonl";
  r = lab.run("[[step]]\nid = \"down\"\nkind = \"service\"\nunit = \"hangstop\"\nstate = \"stopped\"\n"
              "transition_wait = \"2s\"\ntimeout = \"4s\"\n",
              t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  ev = events(t, "evidence", "down");
  REQUIRE(!ev.empty());
  CHECK(ev[0].value("note", "").rfind("deactivating (stop) for ", 0) == 0);
  exits = events(t, "exit", "down");
  REQUIRE(!exits.empty());
  CHECK(exits[0]["ms"].get<long long>() < 4000);
}

TEST_CASE("service: processes left in a stopped unit's cgroup are evidence on the step", "[systemd][e2e]") {
  Lab lab;
  lab.unit("leaky", "[Service]\nKillMode=process\nExecStart=/bin/sh -c 'sleep 300 & echo $! > /run/leaky.child; "
                    "exec sleep 301'\n");
  REQUIRE(lab.sh("systemctl daemon-reload && systemctl start leaky && systemctl is-active leaky") == "active");
  REQUIRE(ratchet::testing::eventually([&] { return !lab.sh("cat /run/leaky.child 2>/dev/null").empty(); }));
  const std::string child = lab.sh("cat /run/leaky.child");
  std::string t = lab.dir + "/t.jsonl";
  auto r = lab.run("[[step]]\nid = \"down\"\nkind = \"service\"\nunit = \"leaky\"\nstate = \"stopped\"\n", t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(events(t, "step_end", "down")[0]["status"] == "changed");
  std::string notes;
  for (const auto& e : events(t, "evidence", "down")) notes += e.value("note", "") + "\n";
  CHECK(notes.find("1 process(es) left in the unit's cgroup: PID " + child + " (sleep)") != std::string::npos);
  lab.sh("kill " + child + "; true");
}

TEST_CASE("kill holders_of a Restart=always unit's process: its owner is the unit, the kill is said to be undone "
          "and the respawn is named with the unit (issue 27, item 2 and R18)",
          "[systemd][e2e]") {
  Lab lab;
  REQUIRE(lab.sh("touch /run/r27-standin && echo ok") == "ok");
  lab.unit("r27gpu", "[Service]\nRestart=always\nRestartSec=200ms\nExecStart=/bin/sh -c 'exec sleep 100700 3</run/r27-standin'\n");
  REQUIRE(lab.sh("systemctl daemon-reload && systemctl start r27gpu && systemctl is-active r27gpu") == "active");
  std::string first;
  REQUIRE(ratchet::testing::eventually([&] {
    first = lab.sh("systemctl show -p MainPID --value r27gpu");
    return first != "0" && !lab.sh("ls -l /proc/" + first + "/fd | grep r27-standin").empty();
  }));
  std::string t = lab.dir + "/t.jsonl";
  // settle: the check after the kill waits for systemd's restart (RestartSec).
  auto r = lab.run("[[step]]\nid = \"free\"\nkind = \"kill\"\nsignal = \"KILL\"\nwait = \"2s\"\nsettle = \"1500ms\"\n"
                   "holders_of = \"/run/r27-standin\"\non_failure = \"continue\"\n"
                   "[[step]]\nid = \"who\"\nkind = \"run\"\n"
                   "command = \"echo {{ steps.free.holders.0.owner.unit }} {{ steps.free.holders_left.0.owner.restarts }}\"\n",
                   t);
  INFO(r.out << r.err);
  lab.sh("systemctl stop r27gpu; rm -f /run/r27-standin");
  CHECK(r.code == 1);
  auto checks = events(t, "evidence", "free");
  REQUIRE(checks.size() >= 2);
  // The check before the kill: the holder, its unit, and the warning.
  REQUIRE(checks[0].contains("holders"));
  CHECK(checks[0]["holders"][0]["pid"].dump() == first);
  CHECK(checks[0]["holders"][0]["owner"] == json{{"kind", "unit"}, {"name", "r27gpu.service"}, {"scope", "system"},
                                                 {"restart", "always"}, {"unit", "r27gpu.service"}, {"restarts", true}});
  CHECK(checks[0]["note"].get<std::string>().find("PID " + first + " belongs to r27gpu.service (Restart=always): a kill "
                                                   "will be undone; stop the unit") != std::string::npos);
  const std::string reason = events(t, "step_end", "free")[0]["reason"];
  CHECK(reason.find("started after the signal: respawned by PID 1 (systemd) / unit r27gpu.service (Restart=always); "
                    "stop the unit instead") != std::string::npos);
  CHECK(reason.find("PID " + first + " ") == std::string::npos);  // the new PID, not the killed one
  CHECK(stdout_of(t, "who") == "r27gpu.service true\n");  // templates: steps.X.holders.N.owner
}

TEST_CASE("a holder in a user's own unit: its owner is that user unit, with its Restart=", "[systemd][e2e]") {
  Lab lab;
  REQUIRE(run_sh(SystemdHost::script() + " add-user " + lab.host.state_dir() + " r27user nopasswd").code == 0);
  const std::string as_user = "runuser -u r27user -- env XDG_RUNTIME_DIR=/run/user/$(id -u r27user) systemctl --user ";
  REQUIRE(lab.sh("touch /run/r27-user-standin && chmod 644 /run/r27-user-standin && loginctl enable-linger r27user && "
                 "mkdir -p /home/r27user/.config/systemd/user && printf '[Service]\\nRestart=on-failure\\n"
                 "ExecStart=/bin/sh -c \"exec sleep 100800 3</run/r27-user-standin\"\\n' > "
                 "/home/r27user/.config/systemd/user/r27job.service && chown -R r27user /home/r27user/.config && echo ok") ==
          "ok");
  REQUIRE(ratchet::testing::eventually([&] { return lab.sh("test -S /run/user/$(id -u r27user)/systemd/private && echo up") == "up"; }));
  REQUIRE(lab.sh(as_user + "daemon-reload && " + as_user + "start r27job && " + as_user + "is-active r27job") == "active");
  std::string pid;
  REQUIRE(ratchet::testing::eventually([&] {
    pid = lab.sh(as_user + "show -p MainPID --value r27job");
    return pid != "0" && !lab.sh("ls -l /proc/" + pid + "/fd | grep r27-user-standin").empty();
  }));
  std::string t = lab.dir + "/t.jsonl";
  auto r = lab.run("[[step]]\nid = \"free\"\nkind = \"verify\"\nno_holders = \"/run/r27-user-standin\"\n", t);
  INFO(r.out << r.err);
  lab.sh(as_user + "stop r27job; rm -f /run/r27-user-standin");
  CHECK(r.code == 1);
  auto ev = events(t, "evidence", "free");
  REQUIRE(ev.size() == 1);
  REQUIRE(ev[0]["holders"].size() == 1);
  CHECK(ev[0]["holders"][0]["pid"].dump() == pid);
  CHECK(ev[0]["holders"][0]["owner"] == json{{"kind", "unit"},       {"name", "r27job.service"},
                                             {"scope", "user"},      {"user", "r27user"},
                                             {"restart", "on-failure"}, {"unit", "r27job.service"},
                                             {"restarts", true}});
}
