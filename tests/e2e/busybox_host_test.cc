// R27 (docs/reliability.md): a host whose tools are BusyBox applets only
// (OpenWrt, Alpine's busybox base): ash as /bin/sh, a find without -printf,
// no openssl, no procps, no systemd, no sudo. A real sshd on 127.0.0.1 chroots
// the login user `alpine` (ChrootDirectory) into a root-owned tree that holds
// busybox-static and its applet links, /dev/null and /proc (bind mounts in the
// sshd's own mount namespace: this machine's mounts are untouched), and
// /etc/passwd and /etc/group. One step of each kind runs there as that user
// (not root: there is no become), on both transports: each ends as on a plain
// host, service (no systemctl) says so in the exact words, and no step reads
// an empty scan as "free". A second run finds every state already there.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "steps/library.h"
#include "support/every_kind.h"
#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"
#include "util/shell.h"

using namespace ratchet::testing;

namespace {

const char* const kChroot =
    "/run/ratchet-r27";  // in the sshd's namespace, where /run is its own overlay

struct BusyBoxHost {
  /// A UID no other test's user has, one per test case: the chroot's /proc is this
  /// machine's, and a process of another test's user (or of another case's SSH
  /// session, ctest runs them side by side) with the same UID would be `alpine`
  /// to the scan (and, not dumpable, unreadable: a warning in the step's reason).
  const int uid;
  std::string dir = temp_dir("ratchet-r27");
  std::string root = dir + "/root";  // the chroot tree, bind-mounted at kChroot for the sshd
  SshdHost sshd{
      std::string(
          "SSHD_HOST_ETC_OVERLAY=1 EXTRA_SSHD_CONFIG='Match User alpine\\n  ChrootDirectory ") +
      kChroot + "'"};

  explicit BusyBoxHost(int uid_) : uid(uid_) {
    chmod(dir.c_str(), 0755);
    for (const char* d :
         {"bin", "sbin", "usr/bin", "usr/sbin", "dev", "proc", "tmp", "etc", "home/alpine", "w"})
      std::filesystem::create_directories(root + "/" + d);
    chmod(root.c_str(), 0755);
    chmod((root + "/tmp").c_str(), 01777);
    write_file(root + "/dev/null", "");  // a mount point: /dev/null is bound over it
    write_file(root + "/etc/passwd",
               "root:x:0:0:root:/root:/bin/sh\nalpine:x:" + std::to_string(uid) + ":" +
                   std::to_string(uid) + ":alpine:/home/alpine:/bin/sh\n");
    write_file(root + "/etc/group", "root:x:0:\nalpine:x:" + std::to_string(uid) + ":\n");
    const std::string ids = std::to_string(uid) + ":" + std::to_string(uid);
    ShellResult t = run_sh("cp /bin/busybox '" + root + "/bin/busybox' && chroot '" + root +
                           "' /bin/busybox --install -s && chown " + ids + " '" + root +
                           "/home/alpine' '" + root + "/w'");
    INFO(t.out << t.err);
    REQUIRE(t.code == 0);
    // The user (in the sshd's /etc overlay), the tree at kChroot, /proc and /dev/null in it.
    ShellResult m =
        run_sh("nsenter -t " + std::to_string(sshd.pid()) + " -m sh -ec 'useradd -u " +
               std::to_string(uid) + " -M -p \"*\" -s /bin/sh -d /home/alpine alpine; mkdir -p " +
               kChroot + "; mount --bind " + root + " " + kChroot + "; mount --bind /proc " +
               kChroot + "/proc; mount --bind /dev/null " + kChroot + "/dev/null'");
    INFO(m.out << m.err);
    REQUIRE(m.code == 0);
    const std::string keys =
        sshd.dir() + "/authorized_keys/alpine";  // read by sshd before it chroots
    write_file(keys, read_file(sshd.client_key() + ".pub"));
    chmod(keys.c_str(), 0644);
  }
  ShellResult as_alpine(const std::string& command) {
    return run_sh("ssh -o BatchMode=yes -o IdentitiesOnly=yes -o UserKnownHostsFile=" +
                  sshd.known_hosts() + " -i " + sshd.client_key() + " -p " +
                  std::to_string(sshd.port()) + " alpine@127.0.0.1 '" + command + "'");
  }
  std::string inventory() const {
    const std::string p = dir + "/inventory.toml";
    write_file(p, "[hosts.box]\naddress = \"127.0.0.1\"\nport = " + std::to_string(sshd.port()) +
                      "\nuser = \"alpine\"\nidentity = \"" + sshd.client_key() +
                      "\"\nknown_hosts = \"" + sshd.known_hosts() + "\"\n");
    return p;
  }
  /// The every-kind playbook over `transport`; returns the transcript's path.
  std::string run(const EveryKind& k, const std::string& transport, const std::string& transcript) {
    ShellResult r =
        run_sh(std::string(RATCHET_BINARY) + " run " + k.playbook() + " -i " + inventory() +
               " -F none --transport " + transport + " --transcript " + transcript);
    INFO(r.out << r.err);
    CHECK(r.code ==
          1);  // the service step's could-not-check, and nothing else (checked by the caller)
    return transcript;
  }
};

const std::string kNoSystemctl = "could not check: systemctl not found: not a systemd host";

}  // namespace

