// Who owns a holder and who brings it back (issue 27, item 2; case R18 of
// ../shared/cases/real-hosts.md), against a real sshd on 127.0.0.1. Only
// processes these tests start hold the stand-in files under their temp dirs;
// each is killed by PID (its own process group) even when a check fails; the
// cgroups they create are removed after their processes are gone.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

struct Lab {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-owner-e2e");
  std::string inv = dir + "/inventory.toml";
  std::string standin = dir + "/standin-gpu0";

  Lab() {
    write_file(standin, "");
    write_file(inv, "[hosts.box]\naddress = \"127.0.0.1\"\nport = " + std::to_string(sshd.port()) +
                        "\nuser = \"root\"\nidentity = \"" + sshd.client_key() + "\"\nknown_hosts = \"" +
                        sshd.known_hosts() + "\"\n");
  }
  /// `ratchet VERB PLAYBOOK -i INV ARGS` on a playbook of `body`.
  ShellResult ratchet(const std::string& verb, const std::string& body, const std::string& args) {
    write_file(dir + "/pb.toml", "name = \"owner\"\n" + body);
    return run_sh(std::string(RATCHET_BINARY) + " " + verb + " " + dir + "/pb.toml -i " + inv + " -F none " + args);
  }
};

/// The one child of `parent` (0 when none or several): the supervisor's current holder.
long child_of(long parent) {
  std::string out = run_local("cat /proc/" + std::to_string(parent) + "/task/*/children 2>/dev/null");
  long pid = 0;
  size_t n = 0;
  for (size_t at = 0; (at = out.find_first_of("0123456789", at)) != std::string::npos; ++n) {
    size_t end = out.find_first_not_of("0123456789", at);
    pid = std::stol(out.substr(at, end - at));
    at = end == std::string::npos ? out.size() : end;
  }
  return n == 1 ? pid : 0;
}

bool holds(long pid, const std::string& path) {
  return run_local("find /proc/" + std::to_string(pid) + "/fd -lname '" + path + "' 2>/dev/null | wc -l") == "1\n";
}

/// A cgroup this test makes under a hierarchy's mount (`base`), removed (after
/// its processes are gone) when it goes out of scope; ok() false when the host
/// does not let us make one.
class TestCgroup {
 public:
  TestCgroup(const std::string& base, const std::string& top, const std::string& rel)
      : top_(base + "/" + top), leaf_(top_ + "/" + rel) {
    std::error_code ec;
    ok_ = std::filesystem::is_directory(base) && std::filesystem::create_directories(leaf_, ec) && !ec;
  }
  ~TestCgroup() {
    // Deepest first: rmdir, never rm -r (a cgroup's files cannot be removed).
    for (std::string d = leaf_; d.size() >= top_.size(); d = d.substr(0, d.rfind('/')))
      eventually([&] { return rmdir(d.c_str()) == 0 || errno == ENOENT; }, 3000);
  }
  bool ok() const { return ok_; }
  bool add(long pid) const {
    write_file(leaf_ + "/cgroup.procs", std::to_string(pid) + "\n");
    return run_local("cat '" + leaf_ + "/cgroup.procs'").find(std::to_string(pid) + "\n") != std::string::npos;
  }

 private:
  std::string top_, leaf_;
  bool ok_ = false;
};

/// The `key` list of each evidence event of `step`, in order.
std::vector<json> evidence_lists(const std::string& transcript, const std::string& step, const char* key) {
  std::vector<json> out;
  for (const auto& ev : ratchet::transcript::read_transcript(transcript).events)
    if (ev["event"] == "evidence" && ev["step"] == step && ev.contains(key)) out.push_back(ev[key]);
  return out;
}

}  // namespace

