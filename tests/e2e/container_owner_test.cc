// Owners and stuck holders that only a real systemd host shows (issue 27,
// items 2 and 3), on the lab host (tests/support/systemd_fixture.h):
// stand-in Podman (rootful and rootless) and CRI-O containers - holders placed
// by systemd-run in scopes named as those runtimes name theirs, with stand-in
// runtime files written inside the lab host's own rootfs (an overlay of the
// instance, never this machine's /var/lib) - and a holder in tracing stop
// whose tracer (tests/support/tracer.cc) runs on this machine, outside the
// lab host's PID namespace. The holders live in the lab host, which the
// fixture stops; the tracer is this test's own process, killed by PID.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "support/files.h"
#include "support/lab_session.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "support/systemd_fixture.h"
#include "transcript/reader.h"

using ratchet::testing::eventually;
using ratchet::testing::run_local;
using ratchet::testing::run_sh;
using ratchet::testing::SystemdHost;
using nlohmann::json;

namespace {

struct Lab : ratchet::testing::LabSession {
  Lab() : LabSession("ratchet-ctr-owner") {}
  /// `ratchet VERB` of a playbook of `steps` against the lab host.
  ratchet::testing::ShellResult ratchet(const std::string& verb, const std::string& steps, const std::string& args) {
    std::string pb = dir + "/pb.toml";
    ratchet::testing::write_file(pb, "name = \"ctr\"\ntargets = [\"lab\"]\n" + steps);
    return run_sh(std::string(RATCHET_BINARY) + " " + verb + " " + pb + " -i " + inv + " -F none " + args);
  }
  /// The PID, in the lab host, of the one process whose command line is `cmd` ("" when none).
  std::string pid_of(const std::string& cmd) {
    return sh("for p in /proc/[0-9]*; do [ \"$({ tr '\\0' ' ' < $p/cmdline; } 2>/dev/null)\" = '" + cmd +
              " ' ] && echo ${p#/proc/}; done");
  }
  /// Starts `cmd` in the lab host detached, in a scope unit made by `run` (a systemd-run line).
  void start(const std::string& run, const std::string& cmd) {
    sh("setsid " + run + " -- sh -c '" + cmd + "' </dev/null >/dev/null 2>&1 &");
  }
};

std::vector<json> events(const std::string& t, const std::string& kind, const std::string& step) {
  std::vector<json> out;
  for (const auto& e : ratchet::transcript::read_transcript(t).events)
    if (e["event"] == kind && e.value("step", "") == step) out.push_back(e);
  return out;
}

const std::string kPodman = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const std::string kCrio = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
const std::string kRootless = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789";

}  // namespace

