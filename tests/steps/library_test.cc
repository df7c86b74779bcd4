// The host library run locally under /bin/sh against stand-in device files
// held by processes this test starts (and kills by PID).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "steps/holders.h"
#include "steps/library.h"
#include "support/files.h"
#include "support/local_proc.h"
#include "util/shell.h"

using namespace ratchet;
using ratchet::testing::eventually;
using ratchet::testing::OwnedProcess;
using ratchet::testing::run_sh;

static testing::ShellResult lib(const std::string& cmd, const std::string& input = "") {
  return run_sh(steps::with_library(cmd), input);
}

static std::string stand_ins(const std::vector<std::string>& names) {
  std::string d = testing::temp_dir("ratchet-dev");
  for (const auto& n : names) std::ofstream(d + "/" + n) << "";
  return d;
}

static long long fd_count(pid_t pid, const std::string& dir) {
  auto r = run_sh("find /proc/" + std::to_string(pid) + "/fd -lname '" + dir + "/*' | wc -l");
  return std::stoll(r.out);
}

TEST_CASE("holders: each holder once with pid, user, start time, command line, files", "[steps][library]") {
  std::string d = stand_ins({"nvidia0", "nvidia1", "nvidiactl", "other"});
  OwnedProcess a("exec 3<" + d + "/nvidia0 4<" + d + "/nvidiactl; exec sleep 90");
  OwnedProcess b("exec 3<" + d + "/nvidia1 4<" + d + "/other; exec sleep 91");
  REQUIRE(eventually([&] { return fd_count(a.pid(), d) == 2 && fd_count(b.pid(), d) == 2; }));

  auto r = lib("ratchet_holders '' '' '" + d + "/nvidia*'");
  REQUIRE(r.code == 0);
  auto h = steps::parse_process_lines(r.out, "");
  REQUIRE(h.size() == 2);
  CHECK(h[0].pid == std::min(a.pid(), b.pid()));
  auto& ha = h[0].pid == a.pid() ? h[0] : h[1];
  CHECK(ha.user == "root");
  CHECK(ha.cmdline == "sleep 90");
  CHECK(ha.comm == "sleep");
  CHECK(ha.files == std::vector<std::string>{d + "/nvidia0", d + "/nvidiactl"});
  CHECK(ha.started.size() == 20);
  auto& hb = h[0].pid == b.pid() ? h[0] : h[1];
  CHECK(hb.files == std::vector<std::string>{d + "/nvidia1"});  // "other" is not a target
}

TEST_CASE("holders: a directory covers the files beneath it", "[steps][library]") {
  std::string d = stand_ins({});
  mkdir((d + "/nvidia-caps").c_str(), 0755);
  std::ofstream(d + "/nvidia-caps/nvidia-cap1") << "";
  OwnedProcess a("exec 3<" + d + "/nvidia-caps/nvidia-cap1; exec sleep 92");
  REQUIRE(eventually([&] { return fd_count(a.pid(), d) == 1; }));
  auto h = steps::parse_process_lines(lib("ratchet_holders '' '' '" + d + "/nvidia-caps'").out, "");
  REQUIRE(h.size() == 1);
  CHECK(h[0].pid == a.pid());
  CHECK(h[0].files[0] == d + "/nvidia-caps/nvidia-cap1");
}

TEST_CASE("holders: a glob that matches nothing fails closed unless missing_ok", "[steps][library]") {
  std::string d = stand_ins({});
  auto r = lib("ratchet_no_holders -- '" + d + "/nvidia*'");
  CHECK(r.code == 2);
  CHECK(r.err == "ratchet: no file matches " + d + "/nvidia* (set missing_ok = true if that is expected)\n");
  CHECK(lib("ratchet_no_holders --missing-ok -- '" + d + "/nvidia*'").code == 0);
}

TEST_CASE("exclude spares the daemons kept by design (comm is cut to 15 bytes)", "[steps][library]") {
  std::string d = stand_ins({"nvidiactl"});
  std::string bin = d + "/nvidia-persistenced";
  REQUIRE(run_sh("cp /bin/sleep " + bin).code == 0);
  OwnedProcess keep("exec 3<" + d + "/nvidiactl; exec " + bin + " 300");
  OwnedProcess hold("exec 3<" + d + "/nvidiactl; exec sleep 93");
  REQUIRE(eventually([&] { return fd_count(keep.pid(), d) == 1 && fd_count(hold.pid(), d) == 1; }));
  auto r = lib("ratchet_kill --signal KILL --wait-ms 2000 --exclude nvidia-persistenced holders_of '" + d + "/nvidiactl'");
  REQUIRE(r.code == 0);
  auto sig = steps::parse_process_lines(r.out, "signalled");
  REQUIRE(sig.size() == 1);
  CHECK(sig[0].pid == hold.pid());
  CHECK(eventually([&] { return !hold.alive(); }));
  CHECK(keep.alive());
}

TEST_CASE("kill TERM, a holder that ignores it stays alive, the check says so, KILL ends it", "[steps][library]") {
  std::string d = stand_ins({"nvidia0"});
  OwnedProcess stubborn("trap '' TERM; exec 3<" + d + "/nvidia0; exec sleep 94");
  REQUIRE(eventually([&] { return fd_count(stubborn.pid(), d) == 1; }));
  auto r = lib("ratchet_kill --signal TERM --wait-ms 300 holders_of '" + d + "/nvidia0'");
  REQUIRE(r.code == 0);
  auto alive = steps::parse_process_lines(r.out, "alive");
  REQUIRE(alive.size() == 1);
  CHECK(alive[0].pid == stubborn.pid());
  CHECK(stubborn.alive());

  std::string selection;
  for (const auto& line : {r.out}) selection = line;
  auto c = lib("ratchet_kill_check pid " + std::to_string(stubborn.pid()));
  CHECK(steps::parse_process_lines(c.out, "alive").size() == 1);

  auto k = lib("ratchet_kill --signal KILL --wait-ms 2000 holders_of '" + d + "/nvidia0'");
  CHECK(steps::parse_process_lines(k.out, "signalled").size() == 1);
  CHECK(eventually([&] { return !stubborn.alive(); }));
  CHECK(lib("ratchet_no_holders -- '" + d + "/nvidia0'").code == 0);
}

TEST_CASE("PID-reuse guard: a PID that started after its PID file was written is not killed", "[steps][library]") {
  std::string d = stand_ins({});
  OwnedProcess p("exec sleep 95");
  REQUIRE(eventually([&] { return p.alive(); }));
  std::string pf = d + "/server.pid";
  std::ofstream(pf) << p.pid() << "\n";
  REQUIRE(run_sh("touch -d '-1 hour' " + pf).code == 0);  // written long before this process started
  auto r = lib("ratchet_kill --signal KILL --wait-ms 500 pid_file " + pf);
  CHECK(r.code == 3);
  CHECK(r.err.find("a recycled PID, not the process the file names; nothing killed") != std::string::npos);
  CHECK(p.alive());

  // The kill check re-reads each PID's start time: a listed PID whose start time
  // differs (recycled) counts as gone and is never signalled.
  std::string stale = std::to_string(p.pid()) + "\troot\t1\t0.00\tsleep\tsleep 95\t\n";
  CHECK(lib("ratchet_kill_check pid_file " + d + "/none.pid", stale).out == "");
  CHECK(p.alive());
}

TEST_CASE("pid file missing, empty or dead means nothing to kill", "[steps][library]") {
  std::string d = stand_ins({"empty.pid"});
  auto missing = lib("ratchet_kill_check pid_file " + d + "/missing.pid");
  CHECK(missing.code == 0);
  CHECK(missing.out == "");
  CHECK(missing.err == "ratchet: " + d + "/missing.pid is missing or empty: nothing to kill\n");
  CHECK(lib("ratchet_kill_check pid_file " + d + "/empty.pid").code == 0);
  std::ofstream(d + "/garbage.pid") << "not-a-pid\n";
  CHECK(lib("ratchet_kill_check pid_file " + d + "/garbage.pid").code == 4);
}

