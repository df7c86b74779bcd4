// kind = "fetch" against a real sshd on 127.0.0.1 (the host's file system is
// this machine's): a glob expanded on the host lands under ARTIFACTS/HOST/PATH
// (directories 0700, files 0600), each recorded with its size and sha256; a
// remote name with ".." never leaves the artifact directory; a file over
// max_size is not fetched and fails the step; the default artifact directory
// sits beside the transcript.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"
#include "util/hash.h"
#include "util/text.h"

using namespace ratchet::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

unsigned mode_of(const std::string& p) {
  struct stat st{};
  return ::lstat(p.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

struct Lab {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-fetch");
  std::string inv = dir + "/inventory.toml";
  std::string remote = dir + "/remote";  // on the host (this machine)
  Lab() {
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
    fs::create_directories(remote + "/logs/sub");
    std::ofstream(remote + "/logs/a.log") << "alpha\n";
    std::ofstream(remote + "/logs/b c\n.log") << "odd\n";
  }
  ~Lab() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string playbook(const std::string& keys) const {
    std::string p = dir + "/fetch.toml";
    std::ofstream(p) << "name = \"fetch\"\ntargets = [\"box\"]\n[[step]]\nid = \"logs\"\nkind = \"fetch\"\n" << keys;
    return p;
  }
  ShellResult run(const std::string& keys, const std::string& extra) const {
    return run_sh(std::string(RATCHET_BINARY) + " run " + playbook(keys) + " -i " + inv + " -F none " + extra);
  }
};

std::vector<json> fetch_events(const std::string& transcript) {
  std::vector<json> out;
  for (const auto& e : ratchet::transcript::read_transcript(transcript).events)
    if (e["event"] == "fetch") out.push_back(e);
  return out;
}

std::string status_of(const std::string& transcript) {
  for (const auto& e : ratchet::transcript::read_transcript(transcript).events)
    if (e["event"] == "step_end") return e["status"];
  return "";
}

}  // namespace

TEST_CASE("fetch: a glob lands under ARTIFACTS/HOST/PATH with its size and sha256", "[ssh][e2e][fetch]") {
  Lab lab;
  const std::string art = lab.dir + "/art", t = lab.dir + "/1.jsonl";
  auto r = lab.run("src = \"" + lab.remote + "/logs/*.log\"\n", "--transcript " + t + " --artifacts " + art);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(status_of(t) == "changed");
  const std::string base = art + "/box" + lab.remote + "/logs";
  CHECK(slurp(base + "/a.log") == "alpha\n");
  CHECK(slurp(base + "/b c\n.log") == "odd\n");
  CHECK(mode_of(base + "/a.log") == 0600);
  CHECK(mode_of(art + "/box") == 0700);
  CHECK(mode_of(base) == 0700);
  auto evs = fetch_events(t);
  REQUIRE(evs.size() == 2);
  CHECK(evs[0]["remote"] == lab.remote + "/logs/a.log");
  CHECK(evs[0]["local"] == base + "/a.log");
  CHECK(evs[0]["bytes"] == 6);
  CHECK(evs[0]["sha256"] == ratchet::util::sha256_hex("alpha\n"));
  CHECK(evs[0]["ok"] == true);
}

TEST_CASE("fetch: a remote name with .. never leaves the artifact directory", "[ssh][e2e][fetch]") {
  Lab lab;
  // The glob, as the host expands it, keeps its ".." components: ".../logs/sub/../../x".
  std::ofstream(lab.remote + "/x") << "outside\n";
  const std::string art = lab.dir + "/art", t = lab.dir + "/2.jsonl";
  auto r = lab.run("src = \"" + lab.remote + "/logs/s*/../../x\"\n", "--transcript " + t + " --artifacts " + art);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  auto evs = fetch_events(t);
  REQUIRE(evs.size() == 1);
  CHECK(evs[0]["remote"] == lab.remote + "/logs/sub/../../x");
  const std::string local = art + "/box" + lab.remote + "/logs/sub/%2E%2E/%2E%2E/x";
  CHECK(evs[0]["local"] == local);
  CHECK(slurp(local) == "outside\n");
  // Nothing appeared anywhere but under art/.
  CHECK_FALSE(fs::exists(art + "/box" + lab.remote + "/x"));
  for (const auto& e : fs::recursive_directory_iterator(lab.dir)) {
    if (e.path().string().rfind(art, 0) == 0 || e.path().string().rfind(lab.remote, 0) == 0) continue;
    CHECK(e.path().filename() != "x");
  }
}

TEST_CASE("fetch: a name that is not UTF-8 keeps its bytes in the event (remote_b64, local_b64)", "[ssh][e2e][fetch]") {
  Lab lab;
  const std::string odd = lab.remote + "/bin/odd\xff\x01.dat";
  fs::create_directories(lab.remote + "/bin");
  std::ofstream(odd) << "bytes\n";
  const std::string art = lab.dir + "/art", t = lab.dir + "/u.jsonl";
  auto r = lab.run("src = \"" + lab.remote + "/bin/*.dat\"\n", "--transcript " + t + " --artifacts " + art);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  auto evs = fetch_events(t);
  REQUIRE(evs.size() == 1);
  REQUIRE(evs[0].contains("remote_b64"));
  std::string remote, local;
  REQUIRE(ratchet::util::unbase64(evs[0]["remote_b64"].get<std::string>(), &remote));
  REQUIRE(ratchet::util::unbase64(evs[0]["local_b64"].get<std::string>(), &local));
  CHECK(remote == odd);
  CHECK(local == art + "/box" + odd);
  CHECK(slurp(local) == "bytes\n");  // the event names the file that is there
}

TEST_CASE("fetch: a file over max_size is not fetched and fails the step", "[ssh][e2e][fetch]") {
  Lab lab;
  std::ofstream(lab.remote + "/logs/big.log") << std::string(4096, 'b');
  const std::string art = lab.dir + "/art", t = lab.dir + "/3.jsonl";
  auto r = lab.run("src = [\"" + lab.remote + "/logs/*.log\"]\nmax_size = 1024\n",
                   "--transcript " + t + " --artifacts " + art);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(status_of(t) == "failed");
  CHECK((r.out + r.err).find(lab.remote + "/logs/big.log: 4096 bytes, over max_size 1024: not fetched") != std::string::npos);
  CHECK_FALSE(fs::exists(art + "/box" + lab.remote + "/logs/big.log"));
  CHECK(slurp(art + "/box" + lab.remote + "/logs/a.log") == "alpha\n");  // the others still came
  for (const auto& e : fs::directory_iterator(art + "/box" + lab.remote + "/logs"))
    CHECK(e.path().filename().string().rfind(".ratchet-", 0) != 0);
}

TEST_CASE("fetch: by default the files go beside the transcript and a missing pattern fails", "[ssh][e2e][fetch]") {
  Lab lab;
  const std::string t = lab.dir + "/run-1.jsonl";
  auto r = lab.run("src = [\"" + lab.remote + "/logs/a.log\", \"" + lab.remote + "/nothing*\"]\n", "--transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK((r.out + r.err).find(lab.remote + "/nothing* matches nothing on the host") != std::string::npos);
  CHECK(slurp(lab.dir + "/run-1/box" + lab.remote + "/logs/a.log") == "alpha\n");
  r = lab.run("src = [\"" + lab.remote + "/nothing*\"]\nmissing_ok = true\n", "--transcript " + lab.dir + "/run-2.jsonl");
  CHECK(r.code == 0);
}
