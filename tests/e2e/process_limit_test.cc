// R24 (docs/reliability.md): a login user at its process limit. The host
// refuses the forks a /proc scan needs; a scan cut short part-way used to end
// on a wrong reason ("open files are unreadable") or the shell's "Cannot
// fork". Against a real sshd on 127.0.0.1 with an /etc overlay: alice's login
// shell sets `ulimit -u 60`, 49 stand-in `sleep`s run as alice (one holds the
// file; 50 processes with their sh: room for the session shell and its
// readers, not for a scan), and `verify no_holders user = "alice"` must say the host refused a
// new process, with the limit and the count, on both transports; with the
// stand-ins but the holder gone, the same step finds the holder.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <regex>

#include "support/every_kind.h"
#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"

using namespace ratchet::testing;

namespace {

// alice's UID and GID, which no account of this machine is likely to have:
// RLIMIT_NPROC counts the processes of a UID machine-wide, whichever /etc
// names it; the stand-ins' GID must be hers for her scan to read their files.
constexpr int kAliceUid = 62424;

struct Lab {
  SshdHost sshd{"SSHD_HOST_ETC_OVERLAY=1"};
  std::string dir = temp_dir("ratchet-r24");

  Lab() {
    chmod(dir.c_str(), 01777);
    // dash's ulimit has no -u: the wrapper is bash, the shell it starts is /bin/sh.
    ShellResult r = as_root("mkdir -p /etc/lab-shells && printf \"%s\\n\" \"#!/bin/bash\" \"ulimit -u 60; exec /bin/sh "
                            "\\\"\\$@\\\"\" > /etc/lab-shells/r24 && chmod 755 /etc/lab-shells/r24 && "
                            "groupadd -g " + std::to_string(kAliceUid) + " alice && useradd -m -p \"*\" -u " +
                            std::to_string(kAliceUid) + " -g alice -s /etc/lab-shells/r24 alice && cat /etc/lab-shells/r24");
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    REQUIRE(r.out == "#!/bin/bash\nulimit -u 60; exec /bin/sh \"$@\"\n");
    const std::string keys = sshd.dir() + "/authorized_keys/alice";
    write_file(keys, read_file(sshd.client_key() + ".pub"));
    chmod(keys.c_str(), 0644);
  }
  ShellResult as_root(const std::string& command) {
    return run_sh("ssh -o BatchMode=yes -o IdentitiesOnly=yes -o UserKnownHostsFile=" + sshd.known_hosts() +
                  " -i " + sshd.client_key() + " -p " + std::to_string(sshd.port()) + " root@127.0.0.1 '" +
                  command + "'");
  }
  /// `ratchet run` as alice of a playbook with one `verify no_holders` over `held`; returns the transcript's path.
  std::string verify_as_alice(const std::string& held, const std::string& transport, const std::string& tag) {
    const std::string inv = dir + "/inventory.toml", pb = dir + "/r24.toml", t = dir + "/" + tag + ".jsonl";
    write_file(inv, "[hosts.box]\naddress = \"127.0.0.1\"\nport = " + std::to_string(sshd.port()) +
                        "\nuser = \"alice\"\nidentity = \"" + sshd.client_key() + "\"\nknown_hosts = \"" +
                        sshd.known_hosts() + "\"\n");
    write_file(pb, "name = \"r24\"\ntargets = [\"box\"]\naudit_log = false\n[[step]]\nid = \"free\"\n"
                   "kind = \"verify\"\nno_holders = [\"" + held + "\"]\nuser = \"alice\"\n");
    ShellResult r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inv + " -F none --transport " +
                           transport + " --transcript " + t);
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    return t;
  }
};

/// `script` as alice (her UID and group, no other groups), in a process group of its own.
std::string as_alice(const std::string& script) {
  const std::string id = std::to_string(kAliceUid);
  return "exec setpriv --reuid=" + id + " --regid=" + id + " --clear-groups sh -c '" + script + "'";
}

/// Processes (tasks) whose real UID is alice's, machine-wide.
int alice_tasks() {
  return std::stoi(run_sh("ps -L -u " + std::to_string(kAliceUid) + " --no-headers | wc -l").out);
}

}  // namespace

TEST_CASE("R24: at the login user's process limit a holder scan says the host refused a new process with the "
          "limit and the count - never ok - on both transports",
          "[ssh][e2e]") {
  Lab lab;
  const std::string held = lab.dir + "/held";
  write_file(held, "");
  chmod(held.c_str(), 0644);
  OwnedProcess holder(as_alice("exec sleep 1024 3<" + held));
  OwnedProcess filler(as_alice("i=0; while [ $i -lt 48 ]; do sleep 1024 & i=$((i+1)); done; wait"));
  REQUIRE(eventually([] { return alice_tasks() >= 50; }));  // 48 sleeps, their sh, the holder

  const std::regex refused(
      "could not check: the host refused a new process \\(login user's process limit reached: ulimit -u 60, "
      "[0-9]+ running\\)");
  for (const char* transport : {"session", "channel"}) {
    INFO("over " << transport);
    const std::string t = lab.verify_as_alice(held, transport, std::string("full-") + transport);
    INFO(step_reasons(t)["free"]);
    CHECK(step_statuses(t)["free"] == "failed");
    CHECK(std::regex_match(step_reasons(t)["free"], refused));
  }

  // Room again (the filler gone, the holder still there): the same scan finds the holder.
  // The sleeps first, so that their sh reaps them (a zombie left to PID 1 counts, and is unreadable).
  REQUIRE(run_sh("ps -o pid= --ppid " + std::to_string(filler.pid()) + " | xargs -r kill -KILL").code == 0);
  REQUIRE(eventually([&] { return !filler.alive(); }));
  for (const char* transport : {"session", "channel"}) {
    INFO("over " << transport);
    // The last run's session gone (a zombie left to PID 1 would count as unreadable).
    REQUIRE(eventually([] { return alice_tasks() == 1; }));
    const std::string t = lab.verify_as_alice(held, transport, std::string("room-") + transport);
    CHECK(step_statuses(t)["free"] == "failed");
    CHECK(step_reasons(t)["free"] == "1 process(es) hold the files");
  }
}