TEST_CASE("tree: descendants and the session of a session leader are signalled", "[steps][library]") {
  OwnedProcess leader("sleep 96 & (sleep 97 &) ; exec sleep 98");
  std::vector<long long> others;
  REQUIRE(eventually([&] {
    auto r = run_sh("ps -o pid= -s " + std::to_string(leader.pid()));
    return std::count(r.out.begin(), r.out.end(), '\n') == 3;
  }));
  auto r = lib("ratchet_kill --signal KILL --wait-ms 2000 --tree pid " + std::to_string(leader.pid()));
  REQUIRE(r.code == 0);
  auto sig = steps::parse_process_lines(r.out, "signalled");
  CHECK(sig.size() == 3);
  CHECK(steps::parse_process_lines(r.out, "alive").empty());
  // orphans are reaped late by this machine's PID 1: zombies count as dead
  CHECK(eventually([&] {
    return run_sh("ps -o stat= -s " + std::to_string(leader.pid()) + " | grep -v '^Z'").out.empty();
  }));
}

TEST_CASE("write: atomic replace with mode, the old file is whole until the rename", "[steps][library]") {
  std::string d = stand_ins({});
  std::string p = d + "/notes.md";
  std::ofstream(p) << "old\n";
  auto r = lib("ratchet_write " + p + " 0640 '' '' 1", "new content\n");
  REQUIRE(r.code == 0);
  std::ifstream in(p);
  std::string got((std::istreambuf_iterator<char>(in)), {});
  CHECK(got == "new content\n");
  struct stat st{};
  stat(p.c_str(), &st);
  CHECK((st.st_mode & 0777) == 0640);
  CHECK(run_sh("ls " + d + " | grep -c '^notes.md.*bak$'").out == "1\n");
  CHECK(run_sh("ls -a " + d + " | grep -c ratchet-write").out == "0\n");
  CHECK(lib("ratchet_stat " + p).out.substr(65) == "640 root root\n");
}

TEST_CASE("sha256 of stdin: openssl and sha256sum give the same hex, and a copy is hashed as it lands",
          "[steps][library]") {
  const std::string abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n";
  REQUIRE(run_sh("command -v openssl").code == 0);  // scripts/setup.sh test installs it (libssh-dev pulls it in)
  CHECK(lib("ratchet_sha256", "abc").out == abc);
  std::string bin = testing::temp_dir("ratchet-nossl");  // no openssl on this PATH: sha256sum
  for (const char* tool : {"sha256sum", "cut", "cat", "tee", "mktemp", "chmod", "mv", "stat", "rm"})
    REQUIRE(run_sh("ln -s \"$(command -v " + std::string(tool) + ")\" " + bin + "/" + tool).code == 0);
  auto r = run_sh("printf abc | PATH=" + bin + " /bin/sh -c " + util::shell_quote(steps::with_library("ratchet_sha256")));
  CHECK(r.out == abc);
  // copy_file through tee: the right bytes land, the wrong ones never do.
  std::string d = testing::temp_dir("ratchet-copyfile");
  r = lib("ratchet_copy_file " + d + " f " + abc.substr(0, 64) + " 0600 '' ''", "abc");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(testing::read_file(d + "/f") == "abc");
  r = lib("ratchet_copy_file " + d + " g " + abc.substr(0, 64) + " 0600 '' ''", "abd");
  CHECK(r.code == 1);
  CHECK(r.err.find("the plan pins " + abc.substr(0, 64)) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(d + "/g"));
  CHECK(run_sh("ls -A " + d).out == "f\n");  // no temp file left behind
  // dest's parent missing: said plainly, nothing made.
  r = lib("ratchet_copy_dir " + d + "/no/such '' 0755 '' ''");
  CHECK(r.code == 1);
  CHECK(r.err == "ratchet: " + d + "/no does not exist: copy makes no directory above dest (make it first: a run "
                 "step with mkdir -p)\n");
  r = lib("ratchet_copy_file " + d + "/no/such '' " + abc.substr(0, 64) + " 0600 '' ''", "abc");
  CHECK(r.code == 1);
  CHECK(r.err.find(d + "/no does not exist") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(d + "/no"));
}

TEST_CASE("write through a symlink replaces the file it names, keeping its mode", "[steps][library]") {
  std::string d = stand_ins({});
  std::ofstream(d + "/real.conf") << "old\n";
  REQUIRE(run_sh("chmod 0640 " + d + "/real.conf && ln -s real.conf " + d + "/link.conf").code == 0);
  REQUIRE(lib("ratchet_write " + d + "/link.conf '' '' '' 0", "new\n").code == 0);
  CHECK(run_sh("readlink " + d + "/link.conf").out == "real.conf\n");
  CHECK(run_sh("cat " + d + "/link.conf").out == "new\n");
  CHECK(run_sh("stat -c %a " + d + "/real.conf").out == "640\n");
  CHECK(lib("ratchet_stat " + d + "/link.conf").out.substr(65) == "640 root root\n");
}

TEST_CASE("write onto a directory is refused and leaves no temp file in it", "[steps][library]") {
  std::string d = stand_ins({});
  REQUIRE(run_sh("mkdir " + d + "/adir").code == 0);
  auto r = lib("ratchet_write " + d + "/adir '' '' '' 0", "new\n");
  CHECK(r.code == 1);
  CHECK(r.err == "ratchet: " + d + "/adir exists and is not a regular file\n");
  CHECK(run_sh("ls -A " + d + "/adir").out == "");  // mv would have moved the temp file into it
  CHECK(run_sh("ls -A " + d + " | grep -c ratchet-write").out == "0\n");
}

TEST_CASE("file names and process names cannot forge holder lines", "[steps][library]") {
  std::string d = stand_ins({"dev0", "other"});
  OwnedProcess a("exec 3<" + d + "/dev0; exec sleep 94");
  OwnedProcess b("exec 3<" + d + "/other; exec sleep 95");
  REQUIRE(eventually([&] { return a.alive() && b.alive(); }));
  // c opens a file whose name, cut at its newline, reads "b holds dev0".
  std::string forged = d + "/x\n/proc/" + std::to_string(b.pid()) + "/fd\t" + d + "/dev0";
  {
    std::string dir = forged.substr(0, forged.rfind('/'));
    REQUIRE(run_sh("mkdir -p '" + dir + "' && : > '" + forged + "'").code == 0);
  }
  OwnedProcess c("exec 3<'" + forged + "'; exec sleep 96");
  // e renames itself with a newline and a fake line naming b.
  OwnedProcess e("printf '\\n%s\\t\\t1\\t' " + std::to_string(b.pid()) + " > /proc/self/comm; exec 3<" + d +
                 "/dev0; exec sleep 97");
  REQUIRE(eventually([&] { return fd_count(a.pid(), d) == 1 && fd_count(c.pid(), d) == 1 && fd_count(e.pid(), d) == 1; }));
  // a process that fakes the library's marker in its argv is still a holder
  OwnedProcess m("exec 3<" + d + "/dev0; exec bash -c \"exec -a 'x # ratchet host library v1' sleep 98\"");
  REQUIRE(eventually([&] { return fd_count(m.pid(), d) == 1; }));

  auto h = steps::parse_process_lines(lib("ratchet_holders '' '' '" + d + "/dev0'").out, "");
  std::set<long long> pids;
  for (const auto& x : h) pids.insert(x.pid);
  CHECK(pids == std::set<long long>{a.pid(), e.pid(), m.pid()});  // never b or c
}

namespace {

/// The library run as `nobody` (a login that is not root and has no become).
testing::ShellResult lib_as_nobody(const std::string& cmd) {
  return run_sh("setpriv --reuid=nobody --regid=nogroup --clear-groups /bin/sh -c " +
                util::shell_quote(steps::with_library(cmd)));
}

}  // namespace

