// `plan --out` and `apply`: the plan a reviewer reads is what runs (docs/plan.md).
// On a real systemd host: the transcript's commands are the plan file's, byte for
// byte. On a listener the test owns: every refusal happens before anything connects.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "plan/codec.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "support/systemd_fixture.h"
#include "transcript/reader.h"
#include "util/hash.h"

using ratchet::testing::run_sh;
using ratchet::testing::SystemdHost;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The seed runbook and its template, copied so a test can edit them.
std::string copy_seed(const std::string& dir) {
  fs::create_directories(dir + "/playbooks");
  fs::create_directories(dir + "/examples/units");
  fs::copy_file(std::string(RATCHET_SOURCE_DIR) + "/examples/units/inference.service",
                dir + "/examples/units/inference.service", fs::copy_options::overwrite_existing);
  fs::copy_file(std::string(RATCHET_SOURCE_DIR) + "/playbooks/gpu-release.toml", dir + "/playbooks/gpu-release.toml",
                fs::copy_options::overwrite_existing);
  fs::copy_file(std::string(RATCHET_SOURCE_DIR) + "/examples/notes.md.tmpl", dir + "/examples/notes.md.tmpl",
                fs::copy_options::overwrite_existing);
  return dir + "/playbooks/gpu-release.toml";
}

// A TCP listener on 127.0.0.1 that nothing should reach; closed on destruction.
struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 8) == 0);
    socklen_t n = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
    port = ntohs(a.sin_port);
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
  }
  ~Listener() { ::close(fd); }
  // Whether anything connected since the last call.
  bool connected() {
    int c = ::accept(fd, nullptr, nullptr);
    if (c < 0) return false;
    ::close(c);
    return true;
  }
};

// Rewrites a plan file's JSON and its digest, as a forger with the codec could.
void rewrite(const std::string& path, const std::function<void(json&)>& edit) {
  json doc = json::parse(slurp(path));
  edit(doc);
  doc["digest"] = ratchet::plan::digest_of(doc);
  std::ofstream(path, std::ios::trunc) << doc.dump(2) << "\n";
}

}  // namespace