TEST_CASE(
    "R27: on a BusyBox-only host (ash - no find -printf - no openssl - no procps) every kind ends "
    "as on a "
    "plain host over both transports and service says it cannot check",
    "[ssh][e2e]") {
  BusyBoxHost host{42727};
  // What the login finds there: BusyBox's ash, a find that cannot -printf, none of the others.
  ShellResult probe = host.as_alpine(
      "id -u; readlink /bin/sh; readlink /proc/$$/exe; find /proc/self/fd -maxdepth 0 -printf \"\" "
      "2>/dev/null; "
      "echo printf=$?; for t in openssl pgrep systemctl sudo getent bash; do command -v $t; done; "
      "echo end");
  INFO(probe.out << probe.err);
  CHECK(probe.out == std::to_string(host.uid) + "\n/bin/busybox\n/bin/busybox\nprintf=1\nend\n");

  for (const std::string transport : {"session", "channel"}) {
    INFO("over " << transport);
    const std::string h = "/w/" + transport;  // as the host sees it
    const std::string here = host.root + h;   // the same directory from this machine
    std::filesystem::create_directories(here);
    chown(here.c_str(), host.uid, host.uid);
    EveryKind k{h, host.dir + "/" + transport, "alpine"};
    write_file(here + "/held", "");
    // The holder runs in the chroot as alpine, as any process of that host would.
    OwnedProcess holder("exec nsenter -t " + std::to_string(host.sshd.pid()) +
                        " -m chroot --userspec=" + std::to_string(host.uid) + ":" +
                        std::to_string(host.uid) + " " + kChroot + " /bin/sh -c 'exec sleep 1027 3<" +
                        k.held() + "'");
    REQUIRE(eventually([&] {
      return std::filesystem::exists("/proc/" + std::to_string(holder.pid()) + "/fd/3");
    }));
    const std::string t = host.run(k, transport, host.dir + "/" + transport + ".jsonl");
    CHECK(eventually([&] { return !holder.alive(); }));  // the kill step's KILL
    const auto got = step_statuses(t);
    const auto why = step_reasons(t);
    for (const auto& [step, status] : EveryKind::expected()) {
      INFO("step " << step << ": " << why.at(step));
      CHECK(got.at(step) == (status.empty() ? "failed" : status));
      if (step != "service") CHECK(why.at(step).empty());
    }
    CHECK(why.at("service") == kNoSystemctl);
    CHECK(read_file(here + "/write.txt") == "written\n");
    struct stat st {};
    REQUIRE(stat((here + "/write.txt").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0640);
    CHECK(st.st_uid == static_cast<uid_t>(host.uid));
    CHECK(read_file(here + "/tree/bin/tool.sh") == "#!/bin/sh\necho tool\n");
    CHECK(read_file(here + "/tree/a.conf") == "conf\n");
    CHECK(read_file(host.dir + "/" + transport + "/box" + h + "/run.out") == "ran\n");  // fetched
    CHECK(read_file(here + "/audit.log").find("\"playbook\":\"every-kind\"") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(here + "/lock"));  // released at the host's end
    // No tool was missing but systemctl, and no scan was refused.
    for (const auto& line : lines_with(t, "could not check"))
      CHECK(line.find(kNoSystemctl) != std::string::npos);
    for (const auto& line : lines_with(t, "not found"))
      CHECK(line.find(kNoSystemctl) != std::string::npos);
    CHECK(lines_with(t, "Permission denied").empty());
    CHECK(lines_with(t, "unreadable").empty());
    CHECK(lines_with(t, "ratchet-session:").empty());  // the session shell's own refusals

    // Again, with nothing left to do: each check reads the state it left (sha256 without openssl).
    const std::string again = host.run(k, transport, host.dir + "/" + transport + "-again.jsonl");
    const auto second = step_statuses(again);
    for (const char* step : {"run", "kill", "verify", "write", "copy"}) {
      INFO("again: step " << step << ": " << step_reasons(again)[step]);
      CHECK(second.at(step) == "ok");
    }
    CHECK(step_reasons(again).at("service") == kNoSystemctl);
    CHECK(second.at("fetch") == "changed");  // a fetch always downloads
  }
}

TEST_CASE(
    "R27: on a BusyBox-only host the other selectors and verify conditions read /proc without "
    "procps and "
    "say which tool is missing",
    "[ssh][e2e]") {
  BusyBoxHost host{42728};
  const auto in_chroot = [&](const std::string& script) {
    return "exec nsenter -t " + std::to_string(host.sshd.pid()) +
           " -m chroot --userspec=" + std::to_string(host.uid) + ":" + std::to_string(host.uid) + " " +
           kChroot + " /bin/sh -c '" + script + "'";
  };
  for (const std::string transport : {"session", "channel"}) {
    INFO("over " << transport);
    const std::string h = "/w/" + transport, here = host.root + h;
    std::filesystem::create_directories(here);
    chown(here.c_str(), host.uid, host.uid);
    // Stand-ins in the chroot as alpine: one to kill by pattern (no pgrep there), one by PID file.
    const std::string sleep_a = transport == "session" ? "1127" : "1137",
                      sleep_b = transport == "session" ? "1128" : "1138";
    OwnedProcess by_pattern(in_chroot("exec sleep " + sleep_a));
    OwnedProcess by_pid_file(in_chroot("echo $$ > " + h + "/pid; exec sleep " + sleep_b));
    REQUIRE(eventually(
        [&] { return read_file(here + "/pid") == std::to_string(by_pid_file.pid()) + "\n"; }));
    REQUIRE(eventually([&] {
      return read_file("/proc/" + std::to_string(by_pattern.pid()) + "/cmdline") ==
             "sleep" + std::string(1, '\0') + sleep_a + std::string(1, '\0');
    }));
    const std::string pb = host.dir + "/checks-" + transport + ".toml";
    write_file(pb, "name = \"busybox-checks\"\ntargets = [\"box\"]\naudit_log = \"" + h +
                       "/audit.log\"\n"
                       "[[step]]\nid = \"kill_pattern\"\nkind = \"kill\"\npattern = \"^sleep " +
                       sleep_a +
                       "$\"\nuser = \"alpine\"\nsignal = \"KILL\"\n"
                       "[[step]]\nid = \"kill_pid_file\"\nkind = \"kill\"\npid_file = \"" +
                       h +
                       "/pid\"\nsignal = \"KILL\"\n"
                       "[[step]]\nid = \"absent\"\nkind = \"verify\"\nabsent = [\"^sleep (" +
                       sleep_a + "|" + sleep_b +
                       ")$\"]\n"
                       "[[step]]\nid = \"ports\"\nkind = \"verify\"\nport_open = [" +
                       std::to_string(host.sshd.port()) + "]\nport_free = [" +
                       std::to_string(free_port()) +
                       "]\n"
                       "[[step]]\nid = \"command\"\nkind = \"verify\"\ncommand = \"uname "
                       "-s\"\nstdout_matches = \"^Linux$\"\n"
                       "[[step]]\nid = \"gpus\"\nkind = \"verify\"\ngpus_idle = true\non_failure = "
                       "\"continue\"\n"
                       "[[step]]\nid = \"service_active\"\nkind = \"verify\"\nservice_active = "
                       "[\"ratchet-absent.service\"]\n"
                       "on_failure = \"continue\"\n");
    const std::string t = host.dir + "/checks-" + transport + ".jsonl";
    ShellResult r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + host.inventory() +
                           " -F none --transport " + transport + " --transcript " + t);
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    const auto got = step_statuses(t), why = step_reasons(t);
    CHECK(got.at("kill_pattern") == "changed");
    CHECK(got.at("kill_pid_file") == "changed");
    CHECK(got.at("absent") == "ok");
    CHECK(got.at("ports") == "ok");
    CHECK(got.at("command") == "ok");
    CHECK(got.at("gpus") == "failed");  // no nvidia-smi: said, and where it was looked for
    CHECK(why.at("gpus").rfind("could not check: nvidia-smi not found on PATH (", 0) == 0);
    CHECK(why.at("gpus").find("; set nvidia_smi to its full path") != std::string::npos);
    CHECK(got.at("service_active") ==
          "failed");  // was: "exit 127: /bin/sh: eval: line 4: systemctl: not found"
    CHECK(why.at("service_active") == kNoSystemctl);
    CHECK(eventually([&] { return !by_pattern.alive() && !by_pid_file.alive(); }));
    CHECK(lines_with(t, "unreadable").empty());
    CHECK(lines_with(t, "Permission denied").empty());
  }
}