TEST_CASE("holders: a login that cannot read other users' open files fails closed, not \"free\"",
          "[steps][library]") {
  std::string d = stand_ins({"gpu0"});
  chmod(d.c_str(), 0755);
  chmod((d + "/gpu0").c_str(), 0644);
  OwnedProcess root_holder("exec 3<" + d + "/gpu0; exec sleep 120");  // root's: unreadable to nobody
  REQUIRE(eventually([&] { return fd_count(root_holder.pid(), d) == 1; }));

  auto r = lib_as_nobody("ratchet_no_holders -- '" + d + "/gpu*'");
  INFO(r.out << r.err);
  CHECK(r.code == 5);
  CHECK(r.out == "");
  CHECK(r.err.find("ratchet: could not check: ") != std::string::npos);
  CHECK(r.err.find("open files are unreadable as nobody (owners: root") != std::string::npos);
  CHECK(r.err.find("); run as root or set become = true\n") != std::string::npos);
  // As root the same scan sees the holder.
  auto h = steps::parse_process_lines(lib("ratchet_no_holders -- '" + d + "/gpu*'").out, "holder");
  REQUIRE(h.size() == 1);
  CHECK(h[0].pid == root_holder.pid());
  // A filter that leaves root's processes out anyway does not need to read them.
  r = lib_as_nobody("ratchet_no_holders --user nobody -- '" + d + "/gpu*'");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.err.find("could not check") == std::string::npos);
  // A kill's check fails closed the same way (nothing seen alive, not all seen).
  r = lib_as_nobody("ratchet_kill_check holders_of '" + d + "/gpu*' </dev/null");
  CHECK(r.code == 5);
  CHECK(r.err.find("ratchet: could not check: ") != std::string::npos);
}

TEST_CASE("holders: a holder seen by a partly blind scan is still reported", "[steps][library]") {
  std::string d = stand_ins({"gpu0"});
  chmod(d.c_str(), 0755);
  chmod((d + "/gpu0").c_str(), 0644);
  OwnedProcess root_holder("exec 3<" + d + "/gpu0; exec sleep 121");
  OwnedProcess own_holder("exec setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c 'exec 3<" + d +
                          "/gpu0; exec sleep 122'");
  REQUIRE(eventually([&] { return fd_count(root_holder.pid(), d) == 1 && fd_count(own_holder.pid(), d) == 1; }));
  auto r = lib_as_nobody("ratchet_no_holders -- '" + d + "/gpu0'");
  CHECK(r.code == 1);  // a holder was seen: the state does not hold, whatever else was not seen
  auto h = steps::parse_process_lines(r.out, "holder");
  REQUIRE(h.size() == 1);
  CHECK(h[0].pid == own_holder.pid());
  CHECK(h[0].user == "nobody");
  CHECK(r.err.find("ratchet: could not check: ") != std::string::npos);
}

TEST_CASE("holders: a file name with |, a tab and a newline is one file, exactly", "[steps][library]") {
  std::string d = stand_ins({"plain"});
  const std::string odd = d + "/gpu | x\ty\nz%41";
  testing::write_file(odd, "");
  OwnedProcess a("exec 3<\"$(printf '" + d + "/gpu | x\\ty\\nz%%41')\" 4<" + d + "/plain; exec sleep 123");
  REQUIRE(eventually([&] { return fd_count(a.pid(), d) == 2; }));
  auto r = lib("ratchet_holders '' '' '" + d + "/*'");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  auto h = steps::parse_process_lines(r.out, "");
  REQUIRE(h.size() == 1);
  CHECK(h[0].pid == a.pid());
  CHECK(h[0].files == std::vector<std::string>{odd, d + "/plain"});
  // One line per holder: no byte of the name splits it.
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  // Named literally, the odd file is a target too.
  h = steps::parse_process_lines(lib("ratchet_holders '' '' \"$(printf '" + d + "/gpu | x\\ty\\nz%%41')\"").out, "");
  REQUIRE(h.size() == 1);
  CHECK(h[0].files == std::vector<std::string>{odd});
}

TEST_CASE("holders: a thread that holds the file after its group leader exited is a holder, killed as a group",
          "[steps][library]") {
  std::string d = stand_ins({"gpu0"});
  OwnedProcess t(std::string("exec ") + RATCHET_THREAD_HOLDER + " " + d + "/gpu0");
  auto leader_is_zombie = [&] {
    return run_sh("grep -q '^State:.Z' /proc/" + std::to_string(t.pid()) + "/status && find /proc/" +
                  std::to_string(t.pid()) + "/task/*/fd -lname '" + d + "/gpu0' | grep -q .")
               .code == 0;
  };
  REQUIRE(eventually(leader_is_zombie));
  CHECK(fd_count(t.pid(), d) == 0);  // /proc/PID/fd shows nothing: the leader's table is gone

  auto h = steps::parse_process_lines(lib("ratchet_holders '' '' '" + d + "/gpu*'").out, "");
  REQUIRE(h.size() == 1);
  CHECK(h[0].pid == t.pid());
  CHECK(h[0].files == std::vector<std::string>{d + "/gpu0"});
  const std::string ticks = std::to_string(h[0].start_ticks);
  CHECK(lib("ratchet_same_alive " + std::to_string(t.pid()) + " " + ticks).code == 0);  // not dead: a thread runs

  auto k = lib("ratchet_kill --signal TERM --wait-ms 3000 holders_of '" + d + "/gpu0'");
  INFO(k.out << k.err);
  CHECK(steps::parse_process_lines(k.out, "signalled").size() == 1);
  CHECK(steps::parse_process_lines(k.out, "alive").empty());
  CHECK(lib("ratchet_same_alive " + std::to_string(t.pid()) + " " + ticks).code != 0);
  CHECK(lib("ratchet_no_holders -- '" + d + "/gpu0'").code == 0);
}

TEST_CASE("ratchet's own processes (RATCHET_SELF=1 in their environment) are never selected, and the step says so",
          "[steps][library]") {
  // With the GNU tools and with BusyBox's (grep, tr, awk: the library's only
  // readers of an environment).
  const bool busybox = GENERATE(false, true);
  std::string path;
  if (busybox) {
    if (run_sh("command -v busybox").code != 0) FAIL("busybox is not installed (scripts/setup.sh test installs it)");
    std::string bin = testing::temp_dir("ratchet-busybox");
    for (const char* tool : {"sh", "find", "stat", "sleep", "awk", "sed", "grep", "tr", "cut", "readlink", "sort",
                             "head", "wc", "cat", "date", "id", "mktemp", "rm", "xargs"})
      REQUIRE(run_sh("ln -s \"$(command -v busybox)\" " + bin + "/" + tool).code == 0);
    path = "PATH=" + bin + " " + bin + "/sh -c ";
  }
  auto run = [&](const std::string& cmd) {
    return busybox ? run_sh(path + util::shell_quote(steps::with_library(cmd))) : lib(cmd);
  };
  std::string d = stand_ins({"gpu0"});
  // Ours in name only: a value or a name that is not exactly RATCHET_SELF=1.
  OwnedProcess own("exec env RATCHET_SELF=1 sleep 131 3<" + d + "/gpu0");
  OwnedProcess other_value("exec env RATCHET_SELF=10 sleep 131 3<" + d + "/gpu0");
  OwnedProcess other_name("exec env XRATCHET_SELF=1 sleep 131 3<" + d + "/gpu0");
  REQUIRE(eventually([&] {
    return fd_count(own.pid(), d) == 1 && fd_count(other_value.pid(), d) == 1 && fd_count(other_name.pid(), d) == 1;
  }));
  const std::string said = "ratchet: PID " + std::to_string(own.pid()) +
                           " (sleep) is ratchet's own (RATCHET_SELF=1: a session shell, its reader or a watchdog of "
                           "a ratchet run): never selected\n";
  const std::set<long long> others{other_value.pid(), other_name.pid()};
  auto pids = [](const std::vector<steps::Holder>& h) {
    std::set<long long> out;
    for (const auto& x : h) out.insert(x.pid);
    return out;
  };
  auto r = run("ratchet_no_holders -- '" + d + "/gpu0'");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(pids(steps::parse_process_lines(r.out, "holder")) == others);
  CHECK(r.err == said);
  r = run("ratchet_select '' '' pattern '^sleep 131$'");
  CHECK(r.code == 0);
  CHECK(pids(steps::parse_process_lines(r.out, "")) == others);
  CHECK(r.err == said);
  r = run("ratchet_select '' '' pid " + std::to_string(own.pid()));
  CHECK(r.out.empty());
  CHECK(r.err == said);
  r = run("ratchet_absent '^sleep 131$'");
  CHECK(r.code == 1);
  CHECK(pids(steps::parse_process_lines(r.out, "process")) == others);
  // The kill: the lookalikes, not the marked one.
  r = run("ratchet_kill --signal KILL --wait-ms 2000 holders_of '" + d + "/gpu0'");
  CHECK(r.code == 0);
  CHECK(pids(steps::parse_process_lines(r.out, "signalled")) == others);
  CHECK(r.err == said);
  CHECK(own.alive());
  CHECK(eventually([&] { return !other_value.alive() && !other_name.alive(); }));
}

