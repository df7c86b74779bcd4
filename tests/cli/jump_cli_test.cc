// The ratchet binary through a jump host: inventory `jump` and ssh config
// ProxyJump for run, exec and hosts; exit codes of hop failures. The target
// listens inside a network namespace only the jump host serves in.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/local_proc.h"
#include "support/netns_fixture.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

struct JumpLab {
  NetNs ns;
  SshdHost target{ns.exec_prefix()};
  InetdSshd jump{ns};
  std::string dir = temp_dir("ratchet-jump-cli");
  std::string kh = dir + "/known_hosts";
  std::string hop = "root@127.0.0.1:" + std::to_string(jump.port());

  JumpLab() {
    jump.authorize(target.client_key() + ".pub");
    std::ofstream(kh) << target.known_hosts_line() << "\n" << jump.known_hosts_line() << "\n";
  }
  ~JumpLab() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  /// An inventory with host `box` (the target) and `jump_line` as its jump line.
  std::string inventory(const std::string& jump_line) {
    std::string path = dir + "/inventory.toml";
    std::ofstream(path) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << target.port()
                        << "\nuser = \"root\"\nidentity = \"" << target.client_key()
                        << "\"\nknown_hosts = \"" << kh << "\"\n"
                        << jump_line;
    return path;
  }
  ShellResult ratchet(const std::string& args) {
    return run_sh(std::string(RATCHET_BINARY) + " " + args);
  }
};

