// Jump hosts against real sshds: the target listens on 127.0.0.1 inside a
// network namespace the test creates, so only a jump host serving in that
// namespace (tests/support/netns_fixture.h) can reach it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "support/netns_fixture.h"
#include "support/sshd_fixture.h"
#include "support/files.h"
#include "transport/transport.h"
#include "util/hash.h"

using namespace ratchet;
using namespace ratchet::transport;
using ratchet::testing::try_connect;
using ratchet::testing::read_file;
using ratchet::testing::entries;
using ratchet::testing::write_file;
using ratchet::testing::InetdSshd;
using ratchet::testing::NetNs;
using ratchet::testing::SshdHost;

namespace {


ExecRequest request(const std::string& command) {
  ExecRequest req;
  req.script = command;
  req.timeout = std::chrono::milliseconds(20'000);
  return req;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

/// The line sshd -i logs (LogLevel DEBUG1) for each channel it forwards.
std::string forwarded_to(int port) { return "target 127.0.0.1 port " + std::to_string(port); }

}  // namespace

TEST_CASE("jump: a target in a network namespace is reached only through the jump host",
          "[ssh][jump]") {
  NetNs ns;
  SshdHost target(ns.exec_prefix());  // 127.0.0.1:port() inside ns only
  InetdSshd jump(ns);                 // 127.0.0.1:port() here, serving inside ns
  jump.authorize(target.client_key() + ".pub");
  Endpoint ep = target.endpoint();
  ep.known_hosts = target.dir() + "/known_hosts_both";
  write_file(ep.known_hosts, target.known_hosts_line() + "\n" + jump.known_hosts_line() + "\n");

  auto direct = try_connect(ep);  // nothing listens on the target's port out here
  REQUIRE(direct);
  CHECK(direct->kind == FailureKind::refused);
  CHECK(jump.connections() == 0);

  const size_t fds_before = entries("/proc/self/fd");
  const size_t threads_before = entries("/proc/self/task");
  const std::string hop = "root@127.0.0.1:" + std::to_string(jump.port());
  ep.jump = hop;
  {
    auto t = make_ssh_transport(ep);
    ConnectInfo info;
    auto err = t->connect(&info);
    INFO((err ? err->message : ""));
    REQUIRE_FALSE(err);
    CHECK(info.via == std::vector<std::string>{hop});
    CHECK(info.address == "127.0.0.1");
    CHECK(info.port == target.port());
    CHECK(starts_with(info.fingerprint, "SHA256:"));
    CHECK(entries("/proc/self/task") == threads_before + 1);  // one pump

    // The target sees a client inside its own namespace: the jump host.
    auto r = t->exec(request("echo $SSH_CONNECTION"));
    CHECK(r.exit_code == 0);
    CHECK(r.out.data.find(" 127.0.0.1 " + std::to_string(target.port()) + "\n") !=
          std::string::npos);

    // Megabytes both ways through the pump, several channels on one session.
    std::string input;
    for (int i = 0; input.size() < (3u << 20); ++i) input += std::to_string(i) + "\n";
    ExecRequest req = request("sha256sum");
    req.stdin_data = input;
    r = t->exec(req);
    CHECK(r.exit_code == 0);
    CHECK(r.out.data.substr(0, 64) == util::sha256_hex(input));
    r = t->exec(request("head -c 5000000 /dev/zero"));
    CHECK(r.exit_code == 0);
    CHECK(r.out.total == 5000000);
    CHECK(r.error.empty());
    t->close();
    CHECK(entries("/proc/self/task") == threads_before);  // the pump thread is joined
    CHECK(entries("/proc/self/fd") == fds_before);        // and every socket closed
    t->close();                                           // twice is fine
  }
  CHECK(jump.connections() == 1);
  CHECK(read_file(jump.log()).find(forwarded_to(target.port())) != std::string::npos);

  // Destroyed while connected, without close(): the destructor stops it all.
  {
    auto t = make_ssh_transport(ep);
    ConnectInfo info;
    REQUIRE_FALSE(t->connect(&info));
    CHECK(t->exec(request("true")).exit_code == 0);
  }
  CHECK(entries("/proc/self/task") == threads_before);
  CHECK(entries("/proc/self/fd") == fds_before);
}

TEST_CASE("jump: a two-hop ProxyJump chain from an ssh config file", "[ssh][jump]") {
  NetNs outer, inner;
  SshdHost target(inner.exec_prefix());
  InetdSshd j2(inner, &outer);  // reachable only from `outer`, dials inside `inner`
  InetdSshd j1(outer);          // reachable from here, dials inside `outer`
  REQUIRE(j1.port() != j2.port());
  REQUIRE(j2.port() != target.port());  // distinct known_hosts names
  for (InetdSshd* j : {&j1, &j2}) j->authorize(target.client_key() + ".pub");
  const std::string kh = target.dir() + "/known_hosts_all";
  write_file(kh, target.known_hosts_line() + "\n" + j1.known_hosts_line() + "\n" +
                     j2.known_hosts_line() + "\n");
  auto config = [&](const std::string& lab_jump, const std::string& j2_jump) {
    std::string path = target.dir() + "/ssh_config";
    write_file(path, "Host lab\n  HostName 127.0.0.1\n  Port " + std::to_string(target.port()) +
                         "\n  ProxyJump " + lab_jump +
                         "\n\nHost j1\n  HostName 127.0.0.1\n  Port " + std::to_string(j1.port()) +
                         "\n\nHost j2\n  HostName 127.0.0.1\n  Port " + std::to_string(j2.port()) +
                         "\n" + j2_jump + "\nHost *\n  User root\n" + "  IdentityFile " +
                         target.client_key() + "\n");
    return path;
  };
  Endpoint ep;
  ep.name = "lab";
  ep.known_hosts = kh;
  ep.connect_timeout = std::chrono::milliseconds(5000);
  const std::vector<std::string> chain{"root@127.0.0.1:" + std::to_string(j1.port()),
                                       "root@127.0.0.1:" + std::to_string(j2.port())};

  SECTION("ProxyJump j1,j2: the hops in the order written") { ep.ssh_config = config("j1,j2", ""); }
  SECTION("ProxyJump j2, and j2's own ProxyJump j1 (followed for the first hop, as ssh -J does)") {
    ep.ssh_config = config("j2", "  ProxyJump j1\n");
  }
  ResolvedEndpoint r;
  REQUIRE_FALSE(resolve_endpoint(ep, &r));
  CHECK(r.proxy.empty());  // libssh's `ssh -W` command is gone
  auto t = make_ssh_transport(ep);
  ConnectInfo info;
  auto err = t->connect(&info);
  INFO((err ? err->message : ""));
  REQUIRE_FALSE(err);
  CHECK(info.via == chain);
  CHECK(info.port == target.port());
  auto out = t->exec(request("echo through two hops"));
  CHECK(out.out.data == "through two hops\n");
  t->close();
  CHECK(read_file(j1.log()).find(forwarded_to(j2.port())) != std::string::npos);
  CHECK(read_file(j2.log()).find(forwarded_to(target.port())) != std::string::npos);

  // j2 is not reachable from here at all: only j1 gets to it.
  Endpoint to_j2;
  to_j2.name = "127.0.0.1";
  to_j2.port = j2.port();
  to_j2.ssh_config = "none";
  auto direct = try_connect(to_j2);
  REQUIRE(direct);
  CHECK(direct->kind == FailureKind::refused);
}

TEST_CASE("jump: host keys of the hop and of the target are both checked", "[ssh][jump]") {
  NetNs ns;
  SshdHost target(ns.exec_prefix());
  InetdSshd jump(ns);
  jump.authorize(target.client_key() + ".pub");
  Endpoint ep = target.endpoint();
  ep.known_hosts = target.dir() + "/kh";
  ep.jump = "root@127.0.0.1:" + std::to_string(jump.port());
  const std::string hop_where = "127.0.0.1:" + std::to_string(jump.port());
  const std::string target_where = "127.0.0.1:" + std::to_string(target.port());
  const std::string jump_key = jump.known_hosts_line().substr(jump.known_hosts_line().find(' '));

  // The hop's key is unknown: refused before anything reaches the target.
  write_file(ep.known_hosts, target.known_hosts_line() + "\n");
  auto err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->kind == FailureKind::host_key_unknown);
  CHECK(starts_with(err->message, "via " + hop_where + ": host key not in " + ep.known_hosts));
  CHECK(read_file(jump.log()).find(forwarded_to(target.port())) == std::string::npos);

  // The hop is known, the target is not: the target's own key, own name and port.
  write_file(ep.known_hosts, jump.known_hosts_line() + "\n");
  err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->kind == FailureKind::host_key_unknown);
  CHECK(starts_with(err->message, target_where + ": host key not in " + ep.known_hosts));