TEST_CASE("the library without GNU find -printf or pgrep: BusyBox tools, same holders and selections",
          "[steps][library]") {
  if (run_sh("command -v busybox").code != 0) FAIL("busybox is not installed (scripts/setup.sh test installs it)");
  std::string bin = testing::temp_dir("ratchet-busybox");
  for (const char* tool : {"sh", "find", "stat", "sleep", "awk", "sed", "grep", "tr", "cut", "readlink", "sort",
                           "head", "wc", "cat", "date", "id", "sha256sum", "mktemp", "chmod", "chown", "mv", "xargs"})
    REQUIRE(run_sh("ln -s \"$(command -v busybox)\" " + bin + "/" + tool).code == 0);
  REQUIRE(run_sh("PATH=" + bin + " find /proc/self/fd -maxdepth 0 -printf '' 2>/dev/null").code != 0);
  std::string d = stand_ins({"gpu0", "gpu1"});
  OwnedProcess a("exec 3<" + d + "/gpu0; exec sleep 124");
  REQUIRE(eventually([&] { return fd_count(a.pid(), d) == 1; }));
  auto r = run_sh("PATH=" + bin + " " + bin + "/sh -c " + util::shell_quote(steps::with_library(
                                                            "ratchet_no_holders -- '" + d + "/gpu*'")));
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  auto h = steps::parse_process_lines(r.out, "holder");
  REQUIRE(h.size() == 1);
  CHECK(h[0].pid == a.pid());
  CHECK(h[0].user == "root");
  CHECK(h[0].files == std::vector<std::string>{d + "/gpu0"});
  // No pgrep in that PATH: a pattern is matched by the library's own /proc scan.
  REQUIRE(run_sh("PATH=" + bin + " command -v pgrep").code != 0);
  r = run_sh("PATH=" + bin + " " + bin + "/sh -c " +
             util::shell_quote(steps::with_library("ratchet_select '' '' pattern '^sleep 124$'")));
  INFO(r.err);
  CHECK(r.code == 0);
  auto sel = steps::parse_process_lines(r.out, "");
  REQUIRE(sel.size() == 1);
  CHECK(sel[0].pid == a.pid());
  // Without stat -c at all, a file check says what it needs instead of guessing.
  // (Under dash: busybox-static's ash runs its own applets whatever PATH says.)
  std::string nostat = testing::temp_dir("ratchet-nostat");
  REQUIRE(run_sh("for t in " + bin + "/*; do case \"${t##*/}\" in stat|sh) ;; *) ln -s \"$t\" " + nostat +
                 "/;; esac; done").code == 0);
  r = run_sh("PATH=" + nostat + " /bin/dash -c " +
             util::shell_quote(steps::with_library("ratchet_stat '" + d + "/gpu0'")));
  CHECK(r.code == 5);
  CHECK(r.err == "ratchet: could not check: needs stat -c (GNU coreutils or BusyBox) on the host\n");
  // Without xargs no descriptor is stat-ed: never "nobody holds it".
  std::string noxargs = testing::temp_dir("ratchet-noxargs");
  REQUIRE(run_sh("for t in " + bin + "/*; do case \"${t##*/}\" in xargs) ;; *) ln -s \"$t\" " + noxargs +
                 "/;; esac; done").code == 0);
  r = run_sh("PATH=" + noxargs + " /bin/dash -c " +
             util::shell_quote(steps::with_library("ratchet_no_holders -- '" + d + "/gpu0'")));
  CHECK(r.code == 5);
  CHECK(r.err.find("ratchet: could not check: needs xargs and stat -c") != std::string::npos);
}

TEST_CASE("verify conditions: port_open, port_free and absent read /proc and say what violates them",
          "[steps][library]") {
  testing::SilentListener l;
  const std::string port = std::to_string(l.port());
  CHECK(lib("ratchet_port_open " + port).code == 0);
  auto r = lib("ratchet_port_free " + port);
  CHECK(r.code == 1);
  // The words, then who listens: this test process holds the socket.
  CHECK(r.out.rfind("port " + port + " is in use\nholder\t" + std::to_string(getpid()) + "\t", 0) == 0);
  CHECK(r.out.find("\ttcp port " + port + "\n") != std::string::npos);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);
  // A port nothing listens on (the listener's, once it is closed, is not sure to stay free: use 1).
  r = lib("ratchet_port_open 1");
  CHECK(r.code == 1);
  CHECK(r.out == "nothing listens on port 1\n");
  CHECK(lib("ratchet_port_free 1").code == 0);

  OwnedProcess a("exec sleep 125");
  REQUIRE(eventually([&] { return a.alive(); }));
  r = lib("ratchet_absent '^sleep 125$'");
  CHECK(r.code == 1);
  auto p = steps::parse_process_lines(r.out, "process");
  REQUIRE(p.size() == 1);
  CHECK(p[0].pid == a.pid());
  CHECK(lib("ratchet_absent '^sleep 999125$'").code == 0);
  CHECK(lib("ratchet_absent 'a('").code == 2);  // not a regex: could not check
}

TEST_CASE("holders: a namesake is not the file - another mount namespace, a deleted file, . and .. of a glob",
          "[steps][library]") {
  std::string d = stand_ins({"other"});
  std::filesystem::create_directories(d + "/app");
  testing::write_file(d + "/app/.hidden", "");
  // `.*` in the shell matches . and ..: the parent's holder is never selected.
  OwnedProcess parent_holder("exec 3<" + d + "/other; exec sleep 126");
  REQUIRE(eventually([&] { return fd_count(parent_holder.pid(), d) == 1; }));
  auto r = lib("ratchet_kill --signal CONT --wait-ms 0 holders_of '" + d + "/app/.*'");
  INFO(r.out << r.err);
  CHECK(steps::parse_process_lines(r.out, "signalled").empty());
  // A file held, then deleted, and a new file named like the old link ("f (deleted)").
  testing::write_file(d + "/f", "");
  OwnedProcess deleted_holder("exec 3<" + d + "/f; exec sleep 127");
  REQUIRE(eventually([&] { return fd_count(deleted_holder.pid(), d) == 1; }));
  std::filesystem::remove(d + "/f");
  testing::write_file(d + "/f (deleted)", "");
  CHECK(lib("ratchet_holders '' '' '" + d + "/f (deleted)'").out == "");
  // The same path in another mount namespace is another file.
  std::filesystem::create_directories(d + "/ns");
  testing::write_file(d + "/ns/f", "");
  OwnedProcess ns_holder("exec unshare -m --propagation private sh -c 'mount -t tmpfs none " + d + "/ns && : > " + d +
                         "/ns/f && exec 3<" + d + "/ns/f && exec sleep 128'");
  REQUIRE(eventually([&] {
    return run_sh("find /proc/" + std::to_string(ns_holder.pid()) + "/fd -lname '" + d + "/ns/f' | grep -q .").code == 0;
  }));
  CHECK(lib("ratchet_holders '' '' '" + d + "/ns/f'").out == "");
}

TEST_CASE("holders: a working directory inside a target directory holds it, as fuser's c does", "[steps][library]") {
  std::string d = stand_ins({});
  std::filesystem::create_directories(d + "/mnt/sub");
  OwnedProcess in_dir("cd " + d + "/mnt/sub && exec sleep 129");
  REQUIRE(eventually([&] { return in_dir.alive(); }));
  auto h = steps::parse_process_lines(lib("ratchet_holders '' '' '" + d + "/mnt'").out, "");
  REQUIRE(eventually([&] { return !steps::parse_process_lines(lib("ratchet_holders '' '' '" + d + "/mnt'").out, "").empty(); }));
  h = steps::parse_process_lines(lib("ratchet_holders '' '' '" + d + "/mnt'").out, "");
  REQUIRE(h.size() == 1);
  CHECK(h[0].pid == in_dir.pid());
  CHECK(h[0].files == std::vector<std::string>{d + "/mnt/sub"});
}

