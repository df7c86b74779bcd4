// configure_session (src/transport/ssh_session.cc): the ssh config applied to
// the host argument ssh(1) would get (the inventory address, else the name),
// with OpenSSH's own `ssh -G` as the oracle, and an inventory address that is
// a Host alias reaching a real sshd.
#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <sstream>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transport/jump_spec.h"
#include "transport/ssh_config_scan.h"
#include "transport/transport.h"

using namespace ratchet;
using namespace ratchet::transport;
using ratchet::testing::read_file;
using ratchet::testing::run_sh;
using ratchet::testing::SshdHost;
using ratchet::testing::temp_dir;
using ratchet::testing::write_file;

namespace {

/// One case of the corpus: `ssh -G -F config [-l user] [-p port] arg`.
struct Case {
  std::string arg;
  std::string user;  // the inventory's user ("" = none)
  int port = 0;      // the inventory's port (0 = none)
};

/// What ssh -G (and ssh -v for the expanded identity file) says.
struct Oracle {
  std::string hostname, user, identity, jump;
  int port = 0;
};

std::string ssh_flags(const std::string& config, const Case& c) {
  std::string f = " -F " + config;
  if (!c.user.empty()) f += " -l " + c.user;
  if (c.port) f += " -p " + std::to_string(c.port);
  return f + " '" + c.arg + "'";
}

/// ProxyJump text in ratchet's form (hop_text of each hop), "" for none.
std::string normal_jump(const std::string& spec) {
  std::vector<JumpHop> hops;
  std::string err, out;
  if (spec.empty() || !parse_jump_spec(spec, &hops, &err)) return spec;
  for (const auto& h : hops) out += (out.empty() ? "" : ",") + hop_text(h);
  return out;
}

Oracle ask_openssh(const std::string& config, const Case& c) {
  auto g = run_sh("ssh -G" + ssh_flags(config, c) + " </dev/null");
  INFO("ssh -G" << ssh_flags(config, c) << ": " << g.err);
  REQUIRE(g.code == 0);
  std::map<std::string, std::vector<std::string>> kv;
  std::istringstream in(g.out);
  for (std::string line; std::getline(in, line);) {
    auto sp = line.find(' ');
    if (sp != std::string::npos) kv[line.substr(0, sp)].push_back(line.substr(sp + 1));
  }
  Oracle o;
  o.hostname = kv["hostname"].at(0);
  o.port = std::stoi(kv["port"].at(0));
  o.user = kv["user"].at(0);
  if (!kv["proxyjump"].empty()) o.jump = normal_jump(kv["proxyjump"][0]);
  // ssh -G prints IdentityFile as written, OpenSSH's defaults when none is
  // set. The expanded first one comes from ssh -v, which loads the files once
  // "connected" (here to `true` as a ProxyCommand, which ends it at once).
  const std::vector<std::string> defaults{"~/.ssh/id_rsa",        "~/.ssh/id_ecdsa",
                                          "~/.ssh/id_ecdsa_sk",   "~/.ssh/id_ed25519",
                                          "~/.ssh/id_ed25519_sk", "~/.ssh/id_xmss",
                                          "~/.ssh/id_dsa"};
  if (kv["identityfile"] != defaults) {
    auto v = run_sh("ssh -v -o ProxyCommand=true -o BatchMode=yes" + ssh_flags(config, c) +
                    " true </dev/null 2>&1");
    auto at = v.out.find("identity file ");
    REQUIRE(at != std::string::npos);
    at += 14;
    o.identity = v.out.substr(at, v.out.find(" type ", at) - at);
  }
  return o;
}

std::string describe(const Oracle& o) {
  return o.hostname + " port " + std::to_string(o.port) + " user " + o.user + " identity " +
         o.identity + " jump " + o.jump;
}

}  // namespace