std::string file_text(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

/// A playbook whose one step waits (at most 30 s) until `n` hosts reached it,
/// each leaving a file in `dir`/barrier, then prints how many did: the hosts
/// of a run are surely connected at the same time.
std::string barrier_playbook(const std::string& dir, int n) {
  std::string path = dir + "/barrier.toml";
  std::ofstream(path) << "name = \"barrier\"\n[[step]]\nid = \"meet\"\nkind = \"run\"\ncommand = \"d="
                      << dir << "/barrier; mkdir -p $d; : > $d/$$; i=0; while [ $(ls $d | wc -l) -lt "
                      << n << " ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; ls $d | wc -l\"\n";
  return path;
}

/// How many lines of the file at `path` contain `needle`.
int count_lines(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

}  // namespace

TEST_CASE("jump: run and exec through an inventory jump, direct is unreachable",
          "[ssh][jump][cli]") {
  JumpLab lab;
  std::string pb = lab.dir + "/p.toml";
  std::ofstream(pb) << "name = \"p\"\n[[step]]\nid = \"who\"\nkind = \"run\"\ncommand = \"echo "
                       "$SSH_CONNECTION\"\n";

  std::string inv = lab.inventory("");  // no jump: the target cannot be reached
  auto r =
      lab.ratchet("run " + pb + " -i " + inv + " -F none --transcript " + lab.dir + "/t0.jsonl");
  CHECK(r.code == 3);

  inv = lab.inventory("jump = \"" + lab.hop + "\"\n");
  r = lab.ratchet("run " + pb + " -i " + inv + " -F none --transcript " + lab.dir + "/t1.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  auto t = ratchet::transcript::read_transcript(lab.dir + "/t1.jsonl");
  bool connected = false, echoed = false;
  for (const auto& ev : t.events) {
    if (ev["event"] == "connect") connected = ev["port"] == lab.target.port();
    if (ev["event"] == "output" && ev.contains("data"))
      echoed = ev["data"].get<std::string>().find(
                   " 127.0.0.1 " + std::to_string(lab.target.port())) != std::string::npos;
  }
  CHECK(connected);
  CHECK(echoed);

  r = lab.ratchet("exec box -i " + inv + " -F none -- 'echo via jump'");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out == "via jump\n");
  CHECK(lab.jump.connections() == 2);
  CHECK(file_text(lab.jump.log())
            .find("target 127.0.0.1 port " + std::to_string(lab.target.port())) !=
        std::string::npos);

  r = lab.ratchet("hosts -i " + inv + " -F none --json");
  REQUIRE(r.code == 0);
  CHECK(json::parse(r.out)[0]["jump"] == lab.hop);

  // Several hosts through the same jump host at once: one connection to it, a channel each.
  std::ofstream(inv).close();  // emptied, then four hosts
  for (int i = 1; i <= 4; ++i)
    std::ofstream(inv, std::ios::app)
        << "[hosts.box" << i << "]\naddress = \"127.0.0.1\"\nport = " << lab.target.port()
        << "\nuser = \"root\"\nidentity = \"" << lab.target.client_key() << "\"\nknown_hosts = \""
        << lab.kh << "\"\njump = \"" << lab.hop << "\"\n";
  r = lab.ratchet("run " + barrier_playbook(lab.dir, 4) + " -i " + inv +
                  " -F none --forks 4 --transcript " + lab.dir + "/t2.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  int connects = 0, reused = 0;
  for (const auto& ev : ratchet::transcript::read_transcript(lab.dir + "/t2.jsonl").events) {
    connects += ev["event"] == "connect";
    reused += ev["event"] == "connect" && ev.value("jump_reused", false);
  }
  CHECK(connects == 4);
  CHECK(reused == 3);
  CHECK(lab.jump.connections() == 3);
}

TEST_CASE("jump: twelve hosts at --forks 12 share one connection to a jump host with MaxStartups 1",
          "[ssh][jump][cli]") {
  // The jump host drops every unauthenticated connection past the first
  // (MaxStartups 1:100:1): twelve connections at once would be reset. Its
  // MaxSessions 1 does not count forwarded channels.
  SshdHost target;
  SshdHost jump("SSHD_MAX_STARTUPS=1:100:1 SSHD_MAX_SESSIONS=1");
  std::ofstream(jump.dir() + "/authorized_keys/root", std::ios::app)
      << file_text(target.client_key() + ".pub");
  std::string dir = temp_dir("ratchet-jump-twelve");
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{dir};
  const std::string kh = dir + "/known_hosts";
  std::ofstream(kh) << target.known_hosts_line() << "\n" << jump.known_hosts_line() << "\n";
  const std::string hop = "root@127.0.0.1:" + std::to_string(jump.port());
  const std::string inv = dir + "/inventory.toml";
  {
    std::ofstream out(inv);
    for (int i = 1; i <= 12; ++i)  // twelve names for the one target sshd
      out << "[hosts.web" << i << "]\naddress = \"127.0.0.1\"\nport = " << target.port()
          << "\nuser = \"root\"\nidentity = \"" << target.client_key() << "\"\nknown_hosts = \""
          << kh << "\"\njump = \"" << hop << "\"\n";
  }
  auto r = run_sh(std::string(RATCHET_BINARY) + " run " + barrier_playbook(dir, 12) + " -i " + inv +
                  " -F none --forks 12 --transcript " + dir + "/t.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 0);

  int connects = 0, reused = 0, ok = 0, met = 0;
  for (const auto& ev : ratchet::transcript::read_transcript(dir + "/t.jsonl").events) {
    if (ev["event"] == "connect") {
      ++connects;
      reused += ev.value("jump_reused", false);
      CHECK(ev["via"] == json::array({hop}));
      CHECK_FALSE(ev.contains("retries"));  // nothing was reset
    }
    if (ev["event"] == "host_end") ok += ev["status"] == "ok";
    if (ev["event"] == "output" && ev.contains("data")) met += ev["data"] == "12\n";
  }
  CHECK(connects == 12);
  CHECK(ok == 12);
  CHECK(met == 12);  // all twelve were connected at once
  CHECK(reused == 11);

  // The jump sshd saw one connection, and one login on it. (Its log is
  // written by its own processes: wait for the line, then count.)
  const std::string log = jump.dir() + "/sshd.log";
  for (int i = 0; i < 100 && count_lines(log, "Accepted publickey for root") == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  INFO(file_text(log));
  CHECK(count_lines(log, "Accepted publickey for root") == 1);
  CHECK(count_lines(log, "past MaxStartups") == 0);  // and none it had to drop
  CHECK(count_lines(target.dir() + "/sshd.log", "Accepted publickey for root") == 12);
}

TEST_CASE("jump: ProxyJump from -F, an unknown hop key exits 4, a bad jump exits 2",
          "[ssh][jump][cli]") {
  JumpLab lab;
  std::string cfg = lab.dir + "/ssh_config";
  std::ofstream(cfg)
      << "Host box 127.0.0.1\n  ProxyJump bastion\n\nHost bastion\n  HostName 127.0.0.1\n  Port "
      << lab.jump.port() << "\n  User root\n";
  std::string inv = lab.inventory("");
  auto r = lab.ratchet("exec box -i " + inv + " -F " + cfg + " -- 'echo via ProxyJump'");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out == "via ProxyJump\n");

  r = lab.ratchet("hosts -i " + inv + " -F " + cfg);
  CHECK(r.code == 0);
  CHECK(r.out.find(" bastion ") != std::string::npos);  // the JUMP column: the ProxyJump as written

  // The hop's key missing from known_hosts: a host key failure (exit 4) naming the hop.
  std::ofstream(lab.kh) << lab.target.known_hosts_line() << "\n";
  r = lab.ratchet("exec box -i " + inv + " -F " + cfg + " -- true");
  CHECK(r.code == 4);
  CHECK(r.err.find("via bastion 127.0.0.1:" + std::to_string(lab.jump.port()) +
                   ": host key not in") != std::string::npos);
  std::string pb = lab.dir + "/p.toml";
  std::ofstream(pb) << "name = \"p\"\n[[step]]\nid = \"s\"\nkind = \"run\"\ncommand = \"true\"\n";
  r = lab.ratchet("run " + pb + " -i " + inv + " -F " + cfg + " --transcript " + lab.dir +
                  "/t.jsonl");
  CHECK(r.code == 4);

  // A malformed inventory jump is a load error: exit 2, nothing connects.
  inv = lab.inventory("jump = \"root@bastion:99999\"\n");
  r = lab.ratchet("plan " + pb + " -i " + inv + " -F " + cfg);
  CHECK(r.code == 2);
  CHECK(r.err.find("error: host `box`: jump `root@bastion:99999`: port must be 1..65535 (write jump = ") !=
        std::string::npos);
}
