// ssh_config(5) IdentitiesOnly against a real sshd and a real ssh-agent that
// the tests start (tests/support/ssh_agent_fixture.h): with `yes`, no agent key
// is offered but those of the configured files; with `no`, the agent is used
// as before. Jump hops follow their own Host block.
#include <catch2/catch.hpp>
#include <fstream>

#include "support/ssh_agent_fixture.h"
#include "support/sshd_fixture.h"
#include "support/files.h"
#include "transport/transport.h"

using namespace ratchet;
using namespace ratchet::transport;
using ratchet::testing::try_connect;
using ratchet::testing::read_file;
using ratchet::testing::write_file;
using ratchet::testing::run_local;
using ratchet::testing::ScopedEnv;
using ratchet::testing::SshAgent;
using ratchet::testing::SshdHost;

namespace {

/// The Host block that makes "lab" the loopback sshd (its port is the endpoint's).
const std::string kLab = "Host lab\n  HostName 127.0.0.1\n\n";


/// A fresh unencrypted ed25519 key pair under `dir`; returns the private key path.
std::string new_key(const std::string& dir, const std::string& name) {
  std::string path = dir + "/" + name;
  int status = -1;
  run_local("ssh-keygen -q -t ed25519 -N '' -C " + name + " -f " + path + " </dev/null", &status);
  REQUIRE(status == 0);
  return path;
}

/// Puts a passphrase on the private key file `key` (its .pub stays as it is).
void lock_key(const std::string& key) {
  int status = -1;
  run_local("ssh-keygen -q -p -P '' -N 'not-typed-by-anyone' -f " + key + " </dev/null", &status);
  REQUIRE(status == 0);
}

/// Adds `key`.pub to the root logins `host` accepts.
void authorize(const SshdHost& host, const std::string& key) {
  std::ofstream(host.dir() + "/authorized_keys/root", std::ios::app) << read_file(key + ".pub");
}

bool mentions_agent(const std::vector<std::string>& methods) {
  for (const auto& m : methods)
    if (m.find("agent") != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

/// An endpoint for `host` named "lab" that reads `config` and has no identity
/// of its own (so only the agent, the config and default keys remain). It has
/// no inventory address either: the config is matched on "lab" (a config
/// written for it begins with kLab, which says where "lab" is).
Endpoint lab_endpoint(const SshdHost& host, const std::string& config) {
  Endpoint ep = host.endpoint();
  ep.address = "";
  ep.identity = "";
  ep.ssh_config = config;
  return ep;
}

}  // namespace

TEST_CASE("IdentitiesOnly yes: the agent's key is not offered, a wrong IdentityFile fails",
          "[ssh][identities_only]") {
  SshdHost host;
  SshAgent agent;
  agent.add(host.client_key());  // the key the server accepts: held only by the agent
  ScopedEnv sock("SSH_AUTH_SOCK", agent.socket());
  const std::string stranger = new_key(host.dir(), "stranger");
  const std::string cfg = host.dir() + "/ssh_config";
  Endpoint ep = lab_endpoint(host, cfg);

  SECTION("yes: authentication fails, and what was tried names no agent") {
    write_file(cfg, kLab + "Host lab\n  IdentitiesOnly yes\n  IdentityFile " + stranger + "\n");
    auto err = try_connect(ep);
    REQUIRE(err);
    CHECK(err->kind == FailureKind::auth);
    INFO(joined(err->methods_tried));
    CHECK(err->methods_tried == std::vector<std::string>{"publickey (" + stranger + ")"});
    CHECK_FALSE(mentions_agent(err->methods_tried));
    CHECK(err->message.find("127.0.0.1:" + std::to_string(host.port()) +
                            ": authentication as root failed (tried: publickey (" + stranger +
                            "));") == 0);
    CHECK(err->message.find("IdentitiesOnly yes") != std::string::npos);
    // ratchet hosts sees the same.
    ResolvedEndpoint r;
    REQUIRE_FALSE(resolve_endpoint(ep, &r));
    CHECK(r.identities_only);
    CHECK(r.identity == stranger);
  }
  SECTION("no: the agent is used as before") {
    write_file(cfg, kLab + "Host lab\n  IdentitiesOnly no\n  IdentityFile " + stranger + "\n");
    ConnectInfo info;
    auto err = try_connect(ep, &info);
    INFO((err ? err->message : ""));
    REQUIRE_FALSE(err);  // the stranger key is not authorized: the agent's key logged in
    CHECK(info.auth_method.find("agent") != std::string::npos);
    ResolvedEndpoint r;
    REQUIRE_FALSE(resolve_endpoint(ep, &r));
    CHECK_FALSE(r.identities_only);
  }
  SECTION("a block that does not apply (negated pattern) changes nothing") {
    write_file(cfg, kLab + "Host * !lab\n  IdentitiesOnly yes\n  IdentityFile " + stranger + "\n");
    auto err = try_connect(ep);
    INFO((err ? err->message : ""));
    CHECK_FALSE(err);
  }
  SECTION("the inventory identity is still offered first, as ssh -i is") {
    write_file(cfg, kLab + "Host l*\n  IdentitiesOnly yes\n  IdentityFile " + stranger + "\n");
    ep.identity = host.client_key();
    ConnectInfo info;
    auto err = try_connect(ep, &info);
    INFO((err ? err->message : ""));
    REQUIRE_FALSE(err);
    CHECK(info.auth_method == "publickey (" + host.client_key() + ")");
  }
}

TEST_CASE("IdentitiesOnly yes: a listed key held by the agent is signed by the agent, alone",
          "[ssh][identities_only]") {
  SshdHost host;
  SshAgent agent;
  agent.add(host.client_key());  // accepted by the server, but not listed
  const std::string listed = new_key(host.dir(), "listed");
  agent.add(listed);
  lock_key(listed);  // ratchet cannot read the file itself: only the agent can sign
  ScopedEnv sock("SSH_AUTH_SOCK", agent.socket());
  const std::string cfg = host.dir() + "/ssh_config";
  write_file(cfg, kLab + "Host lab\n  IdentitiesOnly yes\n  IdentityFile " + listed + "\n");
  Endpoint ep = lab_endpoint(host, cfg);

  // The listed key is not authorized yet: the agent's other key, which would
  // log in, must not be offered.
  auto err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->kind == FailureKind::auth);
  CHECK(err->methods_tried == std::vector<std::string>{"publickey (agent: " + listed + ")"});

  authorize(host, listed);
  ConnectInfo info;
  err = try_connect(ep, &info);
  INFO((err ? err->message : ""));
  REQUIRE_FALSE(err);
  CHECK(info.auth_method == "publickey (agent: " + listed + ")");
  auto t = make_ssh_transport(ep);
  REQUIRE_FALSE(t->connect(nullptr));
  ExecRequest req;
  req.script = "echo signed-by-agent";
  auto r = t->exec(req);
  CHECK(r.out.data == "signed-by-agent\n");

  // Without the agent the locked file is reported as such.
  ScopedEnv no_agent("SSH_AUTH_SOCK", "");
  err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->methods_tried ==
        std::vector<std::string>{"publickey (" + listed + ": protected by a passphrase, or not a private key)"});
}