TEST_CASE("ratchet hosts and resolve_endpoint agree with ssh -G over a corpus of configs",
          "[ssh_config][oracle]") {
  const std::string dir = temp_dir("ratchet-oracle");
  const std::string me = local_user_name();
  std::filesystem::create_directories(dir + "/inc.d");
  write_file(dir + "/inc.d/10-a.conf", "Host inc-a\n  HostName A.example\n  User ua\n");
  write_file(dir + "/inc.d/20-all.conf", "IdentityFile ~/.ssh/inc_all\n");
  write_file(dir + "/inc.d/skip.txt", "Port 1\n");
  write_file(dir + "/b.conf", "HostName b.example\nProxyJump jb:2200\n");

  const std::vector<std::pair<std::string, std::vector<Case>>> corpus = {
      // Aliases, first value wins, inventory user and port win.
      {R"(Host web
  HostName 10.1.2.3
  Port 2201
  User deploy
  IdentityFile ~/.ssh/web_key
  ProxyJump ops@bastion:2222
Host db db-?
  HostName %h.db.internal
  IdentityFile ~/.ssh/id_%h_%r_%p
  IdentitiesOnly yes
Host *
  User fallback
  Port 2022
  IdentityFile ~/.ssh/all_%n
)",
       {{"web"}, {"db"}, {"db-2"}, {"db-22"}, {"other"}, {"web", "root", 2400}}},
      // Negation and the case of names.
      {R"(Host *.lab !db.lab
  HostName %h.internal
  Port 2100
Host Web
  HostName Upper.Example.ORG
  User upper
Host web
  User lower
)",
       {{"app.lab"}, {"db.lab"}, {"APP.LAB"}, {"Web"}, {"web"}, {"WEB"}}},
      // Match: originalhost with user, host after HostName, localuser, all, negation.
      {R"(Host gpu*
  HostName %h.gpu.lab
Match originalhost gpu* user )" + me + R"(
  Port 2300
  IdentityFile ~/.ssh/gpu_local
Match originalhost gpu* user deploy
  Port 2301
  ProxyJump jump-deploy
Match host *.GPU.lab !originalhost gpu9
  User gpuuser
Match localuser )" + me + R"(
  IdentityFile ~/.ssh/local_%u
Match all
  ProxyJump none
)",
       {{"gpu1"}, {"gpu1", "deploy"}, {"GPU1"}, {"gpu9"}, {"cpu1"}, {"gpu2", "other"}}},
      // Match user tests the config's User obtained so far.
      {R"(Host a
  User u1
Match user u1
  Port 9
Match !user u1
  Port 10
)",
       {{"a"}, {"a", "x"}, {"b"}}},
      // Include: a glob in order, and under a Host block.
      {"Include " + dir + "/inc.d/*.conf\nHost inc-b\n  Include " + dir +
           "/b.conf\nHost *\n  Port 2999\n",
       {{"inc-a"}, {"inc-b"}, {"other"}}},
      // Match final, and ProxyCommand / ProxyJump sharing one slot.
      {R"(Match final host b.example
  Port 8
Host a
  HostName B.example
Host b.example
  User ub
Host pc
  ProxyCommand nc %h %p
  ProxyJump j
Host pj
  ProxyJump none
Host *
  ProxyJump gw1,u@gw2:2202
)",
       {{"a"}, {"pc"}, {"pj"}, {"z"}}},
      // "=" and quotes; % tokens in IdentityFile.
      {R"(Host=eq
  HostName = 10.9.9.9
  Port=2299
  User "qu"
  IdentityFile "~/.ssh/with space"
Host tok
  HostName %h.example
  IdentityFile %d/.ssh/%u-%l-%L-%i-%k-%C-%r
)",
       {{"eq"}, {"tok"}, {"tok", "deploy", 2222}}},
  };

  int n = 0;
  for (const auto& [text, cases] : corpus) {
    const std::string cfg = dir + "/config" + std::to_string(n++);
    write_file(cfg, text);
    // The same hosts through `ratchet hosts`: an inventory whose address is the argument.
    std::string inv = dir + "/inv" + std::to_string(n) + ".toml";
    std::ostringstream toml;
    for (size_t i = 0; i < cases.size(); ++i) {
      toml << "[hosts.h" << i << "]\naddress = \"" << cases[i].arg << "\"\n";
      if (!cases[i].user.empty()) toml << "user = \"" << cases[i].user << "\"\n";
      if (cases[i].port) toml << "port = " << cases[i].port << "\n";
    }
    write_file(inv, toml.str());
    auto hosts = run_sh(std::string(RATCHET_BINARY) + " hosts -i " + inv + " -F " + cfg + " --json");
    INFO(text << "\nratchet hosts: " << hosts.err);
    REQUIRE(hosts.code == 0);
    auto rows = nlohmann::json::parse(hosts.out);
    REQUIRE(rows.size() == cases.size());

    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      Oracle o = ask_openssh(cfg, c);
      INFO("ssh -G" << ssh_flags(cfg, c) << " says " << describe(o));
      // resolve_endpoint, the host named by its argument (no inventory address) ...
      Endpoint ep;
      ep.name = c.arg;
      ep.user = c.user;
      ep.port = c.port;
      ep.ssh_config = cfg;
      ResolvedEndpoint r;
      auto err = resolve_endpoint(ep, &r);
      INFO((err ? err->message : ""));
      REQUIRE_FALSE(err);
      CHECK(r.address == o.hostname);
      CHECK(r.port == o.port);
      CHECK(r.user == o.user);
      CHECK(r.identity == o.identity);
      CHECK(r.jump == o.jump);
      // ... and `ratchet hosts`, the argument being the inventory address of another name.
      const auto& row = rows[i];
      CHECK(row["address"] == o.hostname);
      CHECK(row["port"] == o.port);
      CHECK(row["user"] == o.user);
      CHECK(row["identity"] == o.identity);
      CHECK(row["jump"] == o.jump);
    }
  }
}