// R27 (a login that is not root, on a BusyBox host): the login's own zombies
// (a child its parent has not reaped yet, such as a holder just killed) hold
// no files; a process of its own that is not dumpable (another SSH session's
// sshd) is a warning. Linux shows the effective UID on /proc/PID whatever the
// dumpable flag; /proc/PID/fd is root's for both.
// One test case, two sections run one after the other: each scans as nobody
// with --user nobody, so the other's processes of nobody (a capable one, a
// non-dumpable one) would change its answer if they ran at once (ctest -j2).
TEST_CASE("holders as nobody: its own zombies are not unreadable, its processes that are not dumpable are a warning, a holder it may not inspect is never free, a memfd is no device node",
          "[steps][library]") {
  SECTION("the login's own zombies are not unreadable and its processes that are not dumpable are a warning") {
    std::string d = stand_ins({"dev0"});
    chmod(d.c_str(), 0755);
    chmod((d + "/dev0").c_str(), 0644);
    // nobody's `sleep 0`, never reaped by its parent (a sleep): a zombie of nobody.
    OwnedProcess parent("exec setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c 'sleep 0 & exec sleep 134'");
    const std::string zombie_of = "awk -v p=" + std::to_string(parent.pid()) +
                                  " '$1 == \"PPid:\" && $2 == p { z = 1 } $1 == \"State:\" && $2 == \"Z\" { s = 1 } "
                                  "END { exit !(z && s) }' ";
    REQUIRE(eventually([&] {
      return run_sh("for s in /proc/[0-9]*/status; do " + zombie_of + "\"$s\" 2>/dev/null && exit 0; done; exit 1").code == 0;
    }));
    auto r = lib_as_nobody("ratchet_no_holders --user nobody -- '" + d + "/dev0'");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    parent.stop();
    // nobody's, every UID nobody's, not dumpable (prctl PR_SET_DUMPABLE 0).
    OwnedProcess undumpable("exec setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c 'import ctypes, "
                            "time; ctypes.CDLL(None).prctl(4, 0); time.sleep(135)'");
    REQUIRE(eventually([&] {
      struct stat st {};
      return stat(("/proc/" + std::to_string(undumpable.pid()) + "/fd").c_str(), &st) == 0 && st.st_uid == 0 &&
             stat(("/proc/" + std::to_string(undumpable.pid())).c_str(), &st) == 0 && st.st_uid != 0;
    }));
    r = lib_as_nobody("ratchet_no_holders --user nobody -- '" + d + "/dev0'");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(r.err.find("ratchet: warning: processes of nobody that are not dumpable") != std::string::npos);
    CHECK(r.err.find(std::to_string(undumpable.pid()) + " (python3)") != std::string::npos);
    CHECK(r.err.find("could not check") == std::string::npos);
  }
  SECTION("a holder the login may not inspect (more capabilities, or not its own UIDs) is never free") {
    std::string d = stand_ins({"dev0", "dev1"});
    chmod(d.c_str(), 0755);
    chmod((d + "/dev0").c_str(), 0644);
    chmod((d + "/dev1").c_str(), 0644);
    // nobody's process, with a capability nobody's scan lacks: its fd dir is nobody's, its links are not readable.
    OwnedProcess capped("exec setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps +net_bind_service "
                        "--ambient-caps +net_bind_service sh -c 'exec 3<" + d + "/dev0; exec sleep 130'");
    REQUIRE(eventually([&] { return fd_count(capped.pid(), d) == 1; }));
    auto r = lib_as_nobody("ratchet_no_holders --user nobody -- '" + d + "/dev0'");
    INFO(r.out << r.err);
    CHECK(r.code == 5);
    CHECK(r.err.find("ratchet: could not check: 1 process's open files are unreadable as nobody (owners: nobody)") !=
          std::string::npos);
    capped.stop();
    // Effective UID nobody, real and saved root: not the login user's own process.
    OwnedProcess setuid_like("exec perl -e 'open F, \"<\", \"" + d + "/dev1\"; $> = 65534; sleep 131'");
    REQUIRE(eventually([&] { return fd_count(setuid_like.pid(), d) == 1; }));
    r = lib_as_nobody("ratchet_no_holders --user nobody -- '" + d + "/dev1'");
    INFO(r.out << r.err);
    CHECK(r.code == 5);
    CHECK(r.err.find("warning") == std::string::npos);
  }
  SECTION("a device target: the kernel's own shared memory mapped (memfd, deleted by nature) is no node, not unreadable") {
    std::string d = testing::temp_dir("ratchet-memfd");
    chmod(d.c_str(), 0755);
    REQUIRE(run_sh("mknod '" + d + "/gpu0' b 7 7 && chmod 644 '" + d + "/gpu0'").code == 0);
    // nobody's: a memfd mapped ("/memfd:x (deleted)" in maps); map_files is closed to nobody.
    OwnedProcess memfd("exec setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c 'import os, mmap, "
                       "time; f = os.memfd_create(\"x\"); os.ftruncate(f, 4096); m = mmap.mmap(f, 4096); time.sleep(136)'");
    REQUIRE(eventually([&] {
      return run_sh("grep -q '/memfd:x (deleted)' /proc/" + std::to_string(memfd.pid()) + "/maps").code == 0;
    }));
    auto r = lib_as_nobody("ratchet_no_holders --user nobody -- '" + d + "/gpu0'");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(r.err.find("could not check") == std::string::npos);
  }
}

TEST_CASE("holders: a device target is held through any node of its number - by a descriptor or a mapping",
          "[steps][library]") {
  std::string d = testing::temp_dir("ratchet-rdev");
  // 1:7 is /dev/full's number, 1:5 /dev/zero's: the nodes are only opened.
  REQUIRE(run_sh("cd '" + d + "' && mknod gpu0 c 1 7 && mknod mine c 1 7 && mknod zero c 1 5").code == 0);
  const std::string busy = lib("ratchet_no_holders -- '" + d + "/gpu0'").out;
  if (!busy.empty()) {
    WARN("some process on this machine holds device 1:7 (/dev/full): not run");
    return;
  }
  OwnedProcess other_node("exec sleep 300 3<'" + d + "/mine'");  // another node, same number: a holder
  OwnedProcess zero("exec sleep 301 3<'" + d + "/zero'");          // another number: not one
  REQUIRE(eventually([&] { return run_sh("test -e /proc/" + std::to_string(other_node.pid()) + "/fd/3 && test -e /proc/" +
                                         std::to_string(zero.pid()) + "/fd/3").code == 0; }));
  auto r = lib("ratchet_no_holders -- '" + d + "/gpu0'");
  CHECK(r.code == 1);
  auto h = steps::parse_process_lines(r.out, "holder");
  REQUIRE(h.size() == 1);
  CHECK(h[0].pid == other_node.pid());
  CHECK(h[0].files == std::vector<std::string>{d + "/gpu0"});
  REQUIRE(h[0].nodes.size() == 1);
  CHECK(h[0].nodes[0] == steps::HeldNode{d + "/gpu0", d + "/mine", "", "1:7"});
  // A mapping carries its node's own device and inode: the node is stat-ed
  // through /proc/PID/root (ratchet_match's M lines; m: the same file mapped
  // by another process), and only a node of the target's number holds it.
  const std::string id = run_sh("stat -c %d:%i '" + d + "/mine'").out, z = run_sh("stat -c %d:%i '" + d + "/zero'").out;
  const std::string me = std::to_string(getpid());
  r = lib("RATCHET_WANT=$(ratchet_targets '" + d + "/gpu0'); printf 'M\\t" + me + "\\t" + d + "/mine\\t" +
          id.substr(0, id.size() - 1) + "\\nm\\t77\\t/x\\t" + id.substr(0, id.size() - 1) + "\\nM\\t" + me + "\\t" + d +
          "/zero\\t" + z.substr(0, z.size() - 1) + "\\n' > '" + d + "/cand'; ratchet_match '" + d + "/cand' '" + d + "/err'");
  CHECK(r.code == 0);
  CHECK(r.out == me + "\t" + d + "/gpu0\nN\t" + me + "\t" + d + "/gpu0\t" + d + "/mine\t-\t1:7\n77\t" + d +
                     "/gpu0\nN\t77\t" + d + "/gpu0\t/x\t-\t1:7\n");
}

