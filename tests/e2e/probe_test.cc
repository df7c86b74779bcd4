// `ratchet plan --probe` against a real sshd on 127.0.0.1 (issue 13): each
// step's verdict and evidence (holders, the write's diff with its secret
// masked, a verify's output), the exit codes, and read-only: the transcript
// holds only check commands and nothing the playbook targets changed. Only
// processes these tests start are ever named (stand-in device files under
// the test's temp dir).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "support/systemd_fixture.h"
#include "transcript/reader.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

struct ProbeEnv {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-probe");
  std::string inv = dir + "/inventory.toml";

  ProbeEnv() {
    chmod(dir.c_str(), 0755);
    std::filesystem::create_directories(dir + "/dev");
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
  }
  std::string playbook(const std::string& body) {
    std::string p = dir + "/probe.toml";
    write_file(p, body);
    return p;
  }
  ShellResult probe(const std::string& pb, const std::string& extra = "") {
    return run_sh("PROBE_TOKEN=hunter2-secret-value " + std::string(RATCHET_BINARY) + " plan " + pb + " --probe -i " +
                  inv + " -F none " + extra);
  }
};

/// content, mode and mtime (ns) of a file: what a probe must leave as it was.
std::string file_state(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "absent";
  return read_file(path) + "|" + std::to_string(st.st_mode) + "|" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace

TEST_CASE("plan --probe names holders and the write's diff and changes nothing", "[ssh][probe]") {
  ProbeEnv e;
  const std::string d = e.dir;
  write_file(d + "/dev/gpu0", "");
  OwnedProcess holder("exec sleep 300 3<" + d + "/dev/gpu0");  // holds the stand-in device
  OwnedProcess server("exec sleep 301");
  REQUIRE(eventually([&] { return holder.alive() && server.alive(); }));
  REQUIRE(eventually([&] {
    return std::filesystem::exists("/proc/" + std::to_string(holder.pid()) + "/fd/3");
  }));
  write_file(d + "/server.pid", std::to_string(server.pid()) + "\n");
  write_file(d + "/notes.txt", "line one\nold line\nline three\n");
  chmod((d + "/notes.txt").c_str(), 0640);
  const std::string pb = e.playbook(
      "name = \"probe\"\n"
      "[secrets]\ntoken = \"env:PROBE_TOKEN\"\n"
      "[[step]]\nid = \"kill_holders\"\nkind = \"kill\"\nholders_of = [\"" + d + "/dev/gpu*\"]\nsignal = \"KILL\"\n"
      "[[step]]\nid = \"kill_server\"\nkind = \"kill\"\npid_file = \"" + d + "/server.pid\"\nsignal = \"KILL\"\n"
      "[[step]]\nid = \"gpus_free\"\nkind = \"verify\"\nno_holders = [\"" + d + "/dev/gpu*\"]\n"
      "[[step]]\nid = \"notes\"\nkind = \"write\"\npath = \"" + d + "/notes.txt\"\nmode = \"0644\"\n"
      "content = \"line one\\nnew line {{ token }}\\nline three\\n\"\n"
      "[[step]]\nid = \"fresh\"\nkind = \"write\"\npath = \"" + d + "/fresh.txt\"\ncontent = \"x\\n\"\n"
      "[[step]]\nid = \"inventory_there\"\nkind = \"verify\"\nfile_exists = [\"" + e.inv + "\"]\n"
      "[[step]]\nid = \"version\"\nkind = \"verify\"\ncommand = \"echo version 41\"\nstdout_matches = \"^version 42$\"\n"
      "[[step]]\nid = \"marker\"\nkind = \"run\"\ncommand = \"touch " + d + "/ran\"\n"
      "[[step]]\nid = \"skipped_one\"\nkind = \"run\"\nprobe = false\ncommand = \"touch " + d + "/ran2\"\n"
      "unless = \"touch " + d + "/ran3\"\n"
      "[[step]]\nid = \"server_gone\"\nkind = \"verify\"\ncommand = \"! kill -0 $(cat " + d + "/server.pid)\"\n"
      "[[step]]\nid = \"held_again\"\nkind = \"verify\"\nno_holders = [\"" + d + "/dev/gpu*\"]\n");
  const std::string before_notes = file_state(d + "/notes.txt"), before_pid = file_state(d + "/server.pid");
  const std::string t = d + "/probe.jsonl";
  auto r = e.probe(pb, "--transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  // kill: the holder is named with its PID; the PID file's process too.
  CHECK(r.out.find("1. kill_holders [kill] would act") != std::string::npos);
  CHECK(r.out.find("holder    PID " + std::to_string(holder.pid()) + " sleep") != std::string::npos);
  CHECK(r.out.find("holder    PID " + std::to_string(server.pid()) + " sleep") != std::string::npos);
  CHECK(r.out.find("would run: ratchet_kill --signal KILL") != std::string::npos);
  // gpus_free reads what kill_holders would change.
  CHECK(r.out.find("3. gpus_free [verify] would fail (no action or rung follows): 1 process(es) hold the files  (depends on kill_holders") !=
        std::string::npos);
  // write: the diff, the secret's line masked, and the host's line at its place; a new file would be created.
  CHECK(r.out.find(" line one\n") != std::string::npos);
  CHECK(r.out.find("-***\n") != std::string::npos);
  CHECK(r.out.find("+***\n") != std::string::npos);
  CHECK(r.out.find("old line") == std::string::npos);
  CHECK(r.out.find("hunter2") == std::string::npos);
  CHECK(r.out.find("5. fresh [write] would act: file does not exist") != std::string::npos);
  CHECK(r.out.find("would create the file") != std::string::npos);
  CHECK(r.out.find("6. inventory_there [verify] ok") != std::string::npos);
  CHECK(r.out.find("7. version [verify] would fail (no action or rung follows): stdout does not match /^version 42$/") != std::string::npos);
  CHECK(r.out.find("output  | version 41") != std::string::npos);
  CHECK(r.out.find("8. marker [run] would act (no check: runs every time)") != std::string::npos);
  CHECK(r.out.find("9. skipped_one [run] not probed") != std::string::npos);
  // A PID file read through $(cat ...) links to the kill that names it; a
  // verify with no action or rung (gpus_free) changes nothing, so no one
  // depends on it.
  CHECK(r.out.find("10. server_gone [verify] would fail (no action or rung follows): exit 1  (depends on kill_server: "
                   "shows the state now)") != std::string::npos);
  CHECK(r.out.find("11. held_again [verify] would fail (no action or rung follows): 1 process(es) hold the files  "
                   "(depends on kill_holders: shows the state now)") != std::string::npos);

  // Read-only: the processes live, the files are as they were, nothing ran.
  CHECK(holder.alive());
  CHECK(server.alive());
  CHECK(file_state(d + "/notes.txt") == before_notes);
  CHECK(file_state(d + "/server.pid") == before_pid);
  CHECK(!std::filesystem::exists(d + "/fresh.txt"));
  CHECK(!std::filesystem::exists(d + "/ran"));
  CHECK(!std::filesystem::exists(d + "/ran2"));
  CHECK(!std::filesystem::exists(d + "/ran3"));
  for (const auto& f : std::filesystem::directory_iterator(d))
    CHECK(f.path().filename().string().rfind(".ratchet-write", 0) != 0);  // no temp file left

  // The transcript: mode probe, only check commands, the secret never in it.
  auto tr = ratchet::transcript::read_transcript(t);
  REQUIRE(!tr.events.empty());
  CHECK(tr.events.front()["event"] == "run_start");
  CHECK(tr.events.front()["mode"] == "probe");
  int commands = 0;
  for (const auto& ev : tr.events)
    if (ev["event"] == "command") {
      ++commands;
      CHECK(ev["role"] == "check");
    }
  CHECK(commands >= 7);
  CHECK(read_file(t).find("hunter2") == std::string::npos);
  CHECK(tr.events.back()["event"] == "run_end");
  CHECK(tr.events.back()["exit_code"] == 0);
}

TEST_CASE("plan --probe --json gives each step's verdict and evidence", "[ssh][probe]") {
  ProbeEnv e;
  SilentListener listener;
  const std::string d = e.dir;
  write_file(d + "/dev/gpu0", "");
  OwnedProcess holder("exec sleep 300 3<" + d + "/dev/gpu0");
  REQUIRE(eventually([&] { return std::filesystem::exists("/proc/" + std::to_string(holder.pid()) + "/fd/3"); }));
  const std::string pb = e.playbook(
      "name = \"probe\"\n"
      "[[step]]\nid = \"gpus_free\"\nkind = \"verify\"\nno_holders = [\"" + d + "/dev/gpu*\"]\n"
      "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = [\"" + d + "/dev/gpu*\"]\n"
      "[[step]]\nid = \"there\"\nkind = \"verify\"\nfile_exists = [\"" + d + "/dev/gpu0\"]\n"
      "[[step]]\nid = \"port\"\nkind = \"verify\"\nport_free = [" + std::to_string(listener.port()) + "]\n"
      "[[step]]\nid = \"mode\"\nkind = \"write\"\npath = \"" + d + "/m.txt\"\ncontent = \"x\\n\"\nmode = \"0644\"\n"
      "[[step]]\nid = \"ctl\"\nkind = \"write\"\npath = \"" + d + "/ctl.txt\"\ncontent = \"a\\n\"\n"
      "[[step]]\nid = \"noisy\"\nkind = \"verify\"\ncommand = \"echo to-out; echo to-err >&2; false\"\n");
  write_file(d + "/m.txt", "x\n");
  write_file(d + "/ctl.txt", "a\x01\x1b[2Jb\n" + std::string(5000, 'y') + "\n");
  chmod((d + "/m.txt").c_str(), 0600);
  auto r = e.probe(pb, "--json");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  auto doc = json::parse(r.out);
  CHECK(doc["mode"] == "probe");
  REQUIRE(doc["hosts"].size() == 1);
  const auto& steps = doc["hosts"][0]["steps"];
  REQUIRE(steps.size() == 6);
  CHECK(steps[0]["verdict"] == "would_act");
  CHECK_FALSE(steps[0].contains("no_remedy"));  // rung 1 kills the holders
  REQUIRE(steps[0]["holders"].size() == 1);
  CHECK(steps[0]["holders"][0]["pid"] == holder.pid());
  CHECK(steps[0]["rung"].get<std::string>().rfind("ratchet_kill --signal TERM", 0) == 0);
  CHECK(steps[1]["verdict"] == "ok");
  CHECK(holder.alive());
  // A busy port names who listens on it (this test process holds the socket).
  CHECK(steps[2]["verdict"] == "would_act");
  CHECK(steps[2]["no_remedy"] == true);
  CHECK(steps[2]["reason"] == "exit 1: port " + std::to_string(listener.port()) + " is in use");
  REQUIRE(steps[2]["holders"].size() == 1);
  CHECK(steps[2]["holders"][0]["pid"] == getpid());
  CHECK(steps[2]["holders"][0]["files"] == json::array({"tcp port " + std::to_string(listener.port())}));
  CHECK(steps[2]["output"].get<std::string>().find("holder\t") == std::string::npos);
  // Mode, owner and group that would change are lines of the diff.
  CHECK(steps[3]["verdict"] == "would_act");
  CHECK(steps[3]["reason"] == "mode is 600");
  CHECK(steps[3]["diff"] == "mode 600 -> 644\n");
  // Control bytes in a diff show as \xNN; a 5000-byte line is cut.
  const std::string diff = steps[4]["diff"];
  CHECK(diff.find("-a\\x01\\x1b[2Jb\n") != std::string::npos);
  CHECK(diff.find("\x1b") == std::string::npos);
  CHECK(diff.find("-" + std::string(399, 'y') + "…\n") != std::string::npos);
  CHECK(diff.find(std::string(400, 'y')) == std::string::npos);
  // A failing command's stdout and stderr are both evidence.
  CHECK(steps[5]["output"] == "to-out\nstderr: to-err\n");
}

TEST_CASE("plan --probe exits 1 when a check could not look and 3 when a host is unreachable", "[ssh][probe]") {
  ProbeEnv e;
  // A glob that matches nothing: the check cannot look (fail-closed), never ok.
  auto r = e.probe(e.playbook("name = \"probe\"\n[[step]]\nid = \"gone\"\nkind = \"verify\"\nno_holders = [\"" +
                              e.dir + "/none/gpu*\"]\n"));
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.out.find("1. gone [verify] could not check: ") != std::string::npos);
  CHECK(r.out.find("could not check: could not check") == std::string::npos);

  const int port = free_port();
  const std::string inv2 = e.dir + "/down.toml";
  write_file(inv2, "[hosts.down]\naddress = \"127.0.0.1\"\nport = " + std::to_string(port) +
                       "\nuser = \"root\"\nidentity = \"" + e.sshd.client_key() + "\"\n");
  auto u = run_sh(std::string(RATCHET_BINARY) + " plan " + e.dir + "/probe.toml --probe -i " + inv2 +
                  " -F none --connect-timeout 5s");
  INFO(u.out << u.err);
  CHECK(u.code == 3);
  CHECK(u.out.find("host down: unreachable: ") != std::string::npos);
}

TEST_CASE("plain plan refuses --transcript - plan --probe --out refuses an empty --out", "[probe]") {
  std::string d = temp_dir("ratchet-probe-usage");
  write_file(d + "/p.toml", "name = \"p\"\n[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = \"true\"\n");
  auto r = run_sh(std::string(RATCHET_BINARY) + " plan " + d + "/p.toml --target 127.0.0.1 --probe --out ''");
  CHECK(r.code == 2);
  CHECK(r.err.find("--out is empty") != std::string::npos);
  auto t = run_sh(std::string(RATCHET_BINARY) + " plan " + d + "/p.toml --target 127.0.0.1 --transcript " + d +
                  "/t.jsonl");
  CHECK(t.code == 2);
  CHECK(t.err.find("need --probe") != std::string::npos);
}

TEST_CASE("plan --probe of gpu-release on a real systemd host names the orphan and changes nothing",
          "[systemd][probe]") {
  ratchet::testing::SystemdHost host;
  auto scene = host.stage_inference();
  const std::string dir = temp_dir("ratchet-probe-lab");
  const std::string inv = dir + "/inventory.toml";
  std::ofstream(inv) << "[hosts.lab]\naddress = \"127.0.0.1\"\nport = " << host.port()
                     << "\nuser = \"root\"\nidentity = \"" << host.client_key() << "\"\nknown_hosts = \""
                     << host.known_hosts() << "\"\n\n[groups]\ngpu = [\"lab\"]\n";
  const std::string cmd = std::string(RATCHET_BINARY) + " plan " + RATCHET_SOURCE_DIR +
                          "/playbooks/gpu-release.toml --probe -i " + inv + " -e 'devices=[\"" +
                          scene.at("DEVICE_GLOB") + "\"]' ";
  // What the runbook targets, as the host sees it: the unit, the notes, the PID file, the staged processes.
  auto state = [&] {
    std::string out;
    host.ssh("systemctl is-active inference; systemctl is-enabled inference; "
             "stat -c '%s %a %U %Y' /root/production.md " + scene.at("PID_FILE") +
             " /etc/systemd/system/inference.service 2>&1; for p in " + scene.at("SERVER_PID") + " " +
             scene.at("CHILD_PID") + " " + scene.at("WORKER_PID") + " " + scene.at("KEEP_PID") +
             "; do awk '{print $1, $3, $22}' /proc/$p/stat; done",
             &out);
    return out;
  };
  const std::string before = state();
  const std::string t = dir + "/probe.jsonl";
  auto r = run_sh(cmd + "--transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("kill_server [kill] would act") != std::string::npos);
  CHECK(r.out.find("holder    PID " + scene.at("SERVER_PID") + " ") != std::string::npos);
  CHECK(r.out.find("gpus_free [verify] would act") != std::string::npos);
  CHECK(r.out.find("holder    PID " + scene.at("WORKER_PID") + " ") != std::string::npos);
  CHECK(r.out.find("notes [write] would act: file does not exist") != std::string::npos);
  CHECK(r.out.find("enable [service] would act") != std::string::npos);
  CHECK(r.out.find("start [service] would act") != std::string::npos);
  CHECK(state() == before);
  for (const auto& ev : ratchet::transcript::read_transcript(t).events)
    if (ev["event"] == "command") CHECK(ev["role"] == "check");

  // After a run, every step whose state holds says ok.
  auto run = run_sh(std::string(RATCHET_BINARY) + " run " + RATCHET_SOURCE_DIR + "/playbooks/gpu-release.toml -i " +
                    inv + " -e 'devices=[\"" + scene.at("DEVICE_GLOB") + "\"]' --transcript " + dir + "/run.jsonl");
  REQUIRE(run.code == 0);
  auto again = run_sh(cmd);
  INFO(again.out << again.err);
  CHECK(again.code == 0);
  // (gpus_free would act again: the unit the run started holds the devices now.)
  for (const char* s : {"kill_server [kill] ok", "unit_file [service] ok",
                        "enable [service] ok", "start [service] ok", "active [verify] ok"})
    CHECK(again.out.find(s) != std::string::npos);
}

TEST_CASE("plan --probe as a non-root login that cannot see root's holder says could not check - with become it "
          "names the holder",
          "[systemd][probe]") {
  ratchet::testing::SystemdHost host;
  const std::string dir = temp_dir("ratchet-probe-alice");
  REQUIRE(run_sh(ratchet::testing::SystemdHost::script() + " add-user " + host.state_dir() + " alice nopasswd").code ==
          0);
  auto on_host = [&](const std::string& cmd) {
    std::string out;
    host.ssh(cmd, &out);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  };
  REQUIRE(on_host("mkdir -p /srv/pr && chmod 755 /srv/pr && : > /srv/pr/gpu0 && chmod 644 /srv/pr/gpu0 && echo ok") ==
          "ok");
  const std::string holder = on_host("setsid sh -c 'exec 3</srv/pr/gpu0; exec sleep 300' </dev/null >/dev/null 2>&1 & echo $!");
  REQUIRE(!holder.empty());
  REQUIRE(eventually([&] { return on_host("find /proc/" + holder + "/fd -lname /srv/pr/gpu0 | wc -l") == "1"; }));
  const std::string pb = dir + "/pb.toml";
  write_file(pb, "name = \"pr\"\n[[step]]\nid = \"free\"\nkind = \"verify\"\nno_holders = \"/srv/pr/gpu*\"\n"
                 "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = \"/srv/pr/gpu*\"\n  signal = \"KILL\"\n");
  auto inv = [&](bool become) {
    std::string p = dir + (become ? "/inv-become.toml" : "/inv.toml");
    std::ofstream(p) << "[hosts.lab]\naddress = \"127.0.0.1\"\nport = " << host.port()
                     << "\nuser = \"alice\"\nidentity = \"" << host.client_key() << "\"\nknown_hosts = \""
                     << host.known_hosts() << "\"\nbecome = " << (become ? "true" : "false") << "\n";
    return p;
  };
  auto r = run_sh(std::string(RATCHET_BINARY) + " plan " + pb + " --probe -i " + inv(false) + " -F none");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.out.find("1. free [verify] could not check: ") != std::string::npos);
  CHECK(r.out.find("unreadable as alice") != std::string::npos);

  const std::string t = dir + "/become.jsonl";
  auto b = run_sh(std::string(RATCHET_BINARY) + " plan " + pb + " --probe -i " + inv(true) + " -F none --transcript " + t);
  INFO(b.out << b.err);
  CHECK(b.code == 0);
  CHECK(b.out.find("1. free [verify] would act: 1 process(es) hold the files") != std::string::npos);
  CHECK(b.out.find("holder    PID " + holder + " sleep (user root") != std::string::npos);
  auto shown = run_sh(std::string(RATCHET_BINARY) + " show " + t);
  INFO(shown.out << shown.err);
  CHECK(shown.out.rfind("probe ", 0) == 0);  // a probe's transcript never reads as a run
  CHECK(shown.out.find("read-only: each step's check sent once") != std::string::npos);
  for (const auto& ev : ratchet::transcript::read_transcript(t).events)
    if (ev["event"] == "command") CHECK((ev["role"] == "check" || ev["role"] == "become_probe"));
  CHECK(on_host("test -d /proc/" + holder + " && echo alive") == "alive");
  on_host("kill -KILL " + holder);  // the holder this test started, by its PID
}

TEST_CASE("probe: a kill with tree = true lists every process the run signals and a survivor is named in the reason and "
          "the recap",
          "[e2e][probe][kill]") {
  ProbeEnv e;
  const std::string d = e.dir;
  // A server (its own session's leader, as OwnedProcess starts it) whose child ignores TERM.
  OwnedProcess server("sh -c 'trap \"\" TERM; exec sleep 300' & echo $! > " + d + "/child.pid; wait");
  long child = 0;
  REQUIRE(eventually([&] {
    std::string s = read_file(d + "/child.pid");
    if (s.empty() || s.back() != '\n') return false;
    child = std::stol(s);
    return read_file("/proc/" + std::to_string(child) + "/comm") == "sleep\n";  // TERM ignored from here on
  }));
  const std::string sp = std::to_string(server.pid()), cp = std::to_string(child);
  const std::string pb = e.playbook("name = \"tree\"\n[[step]]\nid = \"kill_server\"\nkind = \"kill\"\npid = " + sp +
                                    "\ntree = true\nwait = \"1s\"\n");
  auto r = e.probe(pb);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("1. kill_server [kill] would act: 2 selected process(es) still alive: PID " + sp + " (sh -c ") !=
        std::string::npos);
  CHECK(r.out.find("holder    PID " + sp + " sh") != std::string::npos);
  CHECK(r.out.find("holder    PID " + cp + " sleep") != std::string::npos);  // the tree's member, as run selects it
  CHECK(server.alive());

  // The run signals both; the child survives TERM and is named, with its command, in the reason and the recap.
  const std::string t = d + "/run.jsonl";
  auto run = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + e.inv + " -F none --transcript " + t);
  INFO(run.out << run.err);
  CHECK(run.code == 1);
  CHECK(eventually([&] { return !server.alive(); }));
  CHECK(::kill(static_cast<pid_t>(child), 0) == 0);
  const std::string named = "1 selected process(es) still alive: PID " + cp + " (sleep 300)";
  CHECK(run.out.find(named) != std::string::npos);
  std::string reason;
  for (const auto& ev : ratchet::transcript::read_transcript(t).events)
    if (ev["event"] == "step_end" && ev["step"] == "kill_server") reason = ev.value("reason", "");
  CHECK(reason.find(named) != std::string::npos);
  ::kill(static_cast<pid_t>(child), SIGKILL);  // ours: this test started it (server.stop() would too)
}

TEST_CASE("run --transcript /dev/null prints the digests but never suggests checking /dev/null", "[e2e][cli]") {
  ProbeEnv e;
  const std::string pb = e.playbook("name = \"null\"\n[[step]]\nid = \"hi\"\nkind = \"run\"\ncommand = \"echo hi\"\n");
  auto r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + e.inv + " -F none --transcript /dev/null");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("final head (the whole run, up to its run_end): ") != std::string::npos);
  CHECK(r.out.find("/dev/null --digest") == std::string::npos);
  CHECK(r.out.find("show --verify") == std::string::npos);
  CHECK(r.out.find("the transcript went to /dev/null, which keeps no file: nothing can be checked against these "
                   "digests (give --transcript a file to keep one)\n") != std::string::npos);
}
