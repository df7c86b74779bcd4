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

#include "support/every_kind.h"
#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"

using namespace ratchet::testing;

namespace {

// A UID no other test's user is likely to have: the chroot's /proc is this
// machine's, and a process of another test's user with the same UID would be
// `alpine` to the scan (and, not dumpable, unreadable).
constexpr int kUid = 42727;
const char* const kChroot =
    "/run/ratchet-r27";  // in the sshd's namespace, where /run is its own overlay

struct BusyBoxHost {
  std::string dir = temp_dir("ratchet-r27");
  std::string root = dir + "/root";  // the chroot tree, bind-mounted at kChroot for the sshd
  SshdHost sshd{
      std::string(
          "SSHD_HOST_ETC_OVERLAY=1 EXTRA_SSHD_CONFIG='Match User alpine\\n  ChrootDirectory ") +
      kChroot + "'"};

  BusyBoxHost() {
    chmod(dir.c_str(), 0755);
    for (const char* d :
         {"bin", "sbin", "usr/bin", "usr/sbin", "dev", "proc", "tmp", "etc", "home/alpine", "w"})
      std::filesystem::create_directories(root + "/" + d);
    chmod(root.c_str(), 0755);
    chmod((root + "/tmp").c_str(), 01777);
    write_file(root + "/dev/null", "");  // a mount point: /dev/null is bound over it
    write_file(root + "/etc/passwd",
               "root:x:0:0:root:/root:/bin/sh\nalpine:x:" + std::to_string(kUid) + ":" +
                   std::to_string(kUid) + ":alpine:/home/alpine:/bin/sh\n");
    write_file(root + "/etc/group", "root:x:0:\nalpine:x:" + std::to_string(kUid) + ":\n");
    const std::string ids = std::to_string(kUid) + ":" + std::to_string(kUid);
    ShellResult t = run_sh("cp /bin/busybox '" + root + "/bin/busybox' && chroot '" + root +
                           "' /bin/busybox --install -s && chown " + ids + " '" + root +
                           "/home/alpine' '" + root + "/w'");
    INFO(t.out << t.err);
    REQUIRE(t.code == 0);
    // The user (in the sshd's /etc overlay), the tree at kChroot, /proc and /dev/null in it.
    ShellResult m =
        run_sh("nsenter -t " + std::to_string(sshd.pid()) + " -m sh -ec 'useradd -u " +
               std::to_string(kUid) + " -M -p \"*\" -s /bin/sh -d /home/alpine alpine; mkdir -p " +
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
  BusyBoxHost host;
  // What the login finds there: BusyBox's ash, a find that cannot -printf, none of the others.
  ShellResult probe = host.as_alpine(
      "id -u; readlink /bin/sh; readlink /proc/$$/exe; find /proc/self/fd -maxdepth 0 -printf \"\" "
      "2>/dev/null; "
      "echo printf=$?; for t in openssl pgrep systemctl sudo getent bash; do command -v $t; done; "
      "echo end");
  INFO(probe.out << probe.err);
  CHECK(probe.out == std::to_string(kUid) + "\n/bin/busybox\n/bin/busybox\nprintf=1\nend\n");

  for (const std::string transport : {"session", "channel"}) {
    INFO("over " << transport);
    const std::string h = "/w/" + transport;  // as the host sees it
    const std::string here = host.root + h;   // the same directory from this machine
    std::filesystem::create_directories(here);
    chown(here.c_str(), kUid, kUid);
    EveryKind k{h, host.dir + "/" + transport, "alpine"};
    write_file(here + "/held", "");
    // The holder runs in the chroot as alpine, as any process of that host would.
    OwnedProcess holder("exec nsenter -t " + std::to_string(host.sshd.pid()) +
                        " -m chroot --userspec=" + std::to_string(kUid) + ":" +
                        std::to_string(kUid) + " " + kChroot + " /bin/sh -c 'exec sleep 1027 3<" +
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
    CHECK(st.st_uid == static_cast<uid_t>(kUid));
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
