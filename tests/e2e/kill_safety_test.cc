// Kill safety against a real sshd on 127.0.0.1 (issue 4, item 4): a selector
// never widens. Bad PID files, a glob that matches nothing, a pattern that
// matches ratchet's own commands, a recycled PID, PID 1 and the SSH session's
// own processes each kill nothing and the step says why; holders_of honours
// `exclude` and `user`; another ratchet run's session shell and its readers
// are never selected (issue 26, item 5). Only processes these tests start are ever signalled
// (stand-in device files under the test's temp dir); where a protection could
// fail against a process not ours, the signal is CONT, which harms nothing.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"
#include "transport/transport.h"
#include "transport/wire.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

struct Env {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-killsafe");
  std::string inv = dir + "/inventory.toml";

  Env() {
    chmod(dir.c_str(), 0755);  // a holder running as nobody opens the stand-in devices
    std::filesystem::create_directories(dir + "/dev");
    chmod((dir + "/dev").c_str(), 0755);
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
  }
  std::string playbook(const std::string& name, const std::string& body) {
    std::string p = dir + "/" + name;
    write_file(p, body);
    return p;
  }
  ShellResult run(const std::string& pb, const std::string& t, const std::string& extra = "") {
    return run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inv + " -F none --transcript " + t + " " +
                  extra);
  }
  /// A stand-in device file (mode 0644) under dir/dev.
  std::string device(const std::string& name) {
    std::string p = dir + "/dev/" + name;
    write_file(p, "");
    chmod(p.c_str(), 0644);
    return p;
  }
};

/// A kill step that never stops the host (so every case of a playbook runs).
std::string kill_step(const std::string& id, const std::string& selector, const std::string& extra = "") {
  return "[[step]]\nid = \"" + id + "\"\nkind = \"kill\"\non_failure = \"continue\"\nwait = \"1s\"\n" + selector +
         "\n" + extra + "\n";
}

std::map<std::string, json> step_ends(const std::string& t) {
  std::map<std::string, json> out;
  for (const auto& ev : ratchet::transcript::read_transcript(t).events)
    if (ev["event"] == "step_end") out[ev["step"]] = ev;
  return out;
}

/// PIDs a kill action of `step` reported as signalled (evidence `signalled`).
std::set<long> signalled(const std::string& t, const std::string& step) {
  std::set<long> out;
  for (const auto& ev : ratchet::transcript::read_transcript(t).events)
    if (ev["event"] == "evidence" && ev["step"] == step && ev.contains("signalled"))
      for (const auto& p : ev["signalled"]) out.insert(std::stol(p["pid"].is_string() ? p["pid"].get<std::string>()
                                                                                        : p["pid"].dump()));
  return out;
}