TEST_CASE("holders: a thread with a descriptor table of its own (unshare CLONE_FILES) is a holder, named with its TID",
          "[steps][library]") {
  std::string d = stand_ins({"gpu0"});
  OwnedProcess t(std::string("exec ") + RATCHET_THREAD_HOLDER + " --unshare " + d + "/gpu0");
  const std::string pid = std::to_string(t.pid());
  // The thread's table holds it; /proc/PID/fd (the leader's) never shows it.
  auto thread_fd = [&] { return run_sh("find /proc/" + pid + "/task/*/fd -lname '" + d + "/gpu0' | head -n 1").out; };
  REQUIRE(eventually([&] { return !thread_fd().empty(); }));
  CHECK(fd_count(t.pid(), d) == 0);
  const std::string tid = run_sh("echo '" + thread_fd() + "' | cut -d/ -f5").out;
  REQUIRE(tid.size() > 1);
  const long long tid_n = std::stoll(tid);
  CHECK(tid_n != t.pid());

  // Only the thread whose table is not its leader's is walked (the leader's is /proc/PID/fd).
  auto tt = lib("ratchet_task_tables " + pid);
  CHECK(tt.out.find("/proc/" + pid + "/task/" + std::to_string(tid_n) + "/fd\n") != std::string::npos);
  CHECK(tt.out.find("/proc/" + pid + "/task/" + pid + "/fd") == std::string::npos);

  for (const std::string target : {d + "/gpu0", d + "/"}) {  // a file, and the directory above it
    auto r = lib("ratchet_no_holders -- '" + target + "'");
    INFO(target << "\n" << r.out << r.err);
    CHECK(r.code == 1);
    auto h = steps::parse_process_lines(r.out, "holder");
    REQUIRE(h.size() == 1);
    CHECK(h[0].pid == t.pid());
    CHECK(h[0].files == std::vector<std::string>{d + "/gpu0"});
    REQUIRE(h[0].threads.size() == 1);
    CHECK(h[0].threads[0] == steps::HeldThread{tid_n, d + "/gpu0"});
    CHECK(steps::thread_text(h[0].pid, h[0].threads[0]) ==
          "PID " + pid + " holds " + d + "/gpu0 through its thread " + std::to_string(tid_n) +
              ", which has a descriptor table of its own");
  }
  // holders_of signals it, and its check names it while it lives.
  auto k = lib("ratchet_kill --signal KILL --wait-ms 3000 holders_of '" + d + "/gpu0'");
  INFO(k.out << k.err);
  CHECK(steps::parse_process_lines(k.out, "signalled").size() == 1);
  CHECK(steps::parse_process_lines(k.out, "alive").empty());
  CHECK(lib("ratchet_no_holders -- '" + d + "/gpu0'").code == 0);
}

TEST_CASE("holders: a mapped node or file whose name was removed is held (map_files), named without a glued (deleted), and a newline in a node name never prints raw",
          "[steps][library]") {
  std::string d = testing::temp_dir("ratchet-unlinked");
  // 7:7 is a loop device's number: a node of it is only mapped (read-only, nothing read).
  REQUIRE(run_sh("cd '" + d + "' && mknod gpu0 b 7 7 && mknod mine b 7 7 && mknod 'mi\nne' b 7 7").code == 0);
  if (!lib("ratchet_no_holders -- '" + d + "/gpu0'").out.empty()) {
    WARN("some process on this machine holds device 7:7: not run");
    return;
  }
  const std::string nl = d + "/mi\nne";
  OwnedProcess a(std::string("exec ") + RATCHET_THREAD_HOLDER + " --map-unlink '" + d + "/mine'");
  OwnedProcess b(std::string("exec ") + RATCHET_THREAD_HOLDER + " --map-unlink \"$(printf '" + d + "/mi\\nne')\"");
  auto unlinked = [&](pid_t p) {
    return run_sh("grep -q ' (deleted)$' /proc/" + std::to_string(p) + "/maps && ! test -e '" + d + "/mine'").code == 0;
  };
  REQUIRE(eventually([&] { return unlinked(a.pid()) && unlinked(b.pid()) && !std::filesystem::exists(nl); }));
  auto r = lib("ratchet_no_holders -- '" + d + "/gpu0'");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  auto h = steps::parse_process_lines(r.out, "holder");
  REQUIRE(h.size() == 2);
  auto& ha = h[0].pid == a.pid() ? h[0] : h[1];
  auto& hb = h[0].pid == b.pid() ? h[0] : h[1];
  CHECK(ha.files == std::vector<std::string>{d + "/gpu0"});
  REQUIRE(ha.nodes.size() == 1);
  CHECK(ha.nodes[0] == steps::HeldNode{d + "/gpu0", d + "/mine", "", "7:7", true});
  CHECK(steps::node_text(ha.pid, ha.nodes[0]) == "PID " + std::to_string(ha.pid) + " holds the deleted node " + d +
                                                   "/mine: same device 7:7 as " + d + "/gpu0");
  REQUIRE(hb.nodes.size() == 1);
  CHECK(hb.nodes[0].node == nl);
  CHECK(hb.nodes[0].deleted);
  const std::string text = steps::node_text(hb.pid, hb.nodes[0]);
  CHECK(text.find('\n') == std::string::npos);
  CHECK(text.find("the deleted node \"" + d + "/mi\\nne\":") != std::string::npos);
  CHECK(r.out.find(" (deleted)") == std::string::npos);

  // A file target mapped through a hard link that was then removed: the same
  // device and inode (the maps line's own), another name.
  testing::write_file(d + "/f", "");
  REQUIRE(run_sh("ln '" + d + "/f' '" + d + "/g'").code == 0);
  OwnedProcess c(std::string("exec ") + RATCHET_THREAD_HOLDER + " --map-unlink '" + d + "/g'");
  REQUIRE(eventually([&] { return unlinked(c.pid()) && !std::filesystem::exists(d + "/g"); }));
  r = lib("ratchet_no_holders -- '" + d + "/f'");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  h = steps::parse_process_lines(r.out, "holder");
  REQUIRE(h.size() == 1);
  CHECK(h[0].pid == c.pid());
  CHECK(h[0].files == std::vector<std::string>{d + "/f"});
}