TEST_CASE("an inventory address that is an ssh config alias resolves through its block and inventory keys win",
          "[ssh_config]") {
  const std::string dir = temp_dir("ratchet-alias");
  const std::string cfg = dir + "/config";
  write_file(cfg, R"(Host box
  HostName 10.0.0.1
Host alias
  HostName 192.0.2.7
  Port 2201
  User deploy
  IdentityFile ~/.ssh/alias_key
  IdentitiesOnly yes
  ProxyJump ops@bastion:2222
)");
  Endpoint ep;
  ep.name = "box";  // the inventory name: not what the config is matched on
  ep.address = "alias";
  ep.ssh_config = cfg;
  ResolvedEndpoint r;
  REQUIRE_FALSE(resolve_endpoint(ep, &r));
  CHECK(r.address == "192.0.2.7");
  CHECK(r.port == 2201);
  CHECK(r.user == "deploy");
  CHECK(r.identity == user_home() + "/.ssh/alias_key");
  CHECK(r.identities_only);
  CHECK(r.jump == "ops@bastion:2222");

  ep.port = 2300;
  ep.user = "root";
  ep.identity = "/k/inventory_key";
  ep.jump = "none";
  REQUIRE_FALSE(resolve_endpoint(ep, &r));
  CHECK(r.address == "192.0.2.7");
  CHECK(r.port == 2300);
  CHECK(r.user == "root");
  CHECK(r.identity == "/k/inventory_key");
  CHECK(r.jump.empty());

  ep = Endpoint{};  // no address: the name is the host argument
  ep.name = "box";
  ep.ssh_config = cfg;
  REQUIRE_FALSE(resolve_endpoint(ep, &r));
  CHECK(r.address == "10.0.0.1");
}

TEST_CASE("On the loopback sshd: an inventory address that is an ssh config alias connects",
          "[ssh][cli]") {
  SshdHost host;
  const std::string cfg = host.dir() + "/alias_config";
  write_file(cfg, "Host lab-alias\n  HostName 127.0.0.1\n  Port " + std::to_string(host.port()) +
                      "\n  User root\n  IdentityFile " + host.client_key() +
                      "\n  IdentitiesOnly yes\n");
  const std::string inv = host.dir() + "/alias_inventory.toml";
  write_file(inv, "[hosts.box]\naddress = \"lab-alias\"\n");
  const std::string common =
      " -i " + inv + " -F " + cfg + " --known-hosts " + host.known_hosts();
  auto r = run_sh(std::string(RATCHET_BINARY) + " exec box" + common +
                  " -- 'echo through the alias; whoami'");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out == "through the alias\nroot\n");

  r = run_sh(std::string(RATCHET_BINARY) + " hosts" + common + " --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto row = nlohmann::json::parse(r.out).at(0);
  CHECK(row["host"] == "box");
  CHECK(row["address"] == "127.0.0.1");
  CHECK(row["port"] == host.port());
  CHECK(row["identity"] == host.client_key());

  // The same through the transport: the transcript's address is what was dialled.
  Endpoint ep;
  ep.name = "box";
  ep.address = "lab-alias";
  ep.ssh_config = cfg;
  ep.known_hosts = host.known_hosts();
  auto t = make_ssh_transport(ep);
  ConnectInfo info;
  auto err = t->connect(&info);
  INFO((err ? err->message : ""));
  REQUIRE_FALSE(err);
  CHECK(info.address == "127.0.0.1");
  CHECK(info.port == host.port());
  CHECK(info.auth_method == "publickey (" + host.client_key() + ")");
}
