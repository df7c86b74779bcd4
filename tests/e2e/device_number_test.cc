// A device is held when its device number is held (issue 27, item 1), on a
// real sshd on 127.0.0.1 as root: a holder in its own mount namespace that
// holds its OWN node of the target's number, at another path in a private
// tmpfs, is a holder; `verify no_holders` names the PID, its node and its
// namespace; a `kill holders_of` rung signals exactly that PID; a process
// holding another device number is no holder. The stand-in number is 1:7
// (/dev/full's: harmless to open); the test starts, and kills by PID, every
// process it signals.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <set>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

std::string lib_scan(const std::string& target) {
  int st = 0;
  run_local(". '" + std::string(RATCHET_SOURCE_DIR) + "/src/steps/lib/ratchet.sh'; ratchet_no_holders -- '" + target +
                "' >/dev/null 2>&1",
            &st);
  return std::to_string(st);
}

/// True once `pid` runs sleep with its descriptor 3 open (the redirection done).
bool sleeping_with_fd3(long pid) {
  const std::string p = "/proc/" + std::to_string(pid);
  return run_local("test \"$(cat " + p + "/comm)\" = sleep && test -e " + p + "/fd/3 && echo yes") == "yes\n";
}

}  // namespace

TEST_CASE("a container-style holder of its own node of the target's device number is found (also under a directory target) and killed, by PID",
          "[ssh][device_number]") {
  SshdHost sshd;
  const std::string dir = temp_dir("ratchet-devnum");
  chmod(dir.c_str(), 0755);
  const std::string target = dir + "/gpu0", other = dir + "/other", priv = dir + "/priv";
  // A directory that holds a node of the number covers it by number too (a trial: /dev/nvidia-caps read "free").
  const std::string devdir = dir + "/caps";
  REQUIRE(run_local("mknod '" + target + "' c 1 7 && mknod '" + other + "' c 1 5 && mkdir '" + priv + "' '" + devdir +
                    "' && mknod '" + devdir + "/cap1' c 1 7 && echo ok") == "ok\n");
  // The stand-in number must be held by nobody else here, or the kill rung could reach a process not ours.
  if (lib_scan(target) != "0") {
    WARN("some process on this machine holds device 1:7 (/dev/full): not run");
    return;
  }
  // Its own mount namespace, its own node (another inode, another path: only in that namespace).
  OwnedProcess holder("exec unshare -m sh -c \"mount -t tmpfs ratchet-devnum '" + priv + "' && mknod '" + priv +
                      "/nvidia0' c 1 7 && exec sleep 300 3<'" + priv + "/nvidia0'\"");
  OwnedProcess bystander("exec sleep 301 3<'" + other + "'");  // device 1:5: not the target's number
  REQUIRE(eventually([&] { return sleeping_with_fd3(holder.pid()) && sleeping_with_fd3(bystander.pid()); }));
  const std::string ns = run_local("stat -L -c %i /proc/" + std::to_string(holder.pid()) + "/ns/mnt | tr -d '\\n'");
  REQUIRE(ns != run_local("stat -L -c %i /proc/self/ns/mnt | tr -d '\\n'"));
  REQUIRE(run_local("test -e '" + priv + "/nvidia0' || echo absent here") == "absent here\n");

  const std::string inv = dir + "/inventory.toml";
  std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port() << "\nuser = \"root\"\nidentity = \""
                     << sshd.client_key() << "\"\nknown_hosts = \"" << sshd.known_hosts() << "\"\n";
  const std::string pb = dir + "/pb.toml";
  write_file(pb, "name = \"devnum\"\ntargets = [\"box\"]\n"
                 "[[step]]\nid = \"free\"\nkind = \"verify\"\non_failure = \"continue\"\nno_holders = [\"" + target + "\"]\n"
                 "[[step]]\nid = \"dir\"\nkind = \"verify\"\non_failure = \"continue\"\nno_holders = [\"" + devdir + "\"]\n"
                 "[[step]]\nid = \"kill\"\nkind = \"verify\"\nno_holders = [\"" + target + "\"]\n"
                 "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = [\"" + target + "\"]\n  wait = \"3s\"\n");
  const std::string t = dir + "/t.jsonl";
  auto r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inv + " --transcript " + t);
  INFO(r.out << r.err);
  const std::string held = "PID " + std::to_string(holder.pid()) + " holds " + priv + "/nvidia0 of mount namespace " + ns +
                           ": same device 1:7 as " + target;
  CHECK(r.out.find(held) != std::string::npos);  // the text output names PID, node and namespace

  std::set<long> signalled;
  json free_end, kill_end, free_holders, dir_end;
  for (const auto& ev : ratchet::transcript::read_transcript(t).events) {
    if (ev["event"] == "step_end" && ev["step"] == "free") free_end = ev;
    if (ev["event"] == "step_end" && ev["step"] == "kill") kill_end = ev;
    if (ev["event"] == "step_end" && ev["step"] == "dir") dir_end = ev;
    if (ev["event"] == "evidence" && ev["step"] == "free" && ev.contains("holders")) free_holders = ev["holders"];
    if (ev["event"] == "evidence" && ev["step"] == "kill" && ev.contains("signalled"))
      for (const auto& h : ev["signalled"]) signalled.insert(h["pid"].get<long>());
  }
  CHECK(free_end["status"] == "failed");
  CHECK(free_end.value("reason", "") == "1 process(es) hold the files: " + held);
  REQUIRE(free_holders.is_array());
  REQUIRE(free_holders.size() == 1);
  CHECK(free_holders[0]["pid"] == holder.pid());
  CHECK(free_holders[0]["files"] == json::array({target}));
  CHECK(free_holders[0]["nodes"] ==
        json::array({{{"target", target}, {"node", priv + "/nvidia0"}, {"device", "1:7"}, {"mount_ns", ns}}}));
  CHECK(dir_end["status"] == "failed");
  CHECK(dir_end.value("reason", "") == "1 process(es) hold the files: PID " + std::to_string(holder.pid()) + " holds " +
                                           priv + "/nvidia0 of mount namespace " + ns + ": same device 1:7 as " + devdir +
                                           "/cap1");
  CHECK(kill_end["status"] == "escalated");
  CHECK(signalled == std::set<long>{holder.pid()});
  CHECK(eventually([&] { return !holder.alive(); }));
  CHECK(bystander.alive());
}