TEST_CASE("R18: a holder its supervisor starts again after the kill is named respawned, with the supervisor",
          "[ssh][owner][respawn]") {
  Lab lab;
  // R18's supervisor; the holder in a subshell, since dash opens a simple
  // command's redirection in the shell itself (the supervisor would hold it too).
  OwnedProcess sup("while :; do (exec sleep 100600 3<" + lab.standin + "); done");
  long first = 0;
  REQUIRE(eventually([&] { return (first = child_of(sup.pid())) > 0 && holds(first, lab.standin); }));
  const std::string t = lab.dir + "/t.jsonl";
  auto r = lab.ratchet("run",
                       "[[step]]\nid = \"free\"\nkind = \"kill\"\nsignal = \"KILL\"\nwait = \"2s\"\nholders_of = \"" +
                           lab.standin + "\"\n",
                       "--transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  long second = 0;
  REQUIRE(eventually([&] { return (second = child_of(sup.pid())) > 0 && second != first; }));
  json end;
  for (const auto& ev : ratchet::transcript::read_transcript(t).events)
    if (ev["event"] == "step_end") end = ev;
  CHECK(end["status"] == "failed");
  // The check's new holder is the child the supervisor started after the signal.
  const std::string sp = std::to_string(sup.pid());
  CHECK(end["reason"] == "PID " + std::to_string(second) + " (sleep) started after the signal: respawned by PID " + sp +
                             " (sh); stop its supervisor PID " + sp + " (sh) instead");
  // The check before the kill found the first child; the one after, the second.
  auto checks = evidence_lists(t, "free", "holders");
  REQUIRE(checks.size() == 2);
  REQUIRE(checks[0].size() == 1);
  CHECK(checks[0][0]["pid"] == first);
  REQUIRE(checks[1].size() == 1);
  CHECK(checks[1][0]["pid"] == second);
  CHECK(checks[1][0]["cmdline"] == "sleep 100600");
  CHECK(checks[1][0]["state"] == "S");
  CHECK(checks[1][0]["owner"].contains("kind"));
  auto sig = evidence_lists(t, "free", "signalled");
  REQUIRE(sig.size() == 1);
  CHECK(sig[0].size() == 1);
  CHECK(sig[0][0]["pid"] == first);
  sup.stop();  // the supervisor and its child, by PID (its own process group)
  CHECK_FALSE(holds(second, lab.standin));
}

TEST_CASE("owners of holders in cgroups this test makes show in the transcript and in plan --probe --json",
          "[ssh][owner]") {
  Lab lab;
  const std::string top = "ratchet-owner-" + std::to_string(getpid());
  const std::string hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  // v1 (the name=systemd hierarchy of a hybrid host) and v2 (unified): a
  // scope unit and a Docker container, as systemd and Docker would name them.
  TestCgroup v1("/sys/fs/cgroup/systemd", top, "system.slice/fake-r27.scope");
  TestCgroup v2("/sys/fs/cgroup/unified", top, "system.slice/docker-" + hex + ".scope");
  if (!v1.ok() || !v2.ok()) {
    WARN("this host does not let the test make cgroups under /sys/fs/cgroup/systemd and /sys/fs/cgroup/unified");
    return;
  }
  OwnedProcess unit_holder("exec sleep 100601 3<" + lab.standin);
  OwnedProcess container_holder("exec sleep 100602 3<" + lab.standin);
  REQUIRE(eventually([&] { return holds(unit_holder.pid(), lab.standin) && holds(container_holder.pid(), lab.standin); }));
  REQUIRE(v1.add(unit_holder.pid()));
  REQUIRE(v2.add(container_holder.pid()));
  const std::string body = "[[step]]\nid = \"free\"\nkind = \"verify\"\nno_holders = \"" + lab.standin + "\"\n";

  const std::string t = lab.dir + "/t.jsonl";
  auto r = lab.ratchet("run", body, "--transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  auto lists = evidence_lists(t, "free", "holders");
  REQUIRE(lists.size() == 1);
  json hs = lists[0];
  REQUIRE(hs.size() == 2);
  json unit = hs[0]["pid"] == unit_holder.pid() ? hs[0] : hs[1];
  json ctr = hs[0]["pid"] == unit_holder.pid() ? hs[1] : hs[0];
  CHECK(unit["owner"] == json{{"kind", "unit"}, {"name", "fake-r27.scope"}, {"scope", "system"},
                              {"unit", "fake-r27.scope"}, {"restarts", false}});
  CHECK(ctr["owner"] == json{{"kind", "container"}, {"scope", "docker"}, {"id", hex}, {"restarts", true}});

  auto p = lab.ratchet("plan", body, "--probe --json --transcript " + lab.dir + "/p.jsonl");
  INFO(p.out << p.err);
  json doc = json::parse(p.out);
  json ph = doc["hosts"][0]["steps"][0]["holders"];
  REQUIRE(ph.size() == 2);
  for (const auto& h : ph)
    CHECK(h["owner"]["kind"] == (h["pid"] == unit_holder.pid() ? "unit" : "container"));
  // In words, as plan --probe prints it.
  auto words = lab.ratchet("plan", body, "--probe --transcript " + lab.dir + "/w.jsonl");
  CHECK(words.out.find("unit fake-r27.scope") != std::string::npos);
  CHECK(words.out.find("container docker 0123456789ab") != std::string::npos);
}

namespace {

/// An empty file bind-mounted over /proc/PID/cgroup of a process this test
/// started (a read of it then gives nothing, as for a process gone mid-read),
/// in the mount namespace of the sshd whose PID is `ns` (the fixture's own
/// private one: the scan's view, not this machine's); unmounted when it goes
/// (declare it after the process: it goes first; the kernel drops it with the process too).
class HiddenCgroup {
 public:
  HiddenCgroup(long pid, pid_t ns, const std::string& empty)
      : enter_("nsenter -t " + std::to_string(ns) + " -m "), path_("/proc/" + std::to_string(pid) + "/cgroup") {
    ok_ = run_sh(enter_ + "mount --bind '" + empty + "' " + path_).code == 0;
  }
  ~HiddenCgroup() {
    if (ok_) run_sh(enter_ + "umount " + path_ + " 2>/dev/null");
  }
  bool ok() const { return ok_; }

 private:
  std::string enter_, path_;
  bool ok_ = false;
};

}  // namespace

TEST_CASE("a holder whose /proc/PID/cgroup reads nothing has an unknown owner - in the transcript, plan --probe, "
          "the report and templates - and its kill is never taken as free of a supervisor",
          "[ssh][owner]") {
  Lab lab;
  OwnedProcess holder("exec sleep 100604 3<" + lab.standin);
  REQUIRE(eventually([&] { return holds(holder.pid(), lab.standin); }));
  write_file(lab.dir + "/empty", "");
  HiddenCgroup hidden(holder.pid(), lab.sshd.pid(), lab.dir + "/empty");
  if (!hidden.ok()) {
    WARN("this host does not let the test bind-mount over /proc/PID/cgroup");
    return;
  }
  const std::string pid = std::to_string(holder.pid()), file = "/proc/" + pid + "/cgroup";
  const json unknown = {{"kind", "unknown"}, {"name", file}, {"restarts", false}};
  const std::string verify = "[[step]]\nid = \"free\"\nkind = \"verify\"\nno_holders = \"" + lab.standin + "\"\n";

  auto p = lab.ratchet("plan", verify, "--probe --json --transcript " + lab.dir + "/p.jsonl");
  INFO(p.out << p.err);
  json ph = json::parse(p.out)["hosts"][0]["steps"][0]["holders"];
  REQUIRE(ph.size() == 1);
  CHECK(ph[0]["owner"] == unknown);
  auto words = lab.ratchet("plan", verify, "--probe --transcript " + lab.dir + "/w.jsonl");
  CHECK(words.out.find("could not tell the owner: " + file + " unreadable") != std::string::npos);

  // The kill: signalled with its unknown owner, and the note says a supervisor cannot be ruled out.
  const std::string t = lab.dir + "/t.jsonl";
  auto r = lab.ratchet("run",
                       "[[step]]\nid = \"stop\"\nkind = \"kill\"\nsignal = \"TERM\"\nwait = \"2s\"\nholders_of = \"" +
                           lab.standin + "\"\n[[step]]\nid = \"who\"\nkind = \"run\"\n"
                           "command = \"echo {{ steps.stop.holders.0.owner.kind }} {{ steps.stop.holders.0.owner.restarts }}\"\n",
                       "--transcript " + t + " --report " + lab.dir + "/r.html");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  auto sig = evidence_lists(t, "stop", "signalled");
  REQUIRE(sig.size() == 1);
  REQUIRE(sig[0].size() == 1);
  CHECK(sig[0][0]["owner"] == unknown);
  std::string notes, who;
  for (const auto& ev : ratchet::transcript::read_transcript(t).events) {
    if (ev["event"] == "evidence" && ev["step"] == "stop") notes += ev.value("note", "") + "\n";
    if (ev["event"] == "output" && ev["step"] == "who" && ev["stream"] == "stdout") who += ev.value("data", "");
  }
  CHECK(notes.find("PID " + pid + ": could not tell the owner: " + file + " unreadable: whether a supervisor will "
                   "undo the kill cannot be told") != std::string::npos);
  CHECK(who == "unknown false\n");
  CHECK(read_file(lab.dir + "/r.html").find("could not tell the owner: " + file + " unreadable") != std::string::npos);
}
