// The service kind on a real systemd host (issue 11, item 2): a unit whose
// file changed on disk is reloaded (daemon-reload, recorded) and, when active
// on its old definition, restarted; a unit stuck in a transitional state is
// judged after `transition_wait`, with the state in the reason; processes left
// in a stopped unit's cgroup are evidence on the step.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <map>

#include "support/files.h"
#include "support/lab_session.h"
#include "support/local_proc.h"
#include "support/systemd_fixture.h"
#include "transcript/reader.h"

using ratchet::testing::run_sh;
using ratchet::testing::SystemdHost;
using nlohmann::json;

namespace {

struct Lab : ratchet::testing::LabSession {
  Lab() : LabSession("ratchet-service") {}
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

namespace {

/// A user of the lab host whose own systemd manager runs (lingering), with a
/// user unit in ~/.config/systemd/user/: GPUJOB.service, a sleep.
struct UserManagerLab : Lab {
  std::string uid;
  UserManagerLab() {
    auto r = run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " alice nopasswd");
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    uid = sh("id -u alice");
    REQUIRE(sh("loginctl enable-linger alice && echo on") == "on");
    REQUIRE(ratchet::testing::eventually([&] { return sh("test -S /run/user/" + uid + "/systemd/private && echo up") == "up"; }));
    REQUIRE(sh("su - alice -c 'mkdir -p ~/.config/systemd/user && printf \"[Service]\\nExecStart=/bin/sleep 300\\n\" "
               "> ~/.config/systemd/user/gpujob.service' && echo made") == "made");
  }
  /// systemctl --user of alice's manager, as alice (the test's own way in).
  std::string user_ctl(const std::string& args) {
    return sh("setpriv --reuid=alice --regid=alice --init-groups env XDG_RUNTIME_DIR=/run/user/" + uid +
              " systemctl --user " + args + "; true");
  }
  /// An inventory that logs in as alice herself.
  std::string inv_alice() {
    std::string p = dir + "/inv-alice.toml";
    std::ofstream(p) << "[hosts.lab]\naddress = \"127.0.0.1\"\nport = " << host.port() << "\nuser = \"alice\"\nidentity = \""
                     << host.client_key() << "\"\nknown_hosts = \"" << host.known_hosts() << "\"\n";
    return p;
  }
};

}  // namespace

TEST_CASE("service scope = \"user\" reaches the user's own manager - a system check of a user unit says whose it is",
          "[systemd][e2e]") {
  UserManagerLab lab;
  const std::string user_step = "[[step]]\nid = \"job\"\nkind = \"service\"\nunit = \"gpujob\"\nscope = \"user\"\n"
                                "user = \"alice\"\n";
  // plan prints the exact commands: the library's --user NAME (ratchet_sd_user).
  {
    std::string pb = lab.dir + "/plan.toml";
    ratchet::testing::write_file(pb, "name = \"svc\"\ntargets = [\"lab\"]\n" + user_step + "state = \"started\"\n");
    auto p = run_sh(std::string(RATCHET_BINARY) + " plan " + pb + " -i " + lab.inv + " -F none");
    INFO(p.out << p.err);
    CHECK(p.code == 0);
    CHECK(p.out.find("ratchet_service_state --user alice gpujob '' 30000") != std::string::npos);
    CHECK(p.out.find("ratchet_service --user alice start gpujob") != std::string::npos);
  }
  // As root (setpriv to alice over her manager's private socket).
  std::string t = lab.dir + "/start.jsonl";
  auto r = lab.run(user_step + "state = \"started\"\n", t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(events(t, "step_end", "job")[0]["status"] == "changed");
  CHECK(lab.user_ctl("is-active gpujob") == "active");
  CHECK(lab.sh("systemctl show -p LoadState --value gpujob") == "not-found");  // no system unit by that name

  // The system manager's check of that name: not "not found: counts as stopped".
  const std::string words =
      "could not check: not a system unit; runs as a user unit of alice: set scope = \"user\", user = \"alice\"";
  t = lab.dir + "/system.jsonl";
  r = lab.run("[[step]]\nid = \"sys\"\nkind = \"service\"\nunit = \"gpujob\"\nstate = \"stopped\"\n"
              "on_failure = \"continue\"\n"
              "[[step]]\nid = \"active\"\nkind = \"verify\"\nservice_active = [\"gpujob.service\"]\n",
              t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  auto end = events(t, "step_end", "sys");
  REQUIRE(end.size() == 1);
  CHECK(end[0]["status"] == "failed");
  CHECK(end[0].value("reason", "") == words);
  CHECK(events(t, "step_end", "active")[0].value("reason", "") ==
        "could not check: gpujob.service is not a system unit; runs as a user unit of alice");
  for (const auto& e : events(t, "command", "sys")) CHECK(e["role"] == "check");  // nothing was stopped
  CHECK(lab.user_ctl("is-active gpujob") == "active");
  // plan --probe says it too, with the evidence.
  {
    std::string pb = lab.dir + "/probe.toml";
    ratchet::testing::write_file(pb, "name = \"svc\"\ntargets = [\"lab\"]\n[[step]]\nid = \"sys\"\nkind = \"service\"\n"
                                     "unit = \"gpujob\"\nstate = \"stopped\"\n");
    auto p = run_sh(std::string(RATCHET_BINARY) + " plan " + pb + " --probe --json -i " + lab.inv + " -F none");
    INFO(p.out << p.err);
    CHECK(p.code == 1);
    auto s = nlohmann::json::parse(p.out)["hosts"][0]["steps"][0];
    CHECK(s["verdict"] == "could_not_check");
    CHECK("could not check: " + s.value("reason", "") == words);
    CHECK(s["state"]["runs as a user unit of"] == "alice");
  }

  // Logged in as alice herself (no become): her manager, directly.
  t = lab.dir + "/stop.jsonl";
  std::string pb = lab.dir + "/pb-alice.toml";
  ratchet::testing::write_file(pb, "name = \"svc\"\ntargets = [\"lab\"]\n" + user_step + "state = \"stopped\"\n");
  r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + lab.inv_alice() + " -F none --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(events(t, "step_end", "job")[0]["status"] == "changed");
  CHECK(lab.user_ctl("is-active gpujob") == "inactive");
  // Now stopped, and no user runs it: the system check's "not found" counts as stopped again.
  r = lab.run("[[step]]\nid = \"sys\"\nkind = \"service\"\nunit = \"gpujob\"\nstate = \"stopped\"\n", lab.dir + "/s2.jsonl");
  CHECK(r.code == 0);
  CHECK(events(lab.dir + "/s2.jsonl", "step_end", "sys")[0].value("reason", "") == "unit not found: counts as stopped");
}

TEST_CASE("service scope = \"user\": a manager that is not running, or another user's, could not check - "
          "without setpriv root uses systemctl --user -M NAME@",
          "[systemd][e2e]") {
  UserManagerLab lab;
  // bob exists but neither lingers nor is logged in: no manager of his runs.
  auto a = run_sh(SystemdHost::script() + " add-user " + lab.host.state_dir() + " bob nopasswd");
  REQUIRE(a.code == 0);
  std::string t = lab.dir + "/bob.jsonl";
  auto r = lab.run("[[step]]\nid = \"bob\"\nkind = \"service\"\nunit = \"gpujob\"\nscope = \"user\"\nuser = \"bob\"\n"
                   "state = \"stopped\"\non_failure = \"continue\"\n"
                   "[[step]]\nid = \"nobody\"\nkind = \"service\"\nunit = \"gpujob\"\nscope = \"user\"\n"
                   "user = \"ratchet-no-such-user\"\nstate = \"stopped\"\n",
                   t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  const std::string bob_uid = lab.sh("id -u bob");
  CHECK(events(t, "step_end", "bob")[0].value("reason", "") ==
        "could not check: the systemd user manager of bob is not running (no /run/user/" + bob_uid +
            "/systemd/private): bob is not logged in and does not linger (loginctl enable-linger bob)");
  CHECK(events(t, "step_end", "nobody")[0].value("reason", "") ==
        "could not check: no user ratchet-no-such-user on this host (scope = \"user\")");
  // Logged in as alice, bob's manager (were it running) is not hers to ask.
  std::string pb = lab.dir + "/alice-bob.toml";
  ratchet::testing::write_file(pb, "name = \"svc\"\ntargets = [\"lab\"]\n[[step]]\nid = \"bob\"\nkind = \"service\"\n"
                                   "unit = \"gpujob\"\nscope = \"user\"\nuser = \"bob\"\nstate = \"stopped\"\n");
  t = lab.dir + "/alice-bob.jsonl";
  r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + lab.inv_alice() + " -F none --transcript " + t);
  CHECK(r.code == 1);
  CHECK(events(t, "step_end", "bob")[0].value("reason", "") ==
        "could not check: the systemd user manager of bob answers root or bob only, not alice (become = true)");

  // Root without setpriv: systemctl --user -M alice@, through alice's own D-Bus
  // (the user units of Debian's dbus-user-session; the lab's rootfs has dbus, not them).
  const std::map<std::string, std::string> units = {
      {"dbus.socket", "[Unit]\nDescription=D-Bus User Message Bus Socket\n[Socket]\nListenStream=%t/bus\n"
                      "ExecStartPost=-/bin/systemctl --user set-environment DBUS_SESSION_BUS_ADDRESS=unix:path=%t/bus\n"},
      {"dbus.service", "[Unit]\nDescription=D-Bus User Message Bus\nRequires=dbus.socket\n[Service]\nType=notify\n"
                       "NotifyAccess=main\nExecStart=/usr/bin/dbus-daemon --session --address=systemd: --nofork "
                       "--nopidfile --systemd-activation --syslog-only\n"}};
  for (const auto& [name, body] : units) {
    ratchet::testing::write_file(lab.dir + "/" + name, body);
    REQUIRE(run_sh("ssh -o BatchMode=yes -o UserKnownHostsFile=" + lab.host.known_hosts() + " -i " +
                   lab.host.client_key() + " -p " + std::to_string(lab.host.port()) +
                   " root@127.0.0.1 'cat > /etc/systemd/user/" + name + "' < " + lab.dir + "/" + name)
                .code == 0);
  }
  REQUIRE(lab.sh("mkdir -p /etc/systemd/user/sockets.target.wants && ln -sf /etc/systemd/user/dbus.socket "
                 "/etc/systemd/user/sockets.target.wants/ && systemctl restart user@" + lab.uid +
                 ".service && mv /usr/bin/setpriv /usr/bin/setpriv.off && echo ready") == "ready");
  REQUIRE(ratchet::testing::eventually([&] { return lab.sh("test -S /run/user/" + lab.uid + "/bus && echo up") == "up"; }));
  t = lab.dir + "/machine.jsonl";
  r = lab.run("[[step]]\nid = \"job\"\nkind = \"service\"\nunit = \"gpujob\"\nscope = \"user\"\nuser = \"alice\"\n"
              "state = \"started\"\n",
              t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(events(t, "step_end", "job")[0]["status"] == "changed");
  CHECK(lab.sh("systemctl --user -M alice@ is-active gpujob; true") == "active");
  lab.sh("mv /usr/bin/setpriv.off /usr/bin/setpriv");
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