namespace {

/// Fields 3.. of /proc/PID/stat (state first), read here after the last ')':
/// what the library's one stat reader must agree with.
std::vector<std::string> stat_fields_of(pid_t pid) {
  std::string s = testing::read_file("/proc/" + std::to_string(pid) + "/stat");
  std::vector<std::string> out;
  const size_t close = s.rfind(')');
  if (close == std::string::npos) return out;
  std::istringstream in(s.substr(close + 1));
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

TEST_CASE("stat fields: start, state, parent and liveness come from one reader, after the last ) of a comm with parens, blanks and a newline",
          "[steps][library]") {
  std::string d = stand_ins({});
  // comm (15 bytes) "x) R 1 (y\n) Z 2": a parser that cut at the first ") " would read state R.
  const std::string bin = d + "/x) R 1 (y\n) Z 2";
  REQUIRE(run_sh("cp /bin/sleep \"$(printf '" + d + "/x) R 1 (y\\n) Z 2')\"").code == 0);
  REQUIRE(std::filesystem::exists(bin));
  OwnedProcess p("exec \"$(printf '" + d + "/x) R 1 (y\\n) Z 2')\" 300");
  REQUIRE(eventually([&] { return testing::read_file("/proc/" + std::to_string(p.pid()) + "/comm") == "x) R 1 (y\n) Z 2\n"; }));
  const auto f = stat_fields_of(p.pid());
  REQUIRE(f.size() > 20);
  CHECK(f[0] == "S");
  const std::string pid = std::to_string(p.pid());
  auto r = lib("ratchet_start " + pid + "; ratchet_state " + pid + "; ratchet_stat_fields " + pid +
               "; printf '%s %s %s\\n' \"$RATCHET_STATE\" \"$RATCHET_PPID\" \"$RATCHET_TICKS\"");
  CHECK(r.out == f[19] + "\nS\nS " + f[1] + " " + f[19] + "\n");
  CHECK(f[1] == std::to_string(getpid()));
  // Liveness: the same start time is this process, another is a recycled PID.
  CHECK(lib("ratchet_same_alive " + pid + " " + f[19]).code == 0);
  CHECK(lib("ratchet_same_alive " + pid + " " + std::to_string(std::stoll(f[19]) + 1)).code == 1);
  // A PID no process can have (above Linux's largest pid_max): nothing printed, all fields "".
  r = lib("ratchet_start 4194305; ratchet_state 4194305; ratchet_stat_fields 4194305; "
          "printf '[%s%s%s]\\n' \"$RATCHET_STATE\" \"$RATCHET_PPID\" \"$RATCHET_TICKS\"; ratchet_same_alive 4194305 1");
  CHECK(r.out == "[]\n");
  CHECK(r.code == 1);
  // No stat_word is left: one reader of /proc/PID/stat.
  CHECK(lib("command -v ratchet_stat_word").code != 0);
}

namespace {

/// The state letter of PID (/proc/PID/stat field 3); "" when it is gone.
std::string state_of(pid_t pid) {
  const auto f = stat_fields_of(pid);
  return f.empty() ? "" : f[0];
}

/// TracerPid of PID (/proc/PID/status); -1 when unreadable.
long long tracer_of(pid_t pid) {
  auto r = run_sh("awk '$1 == \"TracerPid:\" { print $2 }' /proc/" + std::to_string(pid) + "/status");
  return r.out.empty() ? -1 : std::stoll(r.out);
}

}  // namespace

TEST_CASE("kill TERM of a holder its tracer keeps in tracing stop: CONT cannot resume it, it is named with its tracer, KILL ends it",
          "[steps][library][kill]") {
  std::string d = stand_ins({"nvidia0"});
  OwnedProcess held("exec 3<" + d + "/nvidia0; exec sleep 301");
  REQUIRE(eventually([&] { return fd_count(held.pid(), d) == 1; }));
  OwnedProcess tracer(std::string("exec ") + RATCHET_TRACER + " " + std::to_string(held.pid()));
  REQUIRE(eventually([&] { return state_of(held.pid()) == "t" && tracer_of(held.pid()) == tracer.pid(); }));
  const std::string pid = std::to_string(held.pid());

  auto r = lib("ratchet_kill --signal TERM --wait-ms 300 holders_of '" + d + "/nvidia0'");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("continued\t" + pid + "\t") != std::string::npos);  // CONT was sent, and did nothing
  auto alive = steps::parse_process_lines(r.out, "alive");
  REQUIRE(alive.size() == 1);
  CHECK(alive[0].pid == held.pid());
  CHECK(alive[0].state == "t");
  auto t = steps::parse_traced(r.out);
  REQUIRE(t.size() == 1);
  CHECK(t[0] == steps::Traced{held.pid(), "sleep", tracer.pid(), "tracer"});
  CHECK(steps::traced_text(t[0]) == "PID " + pid + " (sleep) is stopped by its tracer PID " +
                                        std::to_string(tracer.pid()) +
                                        " (tracer): CONT does not resume it; detach or end the tracer");
  CHECK(state_of(held.pid()) == "t");  // TERM pending, the tracer still holds it

  // KILL ends a traced process (a zombie its tracer has not reaped: dead to the check).
  auto k = lib("ratchet_kill --signal KILL --wait-ms 2000 holders_of '" + d + "/nvidia0'");
  INFO(k.out << k.err);
  CHECK(steps::parse_process_lines(k.out, "signalled").size() == 1);
  CHECK(steps::parse_process_lines(k.out, "alive").empty());
  CHECK(steps::parse_traced(k.out).empty());
  CHECK(eventually([&] { return state_of(held.pid()) == "Z" || state_of(held.pid()).empty(); }));
  CHECK(lib("ratchet_no_holders -- '" + d + "/nvidia0'").code == 0);
}

TEST_CASE("tracer: an untraced process has no traced line", "[steps][library][kill]") {
  OwnedProcess p("exec sleep 302");
  REQUIRE(eventually([&] { return state_of(p.pid()) == "S"; }));
  auto r = lib("ratchet_tracer " + std::to_string(p.pid()) + "; ratchet_tracer 4194305");
  CHECK(r.code == 0);
  CHECK(r.out == "");
}

TEST_CASE("frozen: the v1 freezer and v2 cgroups that froze a process are named, nearest first, and none when thawed",
          "[steps][library][kill]") {
  // A stand-in /sys/fs/cgroup: v1 hierarchies beside v2 at ROOT/unified.
  const std::string root = testing::temp_dir("ratchet-cgroups");
  auto put = [&](const std::string& rel, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(root + rel).parent_path());
    testing::write_file(root + rel, text);
  };
  put("/unified/cgroup.controllers", "cpu io\n");
  put("/unified/a/cgroup.freeze", "1\n");
  put("/unified/a/b/cgroup.freeze", "0\n");
  put("/unified/a/b/c/cgroup.freeze", "1\n");
  put("/freezer/x/freezer.self_freezing", "1\n");
  put("/freezer/x/y/freezer.self_freezing", "0\n");
  put("/memory/x/y/freezer.self_freezing", "1\n");  // not the freezer hierarchy: never read
  const std::string cg = root + "/cgroup";
  testing::write_file(cg, "9:name=systemd:/\n6:freezer:/x/y\n4:memory:/x/y\n0::/a/b/c\n");
  auto r = lib("ratchet_frozen 7 '" + cg + "' '" + root + "'");
  CHECK(r.code == 0);
  CHECK(r.out == "frozen\t7\tv1\t" + root + "/freezer/x\n" + "frozen\t7\tv2\t" + root + "/unified/a/b/c\n" +
                     "frozen\t7\tv2\t" + root + "/unified/a\n");
  auto u = steps::parse_unkillable("alive\t7\troot\t1\t1.0\tpython3\tpython3 x.py\tD:__refrigerator\t-\t/d\n"
                                   "unkillable\t7\tD\t__refrigerator\n" + r.out);
  REQUIRE(u.size() == 1);
  CHECK(u[0].frozen == std::vector<steps::FrozenCgroup>{{steps::FrozenCgroup::Version::v1, root + "/freezer/x"},
                                                        {steps::FrozenCgroup::Version::v2, root + "/unified/a/b/c"},
                                                        {steps::FrozenCgroup::Version::v2, root + "/unified/a"}});

  // cgroup v2 alone (its mount at ROOT), a cgroup name with a tab: %-encoded, one field.
  const std::string v2 = testing::temp_dir("ratchet-cgroups");
  std::filesystem::create_directories(v2 + "/k\tl");
  testing::write_file(v2 + "/cgroup.controllers", "\n");
  testing::write_file(v2 + "/k\tl/cgroup.freeze", "1\n");
  testing::write_file(v2 + "/cgroup", "0::/k\tl\n");
  r = lib("ratchet_frozen 8 '" + v2 + "/cgroup' '" + v2 + "'");
  CHECK(r.out == "frozen\t8\tv2\t" + v2 + "/k%09l\n");
  u = steps::parse_unkillable("unkillable\t8\tD\tx\n" + r.out);
  REQUIRE(u.size() == 1);
  REQUIRE(u[0].frozen.size() == 1);
  CHECK(u[0].frozen[0].dir == v2 + "/k\tl");

