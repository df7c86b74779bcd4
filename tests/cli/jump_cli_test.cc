// The ratchet binary through a jump host: inventory `jump` and ssh config
// ProxyJump for run, exec and hosts; exit codes of hop failures. The target
// listens inside a network namespace only the jump host serves in.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

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

  // Several hosts through the same jump host at once: a chain (and pump thread) each.
  std::ofstream(inv).close();  // emptied, then four hosts
  for (int i = 1; i <= 4; ++i)
    std::ofstream(inv, std::ios::app)
        << "[hosts.box" << i << "]\naddress = \"127.0.0.1\"\nport = " << lab.target.port()
        << "\nuser = \"root\"\nidentity = \"" << lab.target.client_key() << "\"\nknown_hosts = \""
        << lab.kh << "\"\njump = \"" << lab.hop << "\"\n";
  r = lab.ratchet("run " + pb + " -i " + inv + " -F none --forks 4 --transcript " + lab.dir +
                  "/t2.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  int connects = 0;
  for (const auto& ev : ratchet::transcript::read_transcript(lab.dir + "/t2.jsonl").events)
    connects += ev["event"] == "connect";
  CHECK(connects == 4);
  CHECK(lab.jump.connections() == 6);
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
