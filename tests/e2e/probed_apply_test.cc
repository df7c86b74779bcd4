// `plan --probe --out` then `apply` against a real sshd on 127.0.0.1 (issue
// 13, deliverable 4): the plan file keeps the probe's findings; apply probes
// again first, names what changed since, and stops (exit 1, nothing run)
// unless --yes. Only processes these tests start are ever named or killed
// (stand-in device files under the test's temp dir).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

struct Env {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-probed-apply");
  std::string inv = dir + "/inventory.toml";
  std::string plan = dir + "/probed.plan";
  Env() {
    chmod(dir.c_str(), 0755);
    std::filesystem::create_directories(dir + "/dev");
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
  }
  std::string playbook(const std::string& body) {
    std::string p = dir + "/pb.toml";
    write_file(p, body);
    return p;
  }
  ShellResult probe_out(const std::string& pb) {
    return run_sh(std::string(RATCHET_BINARY) + " plan " + pb + " --probe -i " + inv + " -F none --out " + plan);
  }
  ShellResult apply(const std::string& extra) {
    return run_sh(std::string(RATCHET_BINARY) + " apply " + plan + " " + extra);
  }
};

/// The run_start events of a transcript, in order.
std::vector<json> run_starts(const std::string& path) {
  std::vector<json> out;
  for (const auto& ev : ratchet::transcript::read_transcript(path).events)
    if (ev["event"] == "run_start") out.push_back(ev);
  return out;
}

}  // namespace

TEST_CASE("apply of a probed plan after a new holder appeared stops and names it - with --yes it runs",
          "[ssh][probe][apply]") {
  Env e;
  const std::string d = e.dir;
  write_file(d + "/dev/gpu0", "");
  write_file(d + "/dev/gpu1", "");
  OwnedProcess first("exec sleep 300 3<" + d + "/dev/gpu0");
  REQUIRE(eventually([&] { return std::filesystem::exists("/proc/" + std::to_string(first.pid()) + "/fd/3"); }));
  const std::string pb = e.playbook("name = \"probed\"\n[[step]]\nid = \"free\"\nkind = \"kill\"\nholders_of = [\"" +
                                    d + "/dev/gpu*\"]\nsignal = \"KILL\"\n");
  auto p = e.probe_out(pb);
  INFO(p.out << p.err);
  REQUIRE(p.code == 0);
  CHECK(p.out.find("saved plan " + e.plan + " (mode 0600), 1 host(s), with the probe's findings, digest ") !=
        std::string::npos);
  // The plan file holds what the probe saw, under its digest.
  json doc = json::parse(read_file(e.plan));
  REQUIRE(doc["probe"]["hosts"].size() == 1);
  CHECK(doc["probe"]["hosts"][0]["host"] == "box");
  CHECK(doc["probe"]["hosts"][0]["steps"][0]["verdict"] == "would_act");
  CHECK(doc["probe"]["hosts"][0]["steps"][0]["holders"][0]["pid"] == first.pid());

  // A second process takes a device after the review.
  OwnedProcess second("exec sleep 301 3<" + d + "/dev/gpu1");
  REQUIRE(eventually([&] { return std::filesystem::exists("/proc/" + std::to_string(second.pid()) + "/fd/3"); }));
  const std::string t = d + "/apply.jsonl";
  auto a = e.apply("--transcript " + t);
  INFO(a.out << a.err);
  CHECK(a.code == 1);
  CHECK(a.out.find("host box: 1 change since the probe:") != std::string::npos);
  CHECK(a.out.find("  free: new holder PID " + std::to_string(second.pid()) + " sleep (user root") !=
        std::string::npos);
  CHECK(a.err.find("apply stopped: 1 host(s) changed since the plan was probed; nothing was applied") !=
        std::string::npos);
  CHECK(first.alive());
  CHECK(second.alive());
  // What happened is recorded: the probe, its checks only, and no run.
  auto starts = run_starts(t);
  REQUIRE(starts.size() == 1);
  CHECK(starts[0]["mode"] == "probe");
  for (const auto& ev : ratchet::transcript::read_transcript(t).events)
    if (ev["event"] == "command") CHECK(ev["role"] == "check");

  // --json: stdout says why nothing ran.
  auto j = e.apply("--json --transcript " + t);
  CHECK(j.code == 1);
  json stopped = json::parse(j.out);
  CHECK(stopped["status"] == "stopped");
  CHECK(stopped["exit_code"] == 1);
  REQUIRE(stopped["changed"]["box"].size() == 1);
  CHECK(stopped["changed"]["box"][0].get<std::string>().rfind("free: new holder PID " + std::to_string(second.pid()), 0) == 0);
  CHECK(first.alive());
  // --lock-wait would wait after the probe: refused unless --yes.
  auto lw = e.apply("--lock --lock-wait 5s --transcript " + t);
  CHECK(lw.code == 2);
  CHECK(lw.err.find("--lock-wait with a probed plan") != std::string::npos);
  // --lock-wait and --break-lock need a lock to act on.
  auto nl = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + e.inv + " -F none --lock-wait 5s");
  CHECK(nl.code == 2);
  CHECK(nl.err.find("--lock-wait needs a lock to act on") != std::string::npos);
  CHECK(first.alive());

  // --yes: the same change is shown, and the plan runs.
  auto y = e.apply("--yes --transcript " + t);
  INFO(y.out << y.err);
  CHECK(y.code == 0);
  CHECK(y.out.find("  free: new holder PID " + std::to_string(second.pid())) != std::string::npos);
  CHECK(y.out.find("--yes: applying although 1 host(s) changed since the probe") != std::string::npos);
  CHECK(eventually([&] { return !first.alive() && !second.alive(); }));
  starts = run_starts(t);
  REQUIRE(starts.size() == 4);
  CHECK(starts[2]["mode"] == "probe");
  CHECK(!starts[3].contains("mode"));
  CHECK(starts[3]["plan"]["digest"] == doc["digest"]);
}

