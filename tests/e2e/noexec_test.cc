// R06 (docs/reliability.md): a CIS-hardened host mounts /tmp, /var/tmp and
// $HOME noexec and sets TMPDIR=$HOME/tmp. Nothing ratchet sends may exec a
// file it wrote there: the session shell sources DIR/w, the host library is
// read from the command's stdin. A real sshd on 127.0.0.1 whose mount
// namespace gets those mounts (nsenter; this machine's /tmp is untouched) runs
// one step of each kind, with the lock and the audit line, on both transports,
// and each ends as on the same sshd without them.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "support/every_kind.h"
#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"

using namespace ratchet::testing;

namespace {

/// A loopback sshd (root's home is its own DIR/root-home); with `noexec`, its
/// namespace has /tmp and $HOME (/root) remounted noexec, /var/tmp a noexec
/// tmpfs, and TMPDIR=/root/tmp for every login.
struct Host {
  bool noexec;
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-r06");

  explicit Host(bool noexec_)
      : noexec(noexec_), sshd(noexec_ ? "EXTRA_SSHD_CONFIG='SetEnv TMPDIR=/root/tmp'" : "") {
    chmod(dir.c_str(), 01777);
    if (!noexec) return;
    ShellResult m = run_sh("nsenter -t " + std::to_string(sshd.pid()) +
                           " -m sh -ec 'mount -t tmpfs -o noexec,mode=1777 r06 /var/tmp; "
                           "mount --bind /tmp /tmp; mount -o remount,bind,noexec /tmp; "
                           "mount -o remount,bind,noexec /root; mkdir -p /root/tmp'");
    INFO(m.out << m.err);
    REQUIRE(m.code == 0);
  }
  ShellResult as_root(const std::string& command) {
    return run_sh("ssh -o BatchMode=yes -o IdentitiesOnly=yes -o UserKnownHostsFile=" + sshd.known_hosts() +
                  " -i " + sshd.client_key() + " -p " + std::to_string(sshd.port()) + " root@127.0.0.1 '" +
                  command + "'");
  }
  std::string inventory() const {
    const std::string p = dir + "/inventory.toml";
    write_file(p, "[hosts.box]\naddress = \"127.0.0.1\"\nport = " + std::to_string(sshd.port()) +
                      "\nuser = \"root\"\nidentity = \"" + sshd.client_key() + "\"\nknown_hosts = \"" +
                      sshd.known_hosts() + "\"\n");
    return p;
  }
  /// One step of each kind over `transport` in a fresh directory; returns the transcript's path.
  std::string run_every_kind(const std::string& transport) {
    const std::string work = dir + "/" + transport;
    std::filesystem::create_directories(work + "/host");
    chmod((work + "/host").c_str(), 01777);
    EveryKind k{work + "/host", work};
    write_file(k.held(), "");
    OwnedProcess holder("exec sleep 1006 3<" + k.held());
    REQUIRE(eventually([&] { return std::filesystem::exists("/proc/" + std::to_string(holder.pid()) + "/fd/3"); }));
    const std::string t = work + "/run.jsonl";
    ShellResult r = run_sh(std::string(RATCHET_BINARY) + " run " + k.playbook() + " -i " + inventory() +
                           " -F none --transport " + transport + " --transcript " + t);
    INFO(r.out << r.err);
    CHECK(eventually([&] { return !holder.alive(); }));  // the kill step's KILL
    CHECK(read_file(work + "/host/write.txt") == "written\n");
    CHECK(read_file(work + "/host/tree/bin/tool.sh") == "#!/bin/sh\necho tool\n");
    CHECK(read_file(work + "/host/audit.log").find("\"playbook\":\"every-kind\"") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(work + "/host/lock"));  // released at the host's end
    return t;
  }
};

}  // namespace

TEST_CASE("R06: with /tmp - /var/tmp and $HOME noexec and TMPDIR=$HOME/tmp every kind - the lock and the audit "
          "line end as on a plain host over both transports",
          "[ssh][e2e]") {
  Host plain(false), hardened(true);
  // The mounts are in effect for a login: nothing copied there runs.
  ShellResult probe = hardened.as_root(
      "echo \"$TMPDIR\"; for d in /tmp /var/tmp \"$HOME\" \"$TMPDIR\"; do cp /bin/true \"$d/r06-true\" && "
      "\"$d/r06-true\"; echo \"$d $?\"; rm -f \"$d/r06-true\"; done");
  INFO(probe.out << probe.err);
  CHECK(probe.out == "/root/tmp\n/tmp 126\n/var/tmp 126\n/root 126\n/root/tmp 126\n");

  for (const char* transport : {"session", "channel"}) {
    INFO("over " << transport);
    const std::string base = plain.run_every_kind(transport);
    const std::string t = hardened.run_every_kind(transport);
    const auto want = step_statuses(base), got = step_statuses(t);
    for (const auto& [step, status] : EveryKind::expected()) {
      INFO("step " << step << ": " << step_reasons(t)[step]);
      CHECK(got.at(step) == (status.empty() ? want.at(step) : status));
      CHECK(want.at(step) == got.at(step));
    }
    CHECK(step_reasons(t).at("service") == step_reasons(base).at("service"));
    CHECK(lines_with(t, "Permission denied").empty());
    CHECK(lines_with(t, "ratchet-session:").empty());  // the session shell's own refusals
  }
}