TEST_CASE(
    "R27: a BusyBox chroot without /proc - every process scan and the port checks say they cannot "
    "look",
    "[steps][library]") {
  // Run here (no sshd): a busybox tree with /dev/null and no /proc, entered with chroot(8) as root.
  const std::string root = temp_dir("ratchet-r27-noproc");
  ShellResult t = run_sh(
      "cd " + root +
      " && mkdir -p bin sbin usr/bin usr/sbin dev proc w && cp /bin/busybox bin/ && chroot . "
      "/bin/busybox --install -s && mknod -m 666 dev/null c 1 3 && : > w/f");
  INFO(t.out << t.err);
  REQUIRE(t.code == 0);
  const std::string no_proc =
      "ratchet: could not check: /proc is not mounted (the process scan needs /proc on the host)\n";
  for (const char* check :
       {"ratchet_no_holders -- /w/f", "ratchet_absent \"^x$\"",
        "ratchet_kill_check pattern \"^x$\"", "ratchet_kill_check holders_of /w/f",
        "ratchet_kill --signal KILL --wait-ms 100 pattern \"^x$\"",
        "ratchet_gpus_idle --smi /bin/true -- /w/f"}) {
    INFO(check);
    ShellResult r =
        run_sh("chroot " + root + " /bin/sh -c " +
               ratchet::util::shell_quote(ratchet::steps::with_library(check)) + " </dev/null");
    CHECK(r.code == 5);
    CHECK(r.out.empty());
    CHECK(r.err == no_proc);
  }
  for (const char* check : {"ratchet_port_free 1", "ratchet_port_open 1"}) {
    INFO(check);
    ShellResult r = run_sh("chroot " + root + " /bin/sh -c " +
                           ratchet::util::shell_quote(ratchet::steps::with_library(check)));
    CHECK(r.code == 5);
    CHECK(r.err ==
          "ratchet: could not check: cannot read /proc/net/tcp (needs /proc on the host)\n");
  }
}