  // Thawed, or a cgroup file that cannot be read: nothing.
  testing::write_file(root + "/unified/a/cgroup.freeze", "0\n");
  testing::write_file(root + "/unified/a/b/c/cgroup.freeze", "0\n");
  testing::write_file(root + "/freezer/x/freezer.self_freezing", "0\n");
  CHECK(lib("ratchet_frozen 7 '" + cg + "' '" + root + "'").out == "");
  r = lib("ratchet_frozen 7 '" + root + "/none' '" + root + "'");
  CHECK(r.code == 0);
  CHECK(r.out == "");
}

TEST_CASE("holders: the perl gatherer and the POSIX-tools one give the same lines - files, names, a directory, cwd, device numbers, a deleted mapping, a thread's own table",
          "[steps][library]") {
  if (run_sh("command -v perl").code != 0) FAIL("perl is not installed (the one-process gatherer needs it)");
  std::string d = testing::temp_dir("ratchet-gather");
  // 1:7 (/dev/full's number) and 7:7 (a loop device's) as nodes here: only opened or mapped, never read.
  REQUIRE(run_sh("cd '" + d + "' && mkdir -p caps/sub && : > caps/cap1 && : > gpu0 && : > gpu1 && : > gpu2 && : > \"$(printf 'o%%dd\\tname')\" && "
                 "mknod dev0 c 1 7 && mknod mine c 1 7 && mknod blk0 b 7 7 && mknod blkmine b 7 7").code == 0);
  if (!lib("ratchet_no_holders -- '" + d + "/dev0' '" + d + "/blk0'").out.empty()) {
    WARN("some process on this machine holds device 1:7 or 7:7: not run");
    return;
  }
  OwnedProcess files("exec sleep 141 3<'" + d + "/gpu0' 4<\"$(printf '" + d + "/o%%dd\\tname')\" 5<'" + d + "/mine'");
  OwnedProcess cwd("cd '" + d + "/caps/sub' && exec sleep 142");  // a working directory beneath a target directory
  OwnedProcess thread(std::string("exec ") + RATCHET_THREAD_HOLDER + " --unshare " + d + "/gpu1");
  OwnedProcess mapped(std::string("exec ") + RATCHET_THREAD_HOLDER + " --map-unlink '" + d + "/blkmine'");
  OwnedProcess zombie_leader(std::string("exec ") + RATCHET_THREAD_HOLDER + " " + d + "/gpu2");
  REQUIRE(eventually([&] {
    return run_sh("grep -q '^State:.Z' /proc/" + std::to_string(zombie_leader.pid()) + "/status && find /proc/" +
                  std::to_string(zombie_leader.pid()) + "/task/*/fd -lname '" + d + "/gpu2' | grep -q .").code == 0;
  }));
  REQUIRE(eventually([&] {
    return fd_count(files.pid(), d) == 3 && !run_sh("find /proc/" + std::to_string(thread.pid()) + "/task/*/fd -lname '" +
                                                    d + "/gpu1'").out.empty() &&
           run_sh("grep -q ' (deleted)$' /proc/" + std::to_string(mapped.pid()) + "/maps").code == 0 &&
           run_sh("test \"$(readlink /proc/" + std::to_string(cwd.pid()) + "/cwd)\" = '" + d + "/caps/sub'").code == 0;
  }));
  // The clock fixed: the start times do not move with /proc/stat's btime between the two runs.
  const std::string fixed = "RATCHET_BT=1700000000 RATCHET_HZ=100 ";
  // Each target set with the exit both must give (caps/cap1: held by nobody).
  const std::vector<std::pair<std::string, int>> cases{
      {"'" + d + "/gpu*'", 1},          {"'" + d + "/'", 1},    {"'" + d + "/caps'", 1},
      {"'" + d + "/dev0'", 1},          {"'" + d + "/blk0'", 1}, {"'" + d + "/gpu2'", 1},
      {"\"$(printf '" + d + "/o%%dd\\tname')\" '" + d + "/gpu1'", 1}, {"'" + d + "/caps/cap1'", 0}};
  for (const auto& [targets, code] : cases) {
    auto perl = lib(fixed + "RATCHET_SCAN=perl; ratchet_no_holders -- " + targets);
    auto tools = lib(fixed + "RATCHET_SCAN=tools; ratchet_no_holders -- " + targets);
    INFO(targets << "\nperl:\n" << perl.out << perl.err << "tools:\n" << tools.out << tools.err);
    CHECK(perl.code == code);
    CHECK(perl.code == tools.code);
    CHECK(perl.out == tools.out);
    CHECK(perl.err == tools.err);
  }
  // What each found (the same for both, as checked above).
  auto pids = [](const std::string& out) {
    std::set<long long> s;
    for (const auto& h : steps::parse_process_lines(out, "holder")) s.insert(h.pid);
    return s;
  };
  CHECK(pids(lib("ratchet_no_holders -- '" + d + "/'").out) ==
        std::set<long long>{files.pid(), cwd.pid(), thread.pid(), mapped.pid(), zombie_leader.pid()});
  CHECK(pids(lib("ratchet_no_holders -- '" + d + "/dev0'").out) == std::set<long long>{files.pid()});
  CHECK(pids(lib("ratchet_no_holders -- '" + d + "/blk0'").out) == std::set<long long>{mapped.pid()});
  CHECK(pids(lib("ratchet_no_holders -- \"$(printf '" + d + "/o%%dd\\tname')\"").out) ==
        std::set<long long>{files.pid()});
  // A gatherer that fails is "could not check", never "free".
  auto r = lib("RATCHET_SCAN=perl; perl() { return 9; }; ratchet_no_holders -- '" + d + "/gpu0'");
  CHECK(r.code == 5);
  CHECK(r.err.find("ratchet: could not check: the /proc scan (perl) failed") != std::string::npos);
}

TEST_CASE("tracer: a process in tracing stop whose TracerPid reads 0 is traced from outside this PID namespace",
          "[steps][library][kill]") {
  // The holder and the scan in a PID namespace of their own (unshare, its own /proc); the stand-in debugger
  // outside it, which that namespace cannot see.
  if (run_sh("command -v unshare && command -v nsenter").code != 0) {
    WARN("no unshare or nsenter here: not run");
    return;
  }
  OwnedProcess ns("exec unshare -p -f --mount-proc sh -c 'sleep 100940 & wait'");
  std::string outer;
  REQUIRE(eventually([&] {
    outer = run_sh("for p in /proc/[0-9]*; do [ \"$({ tr '\\0' ' ' < $p/cmdline; } 2>/dev/null)\" = 'sleep 100940 ' ] && "
                 "echo ${p#/proc/}; done").out;
    return !outer.empty();
  }));
  outer.pop_back();
  std::string inner = run_sh("awk '$1 == \"NSpid:\" { print $NF }' /proc/" + outer + "/status").out;
  inner.pop_back();
  REQUIRE(inner != outer);
  const std::string libfile = testing::temp_dir("ratchet-pidns") + "/l";
  testing::write_file(libfile, steps::host_library());
  auto inside = [&] {
    return run_sh("nsenter -t " + outer + " -p -m sh -c '. " + libfile + "; ratchet_tracer " + inner + "'").out;
  };
  CHECK(inside() == "");  // not traced
  OwnedProcess tracer(std::string("exec ") + RATCHET_TRACER + " " + outer);
  REQUIRE(eventually([&] { return state_of(std::stol(outer)) == "t"; }));
  CHECK(inside() == "traced\t" + inner + "\t0\t-\n");
  // Seen from here, the tracer is named.
  CHECK(lib("ratchet_tracer " + outer).out == "traced\t" + outer + "\t" + std::to_string(tracer.pid()) + "\ttracer\n");
}

TEST_CASE("the host library as built has no comment line and stays under 100000 bytes, well inside one argument's cap",
          "[steps][library]") {
  // Under become the library travels in one argument of sudo's sh -c, and Linux
  // refuses an argument of 131072 bytes or more (MAX_ARG_STRLEN).
  const std::string& lib_text = steps::host_library();
  CHECK(lib_text.size() < 100000);
  CHECK(lib_text.find("ratchet_no_holders()") != std::string::npos);
  size_t comments = 0;
  for (size_t at = 0; at < lib_text.size();) {
    size_t nl = lib_text.find('\n', at);
    std::string line = lib_text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] == '#') ++comments;
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  CHECK(comments == 0);
}