TEST_CASE("plan --out then apply on a real systemd host: the transcript's commands are the plan file's byte for byte",
          "[systemd][e2e]") {
  SystemdHost host;
  auto scene = host.stage_inference();
  std::string dir = ratchet::testing::temp_dir("ratchet-apply");
  std::string pb = copy_seed(dir);
  std::string inv = dir + "/inventory.toml";
  std::ofstream(inv) << "[hosts.lab]\naddress = \"127.0.0.1\"\nport = " << host.port() << "\nuser = \"root\"\nidentity = \""
                     << host.client_key() << "\"\nknown_hosts = \"" << host.known_hosts()
                     << "\"\n\n[groups]\ngpu = [\"lab\"]\n";
  const std::string bin = RATCHET_BINARY;
  const std::string sel = " -i " + inv + " -e 'devices=[\"" + scene.at("DEVICE_GLOB") + "\"]'";
  std::string planfile = dir + "/handover.plan.json";

  auto made = run_sh(bin + " plan " + pb + sel + " --out " + planfile);
  INFO(made.out << made.err);
  REQUIRE(made.code == 0);
  struct stat st{};
  REQUIRE(::stat(planfile.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  json doc = json::parse(slurp(planfile));
  const std::string digest = doc["digest"];
  CHECK(made.out.find("digest " + digest) != std::string::npos);
  CHECK(doc["hosts"][0]["known_keys"].size() >= 1);  // the key known_hosts had, pinned

  // The template is edited after review: apply refuses, naming it, and sends nothing.
  {
    std::string tmpl = dir + "/examples/notes.md.tmpl";
    std::string before = slurp(tmpl);
    std::ofstream(tmpl, std::ios::app) << "edited after review\n";
    auto r = run_sh(bin + " apply " + planfile + " --transcript " + dir + "/refused.jsonl");
    CHECK(r.code == 2);
    CHECK(r.err.find("template " + tmpl + " changed since the plan was made: sha256 " + ratchet::util::sha256_hex(before) +
                     " in the plan, " + ratchet::util::sha256_hex(slurp(tmpl)) + " now") != std::string::npos);
    CHECK_FALSE(fs::exists(dir + "/refused.jsonl"));
    std::ofstream(tmpl, std::ios::trunc) << before;
  }

  std::string t = dir + "/applied.jsonl";
  auto run = run_sh(bin + " apply " + planfile + " --transcript " + t + " --expect-digest " + digest);
  INFO(run.out << run.err);
  REQUIRE(run.code == 0);

  // Every command of a step the plan holds final is sent exactly as the file says.
  std::map<std::string, std::set<std::string>> planned;
  std::set<std::string> deferred;
  for (const auto& s : doc["hosts"][0]["steps"]) {
    if (s.contains("runtime")) deferred.insert(s["id"].get<std::string>());
    for (const auto& c : s["commands"]) planned[s["id"]].insert(c["command"].get<std::string>());
  }
  CHECK(deferred == std::set<std::string>{"notes"});  // it reads steps.* and run.id
  auto tr = ratchet::transcript::read_transcript(t);
  REQUIRE(tr.note.empty());
  REQUIRE(tr.events.front()["event"] == "run_start");
  CHECK(tr.events.front()["plan"]["digest"] == digest);
  CHECK(tr.events.front()["plan"]["path"] == planfile);
  int exact = 0;
  for (const auto& e : tr.events) {
    if (e["event"] != "command" || e["role"] == "become_probe") continue;
    INFO(e.dump());
    if (deferred.count(e["step"])) continue;
    CHECK(planned[e["step"]].count(e["command"].get<std::string>()) == 1);
    ++exact;
  }
  CHECK(exact >= 15);
  CHECK(tr.events.back()["exit_code"] == 0);
  auto show = run_sh(bin + " show " + t);
  CHECK(show.out.find("applied plan " + digest.substr(0, 12)) != std::string::npos);

  // run and apply execute the same plan: run's plan --json equals the file's hosts.
  auto pj = run_sh(bin + " plan " + pb + sel + " --json");
  REQUIRE(pj.code == 0);
  CHECK(json::parse(pj.out)["hosts"] == doc["hosts"]);
}

TEST_CASE("apply refuses before anything connects: an edited, truncated, foreign, stale or re-pointed plan",
          "[e2e][apply]") {
  Listener host;
  std::string dir = ratchet::testing::temp_dir("ratchet-apply-refuse");
  std::string pb = copy_seed(dir);
  std::string inv = dir + "/inventory.toml";
  auto write_inv = [&](int port, int gpus) {
    std::ofstream(inv, std::ios::trunc) << "[hosts.lab]\naddress = \"127.0.0.1\"\nport = " << port
                                        << "\nuser = \"root\"\nknown_hosts = \"" << dir
                                        << "/known_hosts\"\nvars = { gpus = " << gpus << " }\n\n[groups]\ngpu = [\"lab\"]\n";
  };
  write_inv(host.port, 8);
  std::ofstream(dir + "/known_hosts") << "";
  const std::string bin = RATCHET_BINARY;
  const std::string plan = dir + "/p.json";
  auto make = [&] {
    auto r = run_sh(bin + " plan " + pb + " -i " + inv + " -e 'devices=[\"/var/tmp/x*\"]' --out " + plan);
    INFO(r.err);
    REQUIRE(r.code == 0);
  };
  auto apply = [&](const std::string& extra = "") {
    auto r = run_sh(bin + " apply " + plan + " --transcript " + dir + "/t.jsonl " + extra);
    CHECK(r.code == 2);
    CHECK_FALSE(host.connected());
    CHECK_FALSE(fs::exists(dir + "/t.jsonl"));
    CHECK(r.err.find("nothing was run") != std::string::npos);
    return r.err;
  };
  make();
  const std::string original = slurp(plan);

  SECTION("an edit of the file") {
    std::string text = original;
    text.replace(text.find("ratchet_"), 8, "rm -rf ;");
    std::ofstream(plan, std::ios::trunc) << text;
    CHECK(apply().find("the plan file was edited after it was made") != std::string::npos);
  }
  SECTION("a truncated file") {
    std::ofstream(plan, std::ios::trunc) << original.substr(0, original.size() / 3);
    CHECK(apply().find("not one JSON object") != std::string::npos);
  }
  SECTION("a foreign file: a playbook given to apply") {
    CHECK(run_sh(bin + " apply " + pb).err.find("not a ratchet plan file") != std::string::npos);
    CHECK_FALSE(host.connected());
  }
  SECTION("the playbook changed") {
    std::ofstream(pb, std::ios::app) << "\n# a comment is a change\n";
    CHECK(apply().find("the playbook " + pb + " changed since the plan was made: sha256 ") != std::string::npos);
  }
  SECTION("another ratchet version") {
    rewrite(plan, [](json& d) { d["made"]["ratchet_version"] = "0.0.1"; });
    CHECK(apply().find("the plan was made by ratchet 0.0.1, this is ratchet ") != std::string::npos);
  }
  SECTION("older than --max-age") {
    rewrite(plan, [](json& d) { d["made"]["at_unix"] = d["made"]["at_unix"].get<long long>() - 7200; });
    CHECK(apply("--max-age 1h").find("ago, more than --max-age 1h") != std::string::npos);
  }
  SECTION("a digest other than the approved one") {
    CHECK(apply("--expect-digest sha256:0000").find("not the approved 0000") != std::string::npos);
  }
  SECTION("a host's port changed in the inventory") {
    write_inv(host.port + 1, 8);
    CHECK(apply().find("host lab: its port is `" + std::to_string(host.port + 1) + "` now, `" +
                       std::to_string(host.port) + "` in the plan") != std::string::npos);
  }
  SECTION("a host var changed in the inventory") {
    write_inv(host.port, 4);
    CHECK(apply().find("host lab: var `gpus` is 4 now, 8 in the plan") != std::string::npos);
  }
  SECTION("-e sets secrets only") {
    CHECK(apply("-e unit=other.service").find("-e unit: apply sets secrets only") != std::string::npos);
  }
  SECTION("--limit can only narrow") {
    CHECK(apply("--limit elsewhere").find("--limit selects none of the plan's hosts (lab): ") != std::string::npos);
  }
  SECTION("not refused: an unrelated inventory edit, and apply from another directory") {
    // Made with relative paths from dir; the inventory gains a host the plan does not select.
    REQUIRE(run_sh("cd " + dir + " && " + bin + " plan playbooks/gpu-release.toml -i inventory.toml "
                   "-e 'devices=[\"/var/tmp/x*\"]' --out rel.json").code == 0);
    std::ofstream(inv, std::ios::app) << "\n[hosts.other]\naddress = \"127.0.0.1\"\nport = 1\n";
    // The approved digest as a reviewer may paste it: upper case, prefixed, with spaces.
    std::string d = json::parse(slurp(dir + "/rel.json"))["digest"];
    std::transform(d.begin(), d.end(), d.begin(), [](unsigned char c) { return std::toupper(c); });
    auto r = run_sh("cd / && " + bin + " apply " + dir + "/rel.json --connect-timeout 1s --expect-digest ' SHA256:" +
                    d + " ' --transcript " + dir + "/t.jsonl");
    INFO(r.out << r.err);
    CHECK(r.code == 3);  // every check passed: it connected (the listener speaks no SSH)
    CHECK(host.connected());
  }
  SECTION("an empty --expect-digest is an error, never an unchecked apply") {
    auto r = run_sh(bin + " apply " + plan + " --expect-digest ''");
    CHECK(r.code == 2);
    CHECK(r.err.find("--expect-digest is empty") != std::string::npos);
    CHECK_FALSE(host.connected());
  }
  SECTION("outputs never overwrite an input: --out onto the playbook, --transcript onto the plan") {
    const std::string before = slurp(pb);
    auto r = run_sh(bin + " plan " + pb + " -i " + inv + " -e 'devices=[\"/var/tmp/x*\"]' --out " + pb);
    CHECK(r.code == 2);
    CHECK(r.err.find("--out " + pb + " is the playbook " + pb + ": the plan goes to a file of its own") !=
          std::string::npos);
    CHECK(slurp(pb) == before);
    r = run_sh(bin + " apply " + plan + " --transcript " + plan);
    CHECK(r.code == 2);
    CHECK(r.err.find("is the plan file") != std::string::npos);
    CHECK(slurp(plan) == original);
    CHECK_FALSE(host.connected());
  }
  SECTION("show refuses a plan file") {
    auto r = run_sh(bin + " show " + plan);
    CHECK(r.code == 2);
    CHECK(r.err.find(plan + " is a saved plan (made by `ratchet plan --out`), not a transcript") != std::string::npos);
  }
  SECTION("a forged file whose digest was recomputed: the secrets' sources, or the playbook swapped for a FIFO") {
    rewrite(plan, [](json& d) { d["secrets"] = {{"token", "env:RATCHET_FORGED_TOKEN"}}; });
    auto r = run_sh("RATCHET_FORGED_TOKEN=x " + bin + " apply " + plan);
    CHECK(r.code == 2);
    CHECK(r.err.find("the plan's `secrets` (where each secret comes from) are not the playbook's [secrets]") !=
          std::string::npos);
    CHECK_FALSE(host.connected());
    std::ofstream(plan, std::ios::trunc) << original;
    fs::remove(pb);
    REQUIRE(::mkfifo(pb.c_str(), 0600) == 0);  // nothing may open it: apply would block, or read it twice
    CHECK(apply().find("the playbook " + pb + " is not a regular file now") != std::string::npos);
  }
  SECTION("run refuses a plan file") {
    auto r = run_sh(bin + " run " + plan);
    CHECK(r.code == 2);
    CHECK(r.err.find(plan + " is a saved plan (made by `ratchet plan --out`), not a playbook: use `ratchet apply " +
                     plan + "`") != std::string::npos);
    CHECK_FALSE(host.connected());
  }
}

TEST_CASE("apply: a host key other than the one the plan saw is refused at connect with exit 4", "[ssh][apply]") {
  ratchet::testing::SshdHost sshd;
  std::string dir = ratchet::testing::temp_dir("ratchet-apply-pin");
  // When the plan is made, known_hosts lists another key for the host.
  REQUIRE(run_sh("ssh-keygen -q -t ed25519 -N '' -f " + dir + "/other").code == 0);
  std::string other = slurp(dir + "/other.pub");
  std::string kh = dir + "/known_hosts";
  std::ofstream(kh) << "[127.0.0.1]:" << sshd.port() << " " << other;
  std::string inv = dir + "/inv.toml";
  std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port() << "\nidentity = \""
                     << sshd.client_key() << "\"\nknown_hosts = \"" << kh << "\"\n";
  std::string pb = dir + "/pb.toml";
  std::ofstream(pb) << "name = \"pin\"\n[[step]]\nid = \"touch\"\nkind = \"run\"\ncommand = \"touch " << dir
                    << "/ran\"\n";
  const std::string bin = RATCHET_BINARY;
  auto made = run_sh(bin + " plan " + pb + " -i " + inv + " --out " + dir + "/p.json");
  REQUIRE(made.code == 0);
  auto fp = run_sh("ssh-keygen -lf " + dir + "/other.pub | cut -d' ' -f2");
  json doc = json::parse(slurp(dir + "/p.json"));
  CHECK(doc["hosts"][0]["known_keys"] == json::array({fp.out.substr(0, fp.out.size() - 1)}));
  // Then known_hosts is "fixed" to the server's real key: apply still refuses it.
  std::ofstream(kh, std::ios::trunc) << sshd.known_hosts_line();
  auto r = run_sh(bin + " apply " + dir + "/p.json --transcript " + dir + "/t.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 4);
  CHECK((r.out + r.err).find("HOST KEY differs from the saved plan") != std::string::npos);
  CHECK_FALSE(fs::exists(dir + "/ran"));
  // A plan made now pins the real key, and runs.
  REQUIRE(run_sh(bin + " plan " + pb + " -i " + inv + " --out " + dir + "/p2.json").code == 0);
  auto ok = run_sh(bin + " apply " + dir + "/p2.json --transcript " + dir + "/t2.jsonl");
  INFO(ok.out << ok.err);
  CHECK(ok.code == 0);
  CHECK(fs::exists(dir + "/ran"));
}

TEST_CASE("apply: a secret the plan names must be supplied again and is never saved", "[e2e][apply]") {
  Listener host;
  std::string dir = ratchet::testing::temp_dir("ratchet-apply-secret");
  std::string inv = dir + "/inv.toml";
  std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << host.port << "\nknown_hosts = \"" << dir
                     << "/kh\"\n";
  std::string pb = dir + "/pb.toml";
  std::ofstream(pb) << "name = \"s\"\n[secrets]\ntoken = \"env:RATCHET_APPLY_TEST_TOKEN\"\n[[step]]\nid = \"w\"\n"
                       "kind = \"write\"\npath = \"/tmp/x\"\ncontent = \"token={{ token }}\\n\"\n";
  const std::string bin = RATCHET_BINARY;
  auto made = run_sh("RATCHET_APPLY_TEST_TOKEN=s3cr3t-value " + bin + " plan " + pb + " -i " + inv + " --out " + dir +
                "/p.json");
  REQUIRE(made.code == 0);
  std::string text = slurp(dir + "/p.json");
  CHECK(text.find("s3cr3t-value") == std::string::npos);
  json doc = json::parse(text);
  CHECK(doc["secrets"] == json({{"token", "env:RATCHET_APPLY_TEST_TOKEN"}}));
  CHECK(doc["hosts"][0]["steps"][0]["runtime"]["placeholders"] == json::array({"token"}));
  auto r = run_sh("env -u RATCHET_APPLY_TEST_TOKEN " + bin + " apply " + dir + "/p.json");
  CHECK(r.code == 2);
  CHECK(r.err.find("secret `token` is not supplied: environment variable RATCHET_APPLY_TEST_TOKEN is not set") !=
        std::string::npos);
  CHECK_FALSE(host.connected());
}

TEST_CASE("every shipped playbook: the saved plan holds exactly the commands run executes", "[e2e][apply]") {
  Listener host;
  std::string dir = ratchet::testing::temp_dir("ratchet-apply-all");
  std::string inv = dir + "/inv.toml";
  std::ofstream(inv) << "[hosts.a]\naddress = \"127.0.0.1\"\nport = " << host.port << "\nknown_hosts = \"" << dir
                     << "/kh\"\n[hosts.b]\naddress = \"127.0.0.1\"\nport = " << host.port << "\nknown_hosts = \""
                     << dir << "/kh\"\nbecome = true\n[groups]\ngpu = [\"a\", \"b\"]\n";
  const std::string bin = RATCHET_BINARY;
  int n = 0;
  for (const auto& entry : fs::directory_iterator(std::string(RATCHET_SOURCE_DIR) + "/playbooks")) {
    if (entry.path().extension() != ".toml") continue;
    ++n;
    std::string pb = entry.path().string();
    INFO(pb);
    auto pj = run_sh(bin + " plan " + pb + " -i " + inv + " --json");
    INFO(pj.err);
    REQUIRE(pj.code == 0);
    std::string file = dir + "/" + entry.path().stem().string() + ".plan.json";
    REQUIRE(run_sh(bin + " plan " + pb + " -i " + inv + " --out " + file).code == 0);
    std::string text = slurp(file);
    // What run executes (plan --json is the plan run builds) is what the file holds...
    CHECK(json::parse(text)["hosts"] == json::parse(pj.out)["hosts"]);
    // ... and what apply decodes from it is that again, byte for byte.
    std::string err;
    auto back = ratchet::plan::decode_file(text, &err);
    INFO(err);
    REQUIRE(back);
    CHECK(ratchet::plan::encode_file(*back) == text);
  }
  CHECK(n >= 2);
  CHECK_FALSE(host.connected());
}