  // Another key listed under the target's name: changed, even with accept_new.
  write_file(ep.known_hosts, jump.known_hosts_line() + "\n[127.0.0.1]:" +
                                 std::to_string(target.port()) + jump_key + "\n");
  ep.accept_new = true;
  err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->kind == FailureKind::host_key_changed);
  CHECK(starts_with(err->message, target_where + ": HOST KEY CHANGED"));

  // The same for the hop.
  std::string target_key = target.known_hosts_line().substr(target.known_hosts_line().find(' '));
  write_file(ep.known_hosts, "[127.0.0.1]:" + std::to_string(jump.port()) + target_key + "\n");
  err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->kind == FailureKind::host_key_changed);
  CHECK(starts_with(err->message, "via " + hop_where + ": HOST KEY CHANGED"));

  // accept_new with an empty file records each key under its own name.
  write_file(ep.known_hosts, "");
  err = try_connect(ep);
  INFO((err ? err->message : ""));
  REQUIRE_FALSE(err);
  std::string recorded = read_file(ep.known_hosts);
  CHECK(recorded.find(jump.known_hosts_line() + "\n") != std::string::npos);
  CHECK(recorded.find(target.known_hosts_line() + "\n") != std::string::npos);
}

TEST_CASE("jump: ProxyJump none, the inventory's jump wins, a refused hop is named",
          "[ssh][jump]") {
  SshdHost host;
  const int closed = ratchet::testing::free_port();
  const std::string cfg = host.dir() + "/ssh_config";
  write_file(cfg,
             "Host lab\n  HostName 127.0.0.1\n  ProxyJump none\n\nHost pc\n  ProxyCommand nc %h %p\n\n"
             "Host other\n  HostName 127.0.0.1\n\nHost *\n"
             "  ProxyJump root@127.0.0.1:" +
                 std::to_string(closed) + "\n");
  // The config is matched against the inventory address when there is one:
  // without it, against the name ("lab"), whose block names the address.
  Endpoint ep = host.endpoint();
  ep.address.clear();
  ep.ssh_config = cfg;
  ConnectInfo info;
  auto err = try_connect(ep, &info);
  INFO((err ? err->message : ""));
  REQUIRE_FALSE(err);  // ProxyJump none: straight to the host, Host * not applied
  CHECK(info.via.empty());
  ResolvedEndpoint r;
  REQUIRE_FALSE(resolve_endpoint(ep, &r));
  CHECK(r.jump.empty());

  ep.name = "other";  // matches only Host *: its jump is refused
  REQUIRE_FALSE(resolve_endpoint(ep, &r));
  CHECK(r.jump == "root@127.0.0.1:" + std::to_string(closed));
  CHECK(r.proxy.empty());
  err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->kind == FailureKind::refused);
  CHECK(err->message == "via 127.0.0.1:" + std::to_string(closed) +
                            ": connection refused; is sshd running and listening on port " +
                            std::to_string(closed) + "?");

  ep.jump = "none";  // the inventory says direct: wins over the config
  err = try_connect(ep, &info);
  INFO((err ? err->message : ""));
  CHECK_FALSE(err);
  CHECK(info.via.empty());

  const int other_closed = ratchet::testing::free_port();
  ep.jump = "gw@127.0.0.1:" + std::to_string(other_closed);  // the inventory's jump wins
  REQUIRE_FALSE(resolve_endpoint(ep, &r));
  CHECK(r.jump == ep.jump);
  // ... but that first hop matches Host * too, and its own ProxyJump is followed (as ssh -J does).
  err = try_connect(ep);
  REQUIRE(err);
  CHECK(starts_with(err->message,
                    "via 127.0.0.1:" + std::to_string(closed) + ": connection refused"));
  write_file(cfg, "Host other\n  ProxyJump root@127.0.0.1:" + std::to_string(closed) + "\n");
  err = try_connect(ep);
  REQUIRE(err);
  CHECK(starts_with(err->message,
                    "via 127.0.0.1:" + std::to_string(other_closed) + ": connection refused"));
  write_file(cfg, "Host lab\n  HostName 127.0.0.1\n  ProxyJump none\n\nHost pc\n  ProxyCommand nc %h %p\n");

  ep.jump.clear();
  ep.name = "pc";  // a ProxyCommand the user wrote stays (libssh runs it)
  REQUIRE_FALSE(resolve_endpoint(ep, &r));
  CHECK(r.jump.empty());
  CHECK(r.proxy == "nc %h %p");

  // A host never jumps through itself: a `Host *` ProxyJump naming it means direct.
  write_file(cfg, "Host *\n  ProxyJump root@127.0.0.1:" + std::to_string(host.port()) + "\n");
  ep = host.endpoint();
  ep.ssh_config = cfg;
  err = try_connect(ep, &info);
  INFO((err ? err->message : ""));
  REQUIRE_FALSE(err);
  CHECK(info.via.empty());
}