TEST_CASE("apply of a probed plan whose hosts are as probed runs it - the probe recorded before the run",
          "[ssh][probe][apply]") {
  Env e;
  const std::string d = e.dir;
  write_file(d + "/notes.txt", "old\n");
  const std::string pb = e.playbook("name = \"probed\"\n[[step]]\nid = \"notes\"\nkind = \"write\"\npath = \"" + d +
                                    "/notes.txt\"\ncontent = \"new\\n\"\n");
  auto p = e.probe_out(pb);
  INFO(p.out << p.err);
  REQUIRE(p.code == 0);
  CHECK(p.out.find("+new") != std::string::npos);
  const std::string t = d + "/apply.jsonl";
  {
    // The file changes after the probe: apply names it and stops.
    write_file(d + "/notes.txt", "edited by hand\n");
    auto a = e.apply("--transcript " + t);
    INFO(a.out << a.err);
    CHECK(a.code == 1);
    CHECK(a.out.find("  notes: the file changed since the probe") != std::string::npos);
    CHECK(read_file(d + "/notes.txt") == "edited by hand\n");
    write_file(d + "/notes.txt", "old\n");
  }
  auto a = e.apply("--transcript " + t);
  INFO(a.out << a.err);
  CHECK(a.code == 0);
  CHECK(a.out.find("host box: as probed, nothing changed") != std::string::npos);
  CHECK(read_file(d + "/notes.txt") == "new\n");
  auto starts = run_starts(t);
  REQUIRE(starts.size() == 3);
  CHECK(starts[1]["mode"] == "probe");
  CHECK(!starts[2].contains("mode"));
  {
    // show heads each run of the file on its own, per host: the probe read-only,
    // then the run (was: one "host box" heading over all three).
    auto shown = run_sh(std::string(RATCHET_BINARY) + " show " + t);
    INFO(shown.out << shown.err);
    CHECK(shown.code == 0);
    for (int k : {1, 2}) {
      const std::string id = starts[k]["run_id"];
      const std::string head = k == 1 ? "probe " + id + " on host box (read-only)\n" : "run " + id + " on host box\n";
      CHECK(shown.out.find(head) != std::string::npos);
    }
    CHECK(shown.out.find("\nhost box\n") == std::string::npos);
  }
  // The digest `apply --expect-digest` checks covers the findings: an edit to them is refused.
  json doc = json::parse(read_file(e.plan));
  doc["probe"]["hosts"][0]["steps"][0]["verdict"] = "ok";
  write_file(e.plan, doc.dump(2));
  auto edited = e.apply("--transcript " + t);
  CHECK(edited.code == 2);
  CHECK(edited.err.find("the plan file was edited after it was made") != std::string::npos);
}

TEST_CASE("plan --probe interrupted lists every step - the rest not probed - and saves no plan", "[ssh][probe]") {
  Env e;
  const std::string d = e.dir;
  const std::string pids = d + "/pids";
  const std::string pb = e.playbook(
      "name = \"probed\"\n[[step]]\nid = \"slow\"\nkind = \"verify\"\ncommand = \"echo $$ > " + pids +
      "; sleep 60\"\n[[step]]\nid = \"after\"\nkind = \"verify\"\nfile_exists = [\"" + e.inv + "\"]\n");
  BackgroundRatchet bg(d, " plan " + pb + " --probe -i " + e.inv + " -F none --out " + e.plan);
  REQUIRE(eventually([&] { return !read_file(pids).empty(); }));
  kill(bg.pid, SIGINT);
  int status = bg.wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  const std::string out = read_file(bg.out);
  INFO(out << read_file(bg.err));
  CHECK(out.find("1. slow [verify] could not check") != std::string::npos);
  CHECK(out.find("2. after [verify] not probed: interrupted before it") != std::string::npos);
  CHECK(out.find("box: interrupted;") != std::string::npos);
  CHECK(read_file(bg.err).find("the probe was interrupted: no plan saved") != std::string::npos);
  CHECK(!std::filesystem::exists(e.plan));
}