TEST_CASE("Podman (rootful and rootless) and CRI-O holders are named from the runtime's own files, their restart "
          "policy said to be unknown",
          "[systemd][e2e][owner]") {
  Lab lab;
  REQUIRE(run_sh(SystemdHost::script() + " add-user " + lab.host.state_dir() + " r27pod nopasswd").code == 0);
  const std::string store = "/var/lib/containers/storage/overlay-containers";
  const std::string home_store = "/home/r27pod/.local/share/containers/storage/overlay-containers";
  // The runtimes' own files, as Podman (containers.json: id, names) and CRI-O (userdata/config.json annotations) write them.
  REQUIRE(lab.sh("mkdir -p " + store + "/" + kCrio + "/userdata " + home_store + " && printf '%s' '[{\"id\":\"" + kPodman +
                 "\",\"names\":[\"r27-web\"],\"image\":\"i\",\"metadata\":\"{\\\"image-name\\\":\\\"x\\\"}\"}]' > " + store +
                 "/containers.json && printf '%s' '{\"annotations\":{\"io.kubernetes.pod.namespace\":\"ml\","
                 "\"io.kubernetes.pod.name\":\"sglang-0\",\"io.kubernetes.container.name\":\"server\"}}' > " + store + "/" +
                 kCrio + "/userdata/config.json && printf '%s' '[{\"id\":\"" + kRootless +
                 "\",\"names\":[\"r27-rootless\"]}]' > " + home_store + "/containers.json && chown -R r27pod /home/r27pod && "
                 "touch /run/r27c && chmod 644 /run/r27c && loginctl enable-linger r27pod && echo ok") == "ok");
  const std::string uid = lab.sh("id -u r27pod");
  REQUIRE(eventually([&] { return lab.sh("test -S /run/user/" + uid + "/systemd/private && echo up") == "up"; }));
  lab.start("systemd-run --scope --unit libpod-" + kPodman + ".scope", "exec sleep 100920 3</run/r27c");
  lab.start("systemd-run --scope --unit libpod-conmon-" + kPodman + ".scope", "exec sleep 100921 3</run/r27c");
  lab.start("systemd-run --scope --unit crio-" + kCrio + ".scope", "exec sleep 100922 3</run/r27c");
  lab.start("runuser -u r27pod -- env XDG_RUNTIME_DIR=/run/user/" + uid + " systemd-run --user --scope --unit libpod-" +
                kRootless + ".scope",
            "exec sleep 100923 3</run/r27c");
  std::string web, conmon, crio, rootless;
  REQUIRE(eventually([&] {
    web = lab.pid_of("sleep 100920"), conmon = lab.pid_of("sleep 100921"), crio = lab.pid_of("sleep 100922"),
    rootless = lab.pid_of("sleep 100923");
    return !web.empty() && !conmon.empty() && !crio.empty() && !rootless.empty();
  }));
  const std::string verify = "[[step]]\nid = \"free\"\nkind = \"verify\"\nno_holders = \"/run/r27c\"\n";
  const std::string t = lab.dir + "/t.jsonl";
  auto r = lab.ratchet("run", verify, "--transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  auto ev = events(t, "evidence", "free");
  REQUIRE(ev.size() == 1);
  std::map<std::string, json> owner;
  for (const auto& h : ev[0]["holders"]) owner[h["pid"].dump()] = h["owner"];
  CHECK(owner[web] == json{{"kind", "container"}, {"name", "r27-web"}, {"scope", "podman"}, {"id", kPodman},
                           {"restarts", true}});
  // Podman's monitor is not the container: its cgroup, by path.
  CHECK(owner[conmon] == json{{"kind", "cgroup"}, {"name", "/system.slice/libpod-conmon-" + kPodman + ".scope"},
                              {"restarts", false}});
  CHECK(owner[crio] == json{{"kind", "container"}, {"name", "server"}, {"scope", "cri-o"}, {"id", kCrio},
                            {"pod", "ml/sglang-0"}, {"restarts", true}});
  // Rootless, under r27pod's own manager: named from the files in r27pod's home.
  CHECK(owner[rootless] == json{{"kind", "container"}, {"name", "r27-rootless"}, {"scope", "podman"},
                                {"user", "r27pod"}, {"id", kRootless}, {"restarts", true}});

  // plan --probe in words and as JSON (steps.X.holders[i].owner).
  auto p = lab.ratchet("plan", verify, "--probe --transcript " + lab.dir + "/p.jsonl");
  INFO(p.out << p.err);
  CHECK(p.out.find("container r27-web (podman 0123456789ab), whether something restarts it cannot be told") !=
        std::string::npos);
  CHECK(p.out.find("container server (cri-o fedcba987654) of pod ml/sglang-0, whether something restarts it cannot "
                   "be told") != std::string::npos);
  CHECK(p.out.find("container r27-rootless (podman abcdef012345, rootless, of r27pod)") != std::string::npos);
  auto j = lab.ratchet("plan", verify, "--probe --json --transcript " + lab.dir + "/j.jsonl");
  json doc = json::parse(j.out);
  size_t named = 0;
  for (const auto& h : doc["hosts"][0]["steps"][0]["holders"]) named += h["owner"].contains("name") ? 1 : 0;
  CHECK(named == 4);

  // Before the signal: a kill may be undone, stop the container.
  const std::string k = lab.dir + "/k.jsonl";
  auto kill = lab.ratchet("run", "[[step]]\nid = \"stop\"\nkind = \"kill\"\nsignal = \"KILL\"\nwait = \"2s\"\nholders_of = \"/run/r27c\"\n",
                          "--transcript " + k);
  INFO(kill.out << kill.err);
  std::string notes;
  for (const auto& e : events(k, "evidence", "stop")) notes += e.value("note", "") + "\n";
  CHECK(notes.find("PID " + web + " belongs to container r27-web (podman 0123456789ab), whether something restarts it "
                   "cannot be told: a kill may be undone; stop the container") != std::string::npos);
  CHECK(notes.find("PID " + conmon + " belongs") == std::string::npos);  // a cgroup no rule knows: not said to restart
}

namespace {

/// This machine's PID of the lab host's process `inner` whose command line is `cmd` (0 when not found):
/// the one whose NSpid ends with `inner`.
pid_t outer_pid(const std::string& cmd, const std::string& inner) {
  std::string out = run_local("for p in /proc/[0-9]*; do [ \"$({ tr '\\0' ' ' < $p/cmdline; } 2>/dev/null)\" = '" + cmd +
                              " ' ] && awk -v p=${p#/proc/} '$1 == \"NSpid:\" && $NF == \"" + inner +
                              "\" { print p }' $p/status 2>/dev/null; done");
  return out.empty() ? 0 : static_cast<pid_t>(std::stol(out));
}

}  // namespace

TEST_CASE("a holder stopped by a tracer outside the scan's PID namespace is named so, and a KILL rung ends it",
          "[systemd][e2e][stuck_holder]") {
  Lab lab;
  REQUIRE(lab.sh("touch /run/r27t && echo ok") == "ok");
  lab.sh("setsid sh -c 'exec sleep 100930 3</run/r27t' </dev/null >/dev/null 2>&1 &");
  std::string inner;
  REQUIRE(eventually([&] { return !(inner = lab.pid_of("sleep 100930")).empty(); }));
  const pid_t outer = outer_pid("sleep 100930", inner);
  REQUIRE(outer > 0);
  // The stand-in debugger runs here: the lab host's PID namespace cannot see it (TracerPid reads 0 there).
  ratchet::testing::OwnedProcess tracer(std::string("exec ") + RATCHET_TRACER + " " + std::to_string(outer));
  REQUIRE(eventually([&] { return lab.sh("awk '{ print $3 }' /proc/" + inner + "/stat") == "t"; }));
  REQUIRE(lab.sh("awk '$1 == \"TracerPid:\" { print $2 }' /proc/" + inner + "/status") == "0");
  const std::string t = lab.dir + "/t.jsonl";
  auto r = lab.ratchet("run",
                       "[[step]]\nid = \"term\"\nkind = \"kill\"\nsignal = \"TERM\"\nwait = \"1s\"\non_failure = \"continue\"\n"
                       "holders_of = \"/run/r27t\"\n"
                       "[[step]]\nid = \"end\"\nkind = \"kill\"\nsignal = \"TERM\"\nwait = \"1s\"\nholders_of = \"/run/r27t\"\n"
                       "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = \"/run/r27t\"\n  signal = \"KILL\"\n  wait = \"2s\"\n",
                       "--transcript " + t);
  INFO(r.out << r.err);
  auto term_end = events(t, "step_end", "term");
  REQUIRE(term_end.size() == 1);
  CHECK(term_end[0]["status"] == "failed");
  CHECK(term_end[0].value("reason", "").rfind("PID " + inner + " (sleep) is stopped by a tracer outside this PID "
                                              "namespace (TracerPid reads 0 here): CONT does not resume it; detach or "
                                              "end the tracer where it runs; then the check: ",
                                              0) == 0);
  json traced;
  for (const auto& e : events(t, "evidence", "term"))
    if (e.contains("traced")) traced = e["traced"];
  REQUIRE(traced.size() == 1);
  CHECK(traced[0] == json{{"pid", std::stol(inner)}, {"comm", "sleep"}, {"tracer_pid", 0}, {"tracer_comm", ""},
                          {"tracer", "outside this PID namespace"}});
  auto end = events(t, "step_end", "end");
  REQUIRE(end.size() == 1);
  CHECK(end[0]["status"] == "escalated");
  // The rendered transcript says it in words.
  auto show = run_sh(std::string(RATCHET_BINARY) + " show " + t);
  CHECK(show.out.find("traced PID " + inner + " (sleep) is stopped by a tracer outside this PID namespace") !=
        std::string::npos);
}
