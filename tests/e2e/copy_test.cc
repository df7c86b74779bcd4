// kind = "copy" against a real sshd on 127.0.0.1 (the host's file system is
// this machine's): a tree with modes, a symlink and a name holding a space and
// a newline lands as the source has it; a second run is `ok`; a symlinked
// directory on the host is never written through; a saved plan uploads exactly
// what was reviewed (a local file changed since is refused, before connecting
// and on the host). As a become user into a root-owned directory: a real
// systemd host, through sudo.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "support/systemd_fixture.h"
#include "transcript/reader.h"
#include "util/hash.h"

using namespace ratchet::testing;
namespace fs = std::filesystem;

namespace {

void put(const std::string& path, const std::string& text, mode_t mode) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  ::chmod(path.c_str(), mode);
}

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

unsigned mode_of(const std::string& p) {
  struct stat st{};
  return ::lstat(p.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

std::map<std::string, std::string> statuses(const std::string& transcript) {
  std::map<std::string, std::string> out;
  for (const auto& e : ratchet::transcript::read_transcript(transcript).events)
    if (e["event"] == "step_end") out[e["step"]] = e["status"];
  return out;
}

struct Lab {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-copy");
  std::string inv = dir + "/inventory.toml";
  std::string dest = dir + "/host/srv";  // on the host (this machine)
  Lab() {
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
    fs::create_directories(dir + "/host");
    put(dir + "/site/bin/run.sh", "#!/bin/sh\necho run\n", 0755);
    put(dir + "/site/conf/a b\nc.conf", "odd = true\n", 0600);
    put(dir + "/site/conf/keep.tmp", "excluded\n", 0644);
    fs::create_symlink("conf/a b\nc.conf", dir + "/site/current");
    fs::permissions(dir + "/site/conf", fs::perms(0750));
  }
  ~Lab() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string playbook(const std::string& extra = "") const {
    std::string p = dir + "/copy.toml";
    std::ofstream(p) << "name = \"copy\"\ntargets = [\"box\"]\n[[step]]\nid = \"site\"\nkind = \"copy\"\nsrc = \"site\"\n"
                     << "dest = \"" << dest << "\"\nexclude = [\"*.tmp\"]\n" << extra;
    return p;
  }
  ShellResult ratchet(const std::string& args) const { return run_sh(std::string(RATCHET_BINARY) + " " + args); }
  std::string run_args(const std::string& t) const { return "run " + playbook() + " -i " + inv + " -F none --transcript " + t; }
};

}  // namespace

TEST_CASE("copy: a tree with modes a symlink and an odd name lands as its source and a second run is ok",
          "[ssh][e2e][copy]") {
  Lab lab;
  auto r = lab.ratchet(lab.run_args(lab.dir + "/1.jsonl"));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(statuses(lab.dir + "/1.jsonl")["site"] == "changed");
  CHECK(slurp(lab.dest + "/bin/run.sh") == "#!/bin/sh\necho run\n");
  CHECK(mode_of(lab.dest + "/bin/run.sh") == 0755);  // no `mode`: the source's bits, so it stays executable
  CHECK(slurp(lab.dest + "/conf/a b\nc.conf") == "odd = true\n");
  CHECK(mode_of(lab.dest + "/conf/a b\nc.conf") == 0600);
  CHECK(mode_of(lab.dest + "/conf") == 0750);
  CHECK_FALSE(fs::exists(lab.dest + "/conf/keep.tmp"));
  REQUIRE(fs::is_symlink(lab.dest + "/current"));
  CHECK(fs::read_symlink(lab.dest + "/current") == "conf/a b\nc.conf");
  // Each upload is recorded with the size and sha256 it streamed.
  bool recorded = false;
  for (const auto& e : ratchet::transcript::read_transcript(lab.dir + "/1.jsonl").events)
    if (e["event"] == "command" && e.contains("stdin_file") && e["stdin_file"] == lab.dir + "/site/bin/run.sh")
      recorded = e["stdin_file_sha256"] == ratchet::util::sha256_hex("#!/bin/sh\necho run\n") && e["stdin_bytes"] == 19;
  CHECK(recorded);

  r = lab.ratchet(lab.run_args(lab.dir + "/2.jsonl"));
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(statuses(lab.dir + "/2.jsonl")["site"] == "ok");

  SECTION("a changed mode and content are put back") {
    ::chmod((lab.dest + "/bin/run.sh").c_str(), 0644);
    put(lab.dest + "/conf/a b\nc.conf", "changed\n", 0600);
    r = lab.ratchet(lab.run_args(lab.dir + "/3.jsonl"));
    CHECK(r.code == 0);
    CHECK(statuses(lab.dir + "/3.jsonl")["site"] == "changed");
    CHECK(mode_of(lab.dest + "/bin/run.sh") == 0755);
    CHECK(slurp(lab.dest + "/conf/a b\nc.conf") == "odd = true\n");
    // No temp file is left beside what was replaced.
    for (const auto& e : fs::directory_iterator(lab.dest + "/conf"))
      CHECK(e.path().filename().string().rfind(".ratchet-", 0) != 0);
  }
  SECTION("a symlinked directory on the host is never written through") {
    fs::remove_all(lab.dest + "/conf");
    fs::create_directories(lab.dir + "/elsewhere");
    fs::create_directory_symlink(lab.dir + "/elsewhere", lab.dest + "/conf");
    r = lab.ratchet(lab.run_args(lab.dir + "/4.jsonl"));
    CHECK(r.code == 1);
    CHECK(statuses(lab.dir + "/4.jsonl")["site"] == "failed");
    // The host's words, whole in the transcript (a reason on screen is cut at 200 bytes).
    CHECK(slurp(lab.dir + "/4.jsonl").find(lab.dest + "/conf is a symlink on the host: copy never writes through one") !=
          std::string::npos);
    CHECK(fs::is_empty(lab.dir + "/elsewhere"));
  }
}

TEST_CASE("copy: follow = true sends what each symlink names, as a regular file", "[ssh][e2e][copy]") {
  Lab lab;
  put(lab.dir + "/outside.txt", "outside\n", 0640);
  fs::create_symlink(lab.dir + "/outside.txt", lab.dir + "/site/abs");  // absolute, out of the tree
  const std::string pb = lab.playbook("follow = true\n");
  auto r = lab.ratchet("run " + pb + " -i " + lab.inv + " -F none --transcript " + lab.dir + "/f.jsonl");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(statuses(lab.dir + "/f.jsonl")["site"] == "changed");
  CHECK_FALSE(fs::is_symlink(lab.dest + "/current"));
  CHECK(slurp(lab.dest + "/current") == "odd = true\n");  // relative: conf/a b\nc.conf
  CHECK(mode_of(lab.dest + "/current") == 0600);
  CHECK(slurp(lab.dest + "/abs") == "outside\n");
  CHECK(mode_of(lab.dest + "/abs") == 0640);
  r = lab.ratchet("run " + pb + " -i " + lab.inv + " -F none --transcript " + lab.dir + "/g.jsonl");
  CHECK(r.code == 0);
  CHECK(statuses(lab.dir + "/g.jsonl")["site"] == "ok");
}

TEST_CASE("copy: plan shows each upload's sha256 and a saved plan refuses a source changed since",
          "[ssh][e2e][copy]") {
  Lab lab;
  const std::string plan = lab.dir + "/p.json";
  auto r = lab.ratchet("plan " + lab.playbook() + " -i " + lab.inv + " -F none --out " + plan);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const std::string sha = ratchet::util::sha256_hex("#!/bin/sh\necho run\n");
  CHECK(r.out.find("ratchet_copy_file " + lab.dest + " bin/run.sh " + sha + " 0755 '' ''") != std::string::npos);
  CHECK(r.out.find("stdin: " + lab.dir + "/site/bin/run.sh (19 bytes, sha256 " + sha + ")") != std::string::npos);

  // The saved plan, applied: the reviewed files land (the plan's commands, decoded from the file).
  r = lab.ratchet("apply " + plan + " --transcript " + lab.dir + "/a1.jsonl");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(statuses(lab.dir + "/a1.jsonl")["site"] == "changed");
  CHECK(slurp(lab.dest + "/bin/run.sh") == "#!/bin/sh\necho run\n");

  fs::remove_all(lab.dest);
  put(lab.dir + "/site/bin/run.sh", "#!/bin/sh\necho evil\n", 0755);
  r = lab.ratchet("apply " + plan + " --transcript " + lab.dir + "/a.jsonl");
  CHECK(r.code == 2);
  CHECK((r.out + r.err).find("copy source file " + lab.dir + "/site/bin/run.sh changed since the plan was made") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(lab.dest));
}

TEST_CASE("copy: the host refuses bytes whose sha256 is not the one the command pins", "[ssh][e2e][copy]") {
  // What apply's freshness check cannot see (the file changed after it looked):
  // the host hashes what it received before anything is put in place.
  Lab lab;
  put(lab.dir + "/one.txt", "planned\n", 0644);
  const std::string sha = ratchet::util::sha256_hex("something else\n");
  std::string p = lab.dir + "/raw.toml";
  std::ofstream(p) << "name = \"raw\"\ntargets = [\"box\"]\n[[step]]\nid = \"raw\"\nkind = \"run\"\n"
                   << "command = \"ratchet_copy_file " << lab.dir << "/host x.txt " << sha << " 0644 '' '' < "
                   << lab.dir << "/one.txt\"\n";
  auto r = lab.ratchet("run " + p + " -i " + lab.inv + " -F none --transcript " + lab.dir + "/r.jsonl");
  CHECK(r.code == 1);
  CHECK(slurp(lab.dir + "/r.jsonl").find("the plan pins " + sha + " (the local file changed since the plan was made?): not installed") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(lab.dir + "/host/x.txt"));
  for (const auto& e : fs::directory_iterator(lab.dir + "/host"))
    CHECK(e.path().filename().string().rfind(".ratchet-", 0) != 0);
}

TEST_CASE("copy: as a become user into a root-owned directory", "[systemd][e2e][copy][become]") {
  SystemdHost host;
  REQUIRE(run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " erin nopasswd").code == 0);
  std::string out;
  REQUIRE(host.ssh("install -d -m 0755 -o root -g root /opt/app", &out) == 0);
  std::string dir = temp_dir("ratchet-copy-become");
  put(dir + "/app/start.sh", "#!/bin/sh\nexec sleep 1\n", 0755);
  put(dir + "/app/data/x y.txt", "data\n", 0640);
  std::string inv = dir + "/inv.toml";
  std::ofstream(inv) << "[hosts.lab]\naddress = \"127.0.0.1\"\nport = " << host.port() << "\nuser = \"erin\"\nidentity = \""
                     << host.client_key() << "\"\nknown_hosts = \"" << host.known_hosts() << "\"\n";
  std::string pb = dir + "/pb.toml";
  std::ofstream(pb) << "name = \"app\"\n[[step]]\nid = \"app\"\nkind = \"copy\"\nbecome = true\nsrc = \"app\"\n"
                    << "dest = \"/opt/app/current\"\nowner = \"root\"\ngroup = \"root\"\n";
  for (const char* round : {"1", "2"}) {
    std::string t = dir + "/" + round + ".jsonl";
    auto r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inv + " -F none --transcript " + t);
    INFO(round << ": " << r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(statuses(t)["app"] == (std::string(round) == "1" ? "changed" : "ok"));
  }
  REQUIRE(host.ssh("stat -c '%a %U %G %n' /opt/app/current /opt/app/current/start.sh '/opt/app/current/data/x y.txt'; "
                   "cat '/opt/app/current/data/x y.txt'",
                   &out) == 0);
  CHECK(out == "755 root root /opt/app/current\n755 root root /opt/app/current/start.sh\n"
               "640 root root /opt/app/current/data/x y.txt\ndata\n");
  std::error_code ec;
  fs::remove_all(dir, ec);
}