TEST_CASE("jump: a hop that cannot reach the next host is named with the cause", "[ssh][jump]") {
  NetNs ns;
  InetdSshd jump(ns);
  Endpoint ep;
  ep.name = "ghost";
  ep.address = "127.0.0.1";
  ep.port = ratchet::testing::free_port();  // nothing listens there inside ns
  ep.user = "root";
  ep.identity = jump.client_key();
  ep.known_hosts = jump.dir() + "/kh";
  write_file(ep.known_hosts, jump.known_hosts_line() + "\n");
  ep.ssh_config = "none";
  ep.jump = "root@127.0.0.1:" + std::to_string(jump.port());
  const size_t threads_before = entries("/proc/self/task");
  auto err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->kind == FailureKind::refused);
  CHECK(starts_with(err->message, "via 127.0.0.1:" + std::to_string(jump.port()) +
                                      ": cannot open a channel to 127.0.0.1:" +
                                      std::to_string(ep.port) + " through it: "));
  CHECK(err->message.find("Connection refused") != std::string::npos);  // the jump sshd's reason
  CHECK(entries("/proc/self/task") == threads_before);
}

TEST_CASE("jump: a jump host that dies mid-run fails the next command at once", "[ssh][jump]") {
  NetNs ns;
  SshdHost target(ns.exec_prefix());
  InetdSshd jump(ns);
  jump.authorize(target.client_key() + ".pub");
  Endpoint ep = target.endpoint();
  ep.known_hosts = target.dir() + "/kh";
  write_file(ep.known_hosts, target.known_hosts_line() + "\n" + jump.known_hosts_line() + "\n");
  ep.jump = "root@127.0.0.1:" + std::to_string(jump.port());
  const size_t threads_before = entries("/proc/self/task");
  auto t = make_ssh_transport(ep);
  ConnectInfo info;
  REQUIRE_FALSE(t->connect(&info));
  REQUIRE(t->exec(request("true")).exit_code == 0);
  jump.drop_connections();
  auto start = std::chrono::steady_clock::now();
  auto r = t->exec(request("sleep 30"));
  CHECK_FALSE(r.error.empty());  // a transport failure, not a result of the command
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  t->close();
  CHECK(entries("/proc/self/task") == threads_before);
}