TEST_CASE("IdentitiesOnly applies to each jump hop through its own Host block",
          "[ssh][identities_only][jump]") {
  SshdHost target;
  SshdHost jump;
  authorize(jump, target.client_key());  // one key for both, held by the agent
  SshAgent agent;
  agent.add(target.client_key());
  ScopedEnv sock("SSH_AUTH_SOCK", agent.socket());
  const std::string stranger = new_key(target.dir(), "stranger");
  const std::string cfg = target.dir() + "/ssh_config";
  Endpoint ep = lab_endpoint(target, cfg);
  ep.known_hosts = target.dir() + "/known_hosts_both";
  write_file(ep.known_hosts, target.known_hosts_line() + "\n" + jump.known_hosts_line() + "\n");
  const std::string hop_block = "Host hop\n  HostName 127.0.0.1\n  Port " +
                                std::to_string(jump.port()) + "\n  User root\n";
  const std::string lab_block = "Host lab\n  ProxyJump hop\n";
  const std::string only = "  IdentitiesOnly yes\n  IdentityFile " + stranger + "\n";
  const std::string jump_where = "127.0.0.1:" + std::to_string(jump.port());
  const std::string target_where = "127.0.0.1:" + std::to_string(target.port());

  SECTION("the hop's block says yes: the hop refuses, the agent is not asked") {
    write_file(cfg, kLab + hop_block + only + lab_block);
    auto err = try_connect(ep);
    REQUIRE(err);
    CHECK(err->kind == FailureKind::auth);
    CHECK(err->message.find("via hop " + jump_where + ": authentication as root failed") == 0);
    CHECK(err->methods_tried == std::vector<std::string>{"publickey (" + stranger + ")"});
  }
  SECTION("the target's block says yes: the hop uses the agent, the target refuses") {
    write_file(cfg, kLab + hop_block + lab_block + only);
    auto err = try_connect(ep);
    REQUIRE(err);
    CHECK(err->kind == FailureKind::auth);
    CHECK(err->message.find(target_where + ": authentication as root failed") == 0);
    CHECK_FALSE(mentions_agent(err->methods_tried));
  }
  SECTION("neither says yes: both log in through the agent") {
    write_file(cfg, kLab + hop_block + lab_block);
    ConnectInfo info;
    auto err = try_connect(ep, &info);
    INFO((err ? err->message : ""));
    REQUIRE_FALSE(err);
    CHECK(info.via == std::vector<std::string>{"root@" + jump_where});
    CHECK(info.auth_method.find("agent") != std::string::npos);
  }
}