/// Number of descriptors of `pid` that name `path`.
long fd_count_of(long pid, const std::string& path) {
  return std::stol(run_local("find /proc/" + std::to_string(pid) + "/fd -lname '" + path + "' | wc -l"));
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < s.size()) {
    size_t nl = s.find('\n', at);
    if (nl == std::string::npos) nl = s.size();
    out.push_back(s.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

/// Number of kill actions `step` sent.
int actions(const std::string& t, const std::string& step) {
  int n = 0;
  for (const auto& ev : ratchet::transcript::read_transcript(t).events)
    n += ev["event"] == "command" && ev["step"] == step && ev["role"] == "action";
  return n;
}

}  // namespace

TEST_CASE("kill by PID file: empty, missing, garbage, split, dead, recycled or PID 1 kill nothing and say why",
          "[ssh][kill_safety]") {
  Env e;
  const std::string d = e.dir;
  OwnedProcess victim("exec sleep 300");  // a PID file split in two names this one
  REQUIRE(eventually([&] { return victim.alive(); }));
  std::string pid = std::to_string(victim.pid());
  REQUIRE(pid.size() >= 2);
  write_file(d + "/empty.pid", "");
  write_file(d + "/minus.pid", "-1\n");
  write_file(d + "/garbage.pid", "12abc\n");
  write_file(d + "/split.pid", pid.substr(0, 1) + " " + pid.substr(1) + "\n");  // "4 2424": not PID 42424
  write_file(d + "/lines.pid", pid.substr(0, 1) + "\n" + pid.substr(1) + "\n");
  write_file(d + "/one.pid", "1\n");
  write_file(d + "/blank.pid", "   \n\t\n");                           // blank is empty: nothing to kill
  write_file(d + "/long.pid", std::string(70, '0') + pid + "\n");      // not a PID file: > 64 bytes
  write_file(d + "/over.pid", "4194305\n");                            // above any pid_max (2^22)
  write_file(d + "/nul.pid", pid.substr(0, 1) + std::string(1, '\0') + pid.substr(1) + "\n");  // not PID 42424
  OwnedProcess zeroed("exec sleep 300");  // named with leading zeros: still this PID
  REQUIRE(eventually([&] { return zeroed.alive(); }));
  const long zeroed_pid = zeroed.pid();  // pid() reads -1 once it is reaped
  write_file(d + "/zeros.pid", "00" + std::to_string(zeroed.pid()) + "\n");
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  write_file(d + "/dead.pid", std::to_string(dead) + "\n");
  // A PID file written an hour before its PID's process started: a recycled PID.
  OwnedProcess later("exec sleep 300");
  REQUIRE(eventually([&] { return later.alive(); }));
  write_file(d + "/recycled.pid", std::to_string(later.pid()) + "\n");
  REQUIRE(run_sh("touch -d '-1 hour' " + d + "/recycled.pid").code == 0);

  std::string pb = "name = \"pidfiles\"\n";
  for (const char* n : {"empty", "missing", "minus", "garbage", "split", "lines", "dead", "recycled", "blank",
                        "long", "over", "zeros", "nul"})
    pb += kill_step(n, "pid_file = \"" + d + "/" + n + ".pid\"", "signal = \"KILL\"");
  pb += kill_step("one", "pid_file = \"" + d + "/one.pid\"", "signal = \"CONT\"");  // harmless if it were sent
  std::string t = d + "/t.jsonl";
  auto r = e.run(e.playbook("p.toml", pb), t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(victim.alive());
  CHECK(later.alive());
  CHECK(eventually([&] { return !zeroed.alive(); }));
  auto ends = step_ends(t);
  auto expect = [&](const std::string& id, const std::string& status, const std::string& reason) {
    INFO(id);
    REQUIRE(ends.count(id));
    CHECK(ends[id]["status"] == status);
    // ok: the check's own word; failed: the check could not look (a PID file
    // that holds no PID), so no action ran: "could not check: " and the message.
    if (status == "ok") CHECK(ends[id].value("reason", "") == reason);
    else CHECK(ends[id].value("reason", "") == "could not check: " + reason.substr(std::string("ratchet: ").size()));
    CHECK(signalled(t, id).empty());
  };
  expect("empty", "ok", "ratchet: " + d + "/empty.pid is missing or empty: nothing to kill");
  expect("missing", "ok", "ratchet: " + d + "/missing.pid is missing or empty: nothing to kill");
  expect("minus", "failed", "ratchet: " + d + "/minus.pid does not hold a PID (\"-1\")");
  expect("garbage", "failed", "ratchet: " + d + "/garbage.pid does not hold a PID (\"12abc\")");
  expect("split", "failed", "ratchet: " + d + "/split.pid does not hold a PID (\"" + pid.substr(0, 1) + " " +
                                pid.substr(1) + "\")");
  expect("lines", "failed", "ratchet: " + d + "/lines.pid does not hold a PID (\"" + pid.substr(0, 1) + "\\n" +
                                pid.substr(1) + "\")");
  expect("blank", "ok", "ratchet: " + d + "/blank.pid is missing or empty: nothing to kill");
  expect("long", "failed", "ratchet: " + d + "/long.pid does not hold a PID (\"" + std::string(64, '0') + "\")");
  expect("over", "failed", "ratchet: " + d + "/over.pid does not hold a PID (\"4194305\")");
  expect("nul", "failed", "ratchet: " + d + "/nul.pid does not hold a PID (\"" + pid.substr(0, 1) + "?" +
                              pid.substr(1) + "\")");
  REQUIRE(ends.count("zeros"));
  CHECK(ends["zeros"]["status"] == "changed");
  CHECK(signalled(t, "zeros") == std::set<long>{zeroed_pid});
  expect("dead", "ok", "ratchet: PID " + std::to_string(dead) + " from " + d + "/dead.pid is not running: nothing to kill");
  REQUIRE(ends.count("recycled"));
  CHECK(ends["recycled"]["status"] == "failed");
  CHECK(ends["recycled"]["reason"].get<std::string>().find(
            "could not check: PID " + std::to_string(later.pid()) + " started at ") == 0);
  CHECK(ends["recycled"]["reason"].get<std::string>().find(
            "a recycled PID, not the process the file names; nothing killed") != std::string::npos);
  CHECK(signalled(t, "recycled").empty());
  REQUIRE(ends.count("one"));
  CHECK(ends["one"]["status"] == "ok");
  CHECK(ends["one"]["reason"].get<std::string>().rfind("ratchet: PID 1 (", 0) == 0);
  CHECK(ends["one"]["reason"].get<std::string>().find("never selected") != std::string::npos);
  CHECK(signalled(t, "one").empty());
  // An ok step never sent its action.
  for (const char* n : {"empty", "missing", "dead", "one", "blank"}) {
    INFO(n);
    CHECK(actions(t, n) == 0);
  }
}

TEST_CASE("holders_of: a glob that matches nothing kills nothing, fails closed, missing_ok makes it ok",
          "[ssh][kill_safety]") {
  Env e;
  std::string dev = e.device("gpu0");
  OwnedProcess holder("exec sleep 300 3<" + dev);
  REQUIRE(eventually([&] { return holder.alive(); }));
  std::string glob = e.dir + "/dev/nvidia*";
  std::string pb = "name = \"g\"\n" + kill_step("nomatch", "holders_of = \"" + glob + "\"", "signal = \"KILL\"") +
                   kill_step("nomatch_ok", "holders_of = [\"" + glob + "\"]", "signal = \"KILL\"\nmissing_ok = true") +
                   kill_step("bad_dir", "holders_of = \"" + e.dir + "/nodir/*\"", "signal = \"KILL\"");
  std::string t = e.dir + "/t.jsonl";
  auto r = e.run(e.playbook("g.toml", pb), t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(holder.alive());
  auto ends = step_ends(t);
  CHECK(ends["nomatch"]["status"] == "failed");
  CHECK(ends["nomatch"]["reason"] ==
        "could not check: no file matches " + glob + " (set missing_ok = true if that is expected)");
  CHECK(ends["nomatch_ok"]["status"] == "ok");
  CHECK(ends["bad_dir"]["status"] == "failed");
  CHECK(ends["bad_dir"]["reason"] ==
        "could not check: no file matches " + e.dir + "/nodir/* (set missing_ok = true if that is expected)");
  for (const char* n : {"nomatch", "nomatch_ok", "bad_dir"}) {
    INFO(n);
    CHECK(signalled(t, n).empty());
  }
  CHECK(actions(t, "nomatch_ok") == 0);
}

TEST_CASE("holders_of never follows a symlink at or under what a wildcard matched, never takes / or /dev or a device every process holds",
          "[ssh][kill_safety]") {
  Env e;
  std::string dev = e.device("gpu0");
  std::filesystem::create_directories(e.dir + "/other");
  write_file(e.dir + "/other/data", "");
  // Links planted where the glob looks: to /, to a directory, to a file someone else holds.
  std::filesystem::create_directory_symlink("/", e.dir + "/dev/gpu-root");
  std::filesystem::create_directory_symlink(e.dir + "/other", e.dir + "/dev/gpu-dir");
  std::filesystem::create_symlink(e.dir + "/other/data", e.dir + "/dev/gpu-file");
  // Under a directory the wildcard matched: app-evil/sock is a link, app-real/sock is not.
  std::filesystem::create_directories(e.dir + "/run/app-real");
  std::filesystem::create_directories(e.dir + "/run/app-evil");
  std::string sock = e.dir + "/run/app-real/sock";
  write_file(sock, "");
  chmod(sock.c_str(), 0644);
  std::filesystem::create_symlink(e.dir + "/other/data", e.dir + "/run/app-evil/sock");
  OwnedProcess sock_holder("exec sleep 300 3<" + sock);
  OwnedProcess holder("exec sleep 300 3<" + dev);
  OwnedProcess bystander("exec sleep 300 3<" + e.dir + "/other/data");  // holds only what the links name
  REQUIRE(eventually([&] { return holder.alive() && bystander.alive() && sock_holder.alive(); }));
  const long holder_pid = holder.pid();  // pid() reads -1 once it is reaped
  const long sock_holder_pid = sock_holder.pid();
  std::string pb = "name = \"links\"\n" +
                   kill_step("glob", "holders_of = \"" + e.dir + "/dev/gpu*\"", "signal = \"KILL\"") +
                   kill_step("root", "holders_of = \"" + e.dir + "/dev/gpu-root\"", "signal = \"CONT\"") +
                   kill_step("under", "holders_of = \"" + e.dir + "/run/app-*/sock\"", "signal = \"KILL\"") +
                   kill_step("topdir", "holders_of = \"/dev\"", "signal = \"CONT\"") +
                   kill_step("shared", "holders_of = \"" + e.dir + "/dev/null0\"", "signal = \"CONT\"") +
                   kill_step("devnull", "holders_of = \"/dev/null\"", "signal = \"CONT\"");
  // A node of /dev/null's number: every process with /dev/null open holds it.
  REQUIRE(mknod((e.dir + "/dev/null0").c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0);
  std::string t = e.dir + "/t.jsonl";
  auto r = e.run(e.playbook("l.toml", pb), t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);  // the literal link to / is refused
  CHECK(eventually([&] { return !holder.alive(); }));
  CHECK(bystander.alive());
  CHECK(signalled(t, "glob") == std::set<long>{holder_pid});
  auto ends = step_ends(t);
  CHECK(ends["glob"]["status"] == "changed");
  std::string out;
  for (const auto& ev : ratchet::transcript::read_transcript(t).events)
    if (ev["event"] == "output" && ev["step"] == "glob" && ev["stream"] == "stderr") out += ev.value("data", "");
  CHECK(out.find("ratchet: " + e.dir + "/dev/gpu-root is a symlink (to /) matched by a wildcard of " + e.dir +
                 "/dev/gpu* (or under what one matched): not followed; name it without a wildcard to use it") !=
        std::string::npos);
  CHECK(out.find(e.dir + "/dev/gpu-file is a symlink (to " + e.dir + "/other/data)") != std::string::npos);
  CHECK(ends["root"]["status"] == "failed");
  CHECK(ends["root"]["reason"] ==
        "could not check: " + e.dir + "/dev/gpu-root is / (every file on the host): refused as a target");
  CHECK(signalled(t, "root").empty());
  CHECK(signalled(t, "under") == std::set<long>{sock_holder_pid});  // the bystander again spared
  CHECK(ends["under"]["status"] == "changed");
  CHECK(ends["topdir"]["status"] == "failed");
  CHECK(ends["topdir"]["reason"] ==
        "could not check: /dev is the top-level directory /dev, a whole tree of the system: refused as a target; "
        "name the files or a deeper directory");
  CHECK(signalled(t, "topdir").empty());
  for (const std::string n : {"shared", "devnull"}) {
    INFO(n);
    CHECK(ends[n]["status"] == "failed");
    CHECK(signalled(t, n).empty());
  }
  CHECK(ends["shared"]["reason"] ==
        "could not check: " + e.dir + "/dev/null0 is device 1:3 (null, zero, random, console, tty or pty: nearly every "
        "process holds one): refused as a target, it would select most of the host");
  CHECK(bystander.alive());
}

TEST_CASE("holders_of spares excluded names and other users, and kills the rest", "[ssh][kill_safety]") {
  Env e;
  std::string dev = e.device("gpu0");
  // comm "keepd" (a link to sleep: comm is the executed file's name).
  std::string keepd = e.dir + "/keepd";
  std::filesystem::create_symlink("/bin/sleep", keepd);
  OwnedProcess kept("exec " + keepd + " 300 3<" + dev);
  OwnedProcess root_holder("exec sleep 300 3<" + dev);
  OwnedProcess nobody_holder("exec setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 300 3<" + dev);
  REQUIRE(eventually([&] {
    return kept.alive() && root_holder.alive() && nobody_holder.alive() &&
           run_local("stat -c %U /proc/" + std::to_string(nobody_holder.pid())) == "nobody\n";
  }));
  std::string pb = "name = \"x\"\n" +
                   kill_step("by_user", "holders_of = \"" + e.dir + "/dev/gpu*\"", "user = [\"nobody\"]") +
                   kill_step("by_name", "holders_of = \"" + e.dir + "/dev/gpu*\"", "exclude = [\"keepd\"]") +
                   "[[step]]\nid = \"kept_holds\"\nkind = \"verify\"\non_failure = \"continue\"\n"
                   "no_holders = \"" + e.dir + "/dev/gpu0\"\n";
  std::string t = e.dir + "/t.jsonl";
  auto r = e.run(e.playbook("x.toml", pb), t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);  // kept_holds: the excluded daemon still holds the device
  auto ends = step_ends(t);
  CHECK(ends["by_user"]["status"] == "changed");
  CHECK(signalled(t, "by_user") == std::set<long>{nobody_holder.pid()});
  CHECK(ends["by_name"]["status"] == "changed");
  CHECK(signalled(t, "by_name") == std::set<long>{root_holder.pid()});
  CHECK(ends["kept_holds"]["status"] == "failed");
  CHECK(ends["kept_holds"]["reason"] == "1 process(es) hold the files");
  CHECK(kept.alive());
  CHECK_FALSE(root_holder.alive());
  CHECK_FALSE(nobody_holder.alive());
}

TEST_CASE("holders_of never selects PID 1 or the SSH session's own processes, and says so", "[ssh][kill_safety]") {
  Env e;
  // sshd and every process of the session ratchet's command runs in hold the
  // fixture's log (their stderr): they are the command's own ancestry. CONT:
  // harmless even if the protection failed.
  std::string log = e.sshd.dir() + "/sshd.log";
  std::string holders = run_local("for p in /proc/[0-9]*; do ls -l $p/fd 2>/dev/null | grep -q -F " + log +
                                  " && echo ${p#/proc/}; done");
  REQUIRE_FALSE(holders.empty());
  std::string pb = "name = \"own\"\n" + kill_step("own", "holders_of = \"" + log + "\"", "signal = \"CONT\"");
  std::string t = e.dir + "/t.jsonl";
  auto r = e.run(e.playbook("o.toml", pb), t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  auto ends = step_ends(t);
  CHECK(ends["own"]["status"] == "ok");
  std::string reason = ends["own"].value("reason", "");
  CHECK(reason.rfind("ratchet: PID ", 0) == 0);
  CHECK(reason.find("is part of this SSH session (ratchet itself): never selected") != std::string::npos);
  CHECK(signalled(t, "own").empty());
  CHECK(actions(t, "own") == 0);
  CHECK(pid_alive(e.sshd.pid()));
}

TEST_CASE("a pattern that matches ratchet's own remote shell and library selects nothing", "[ssh][kill_safety]") {
  Env e;
  // Neither transport puts the library or the script in an argv: a channel's
  // shell reads them on stdin (its argv is `/bin/sh -s ratchet-wire`), the
  // session shell sends the script in a file and the library once. Nothing
  // matches; were it to, the protection of this session's processes holds.
  const std::string transport = GENERATE("channel", "session");
  // The token makes the patterns match only this test's own commands. KILL:
  // were the protection missing, the command would kill its own shell.
  std::string token = std::filesystem::path(e.dir).filename().string();
  std::string pb = "name = \"pat\"\n" + kill_step("self", "pattern = \"ratchet_kill.*" + token + "\"", "signal = \"KILL\"") +
                   kill_step("library", "pattern = \"ratchet host library v1.*" + token + "\"", "signal = \"KILL\"") +
                   "[[step]]\nid = \"after\"\nkind = \"run\"\ncommand = \"echo still here\"\n";
  std::string t = e.dir + "/t.jsonl";
  auto r = e.run(e.playbook("p.toml", pb), t, "--transport " + transport);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  auto ends = step_ends(t);
  for (const char* n : {"self", "library"}) {
    INFO(n);
    CHECK(ends[n]["status"] == "ok");
    CHECK(signalled(t, n).empty());
    CHECK(actions(t, n) == 0);
  }
  for (const auto& ev : ratchet::transcript::read_transcript(t).events)
    if (ev["event"] == "exit") CHECK_FALSE(ev.contains("signal"));
  CHECK(ends["after"]["status"] == "changed");
}

TEST_CASE("another run's session shell and its readers are never selected, its command is",
          "[ssh][kill_safety]") {
  Env e;
  const std::string transport = GENERATE("channel", "session");
  // A second ratchet session on the same host: a session shell opened through
  // the transport, running the stand-in (a sleep this test starts, holding a
  // stand-in device).
  std::string standin = e.device("standin");
  ratchet::transport::Endpoint ep = e.sshd.endpoint();
  ep.exec_mode = ratchet::transport::ExecMode::session;
  auto other = ratchet::transport::make_ssh_transport(ep);
  ratchet::transport::ConnectInfo info;
  REQUIRE_FALSE(other->connect(&info));
  ratchet::transport::ExecRequest req;
  req.run_id = ratchet::transport::new_run_id();
  req.script = "echo $PPID >" + e.dir + "/shell; exec sleep 300 3<" + standin;
  req.host_timeout = std::chrono::milliseconds(60'000);
  req.timeout = ratchet::transport::client_deadline(req.host_timeout);
  auto running = std::async(std::launch::async, [&] { return other->exec(req); });
  long shell = 0, stand = 0;
  std::set<long> readers;
  // Whatever happens below, the stand-in ends (by its PID, else by its
  // deadline) and the exec returns before the transport goes.
  struct Reap {
    long* stand;
    std::future<ratchet::transport::ExecResult>* f;
    ~Reap() {
      if (f->valid() && f->wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        if (*stand > 0) kill(pid_t(*stand), SIGKILL);
        f->wait();
      }
    }
  } reap{&stand, &running};
  REQUIRE(eventually([&] {
    std::string s = run_local("cat " + e.dir + "/shell 2>/dev/null");
    if (s.empty()) return false;
    shell = std::stol(s);
    readers.clear();
    for (const std::string& l : split_lines(run_local("ps -o pid=,comm= --ppid " + std::to_string(shell)))) {
      std::istringstream in(l);
      long p = 0;
      std::string comm;
      if (!(in >> p >> comm)) continue;
      if (comm == "cat") readers.insert(p);
      if (comm == "sleep") stand = p;
    }
    return readers.size() == 2 && stand > 0 && fd_count_of(stand, standin) == 1;
  }));
  std::string hello = run_local("tr '\\000' '\\n' </proc/" + std::to_string(shell) + "/cmdline | tail -n 1");
  hello.pop_back();
  REQUIRE(hello.size() == 16);
  std::string dir = run_local("readlink /proc/" + std::to_string(*readers.begin()) + "/fd/0");
  dir = dir.substr(0, dir.rfind('/'));
  REQUIRE(dir.find("/ratchet-session.") != std::string::npos);
  // CONT for the patterns: they match whatever else on this machine runs a cat,
  // harmlessly; KILL only for the stand-in, selected by its device.
  std::string pb =
      "name = \"others\"\n" + kill_step("pat_cat", "pattern = \"^cat$\"", "signal = \"CONT\"") +
      kill_step("pat_session", "pattern = \"ratchet-session\"", "signal = \"CONT\"") +
      "[[step]]\nid = \"absent\"\nkind = \"verify\"\non_failure = \"continue\"\nabsent = [\"ratchet-session " + hello + "\"]\n" +
      "[[step]]\nid = \"held\"\nkind = \"verify\"\non_failure = \"continue\"\nno_holders = [\"" + dir + "/o\", \"" +
      dir + "/e\"]\n" +
      kill_step("by_fifo", "holders_of = [\"" + dir + "/o\", \"" + dir + "/e\"]", "signal = \"CONT\"") +
      kill_step("by_device", "holders_of = [\"" + standin + "\"]", "signal = \"KILL\"");
  std::string t = e.dir + "/t.jsonl";
  auto r = e.run(e.playbook("others.toml", pb), t, "--transport " + transport);
  INFO(r.out << r.err);
  auto ends = step_ends(t);
  const std::set<long> own = [&] {
    std::set<long> o = readers;
    o.insert(shell);
    return o;
  }();
  // The step's reason is its first line; the commands' stderr has every one.
  auto said = [&](const std::string& step, long pid, const std::string& why) {
    std::string text;
    for (const auto& ev : ratchet::transcript::read_transcript(t).events)
      if (ev.value("step", "") == step) text += ev.dump() + "\n";
    INFO(step << ": " << text);
    CHECK(text.find("ratchet: PID " + std::to_string(pid) + " (") != std::string::npos);
    CHECK(text.find(why) != std::string::npos);
  };
  const std::string mark = "is ratchet's own (RATCHET_SELF=1: a session shell, its reader or a watchdog of a ratchet "
                           "run): never selected";
  for (const char* step : {"pat_cat", "pat_session", "by_fifo", "by_device"})
    for (long p : signalled(t, step)) {
      INFO(step << " signalled " << p);
      CHECK(own.count(p) == 0);
    }
  for (long p : readers) said("pat_cat", p, mark);
  said("pat_session", shell, mark);
  CHECK(ends["absent"]["status"] == "ok");
  said("absent", shell, mark);
  // The readers hold the fifos; so does the command (its stdout): it alone counts.
  CHECK(ends["held"]["status"] == "failed");
  CHECK(ends["held"]["reason"] == "1 process(es) hold the files");
  for (long p : readers) said("held", p, mark);
  CHECK(signalled(t, "by_fifo") == std::set<long>{stand});
  CHECK(signalled(t, "by_device") == std::set<long>{stand});
  CHECK(ends["by_device"]["status"] == "changed");
  // The other run's command ended by the KILL; its session shell is still there.
  REQUIRE(running.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  auto done = running.get();
  CHECK(done.signal == "KILL");
  CHECK(pid_alive(shell));
  auto again = other->exec([&] {
    ratchet::transport::ExecRequest q = req;
    q.run_id = ratchet::transport::new_run_id();
    q.script = "echo $PPID";
    return q;
  }());
  CHECK(again.warning.empty());
  CHECK(again.out.data == std::to_string(shell) + "\n");
}
