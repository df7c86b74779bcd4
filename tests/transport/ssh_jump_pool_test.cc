// The pool of jump hop connections against real sshds: targets behind one
// jump host share one connection to it (a channel each), a hop lives while a
// transport uses it, a two-hop chain shares both hops, and a hop that died is
// replaced by the next connect. The target listens inside a network namespace
// only the jump hosts serve in (tests/support/netns_fixture.h).
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "support/files.h"
#include "support/netns_fixture.h"
#include "support/sshd_fixture.h"
#include "transport/transport.h"

using namespace ratchet;
using namespace ratchet::transport;
using ratchet::testing::InetdSshd;
using ratchet::testing::NetNs;
using ratchet::testing::SshdHost;
using ratchet::testing::entries;
using ratchet::testing::write_file;

namespace {

ExecRequest request(const std::string& command) {
  ExecRequest req;
  req.script = command;
  req.timeout = std::chrono::milliseconds(20'000);
  return req;
}

/// Polls `count` until it equals `want` (at most 5 s): threads end and
/// sockets close a moment after the call that let them go returned.
size_t settles_to(const std::function<size_t()>& count, size_t want) {
  size_t n = count();
  for (int i = 0; i < 100 && n != want; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    n = count();
  }
  return n;
}

size_t threads() { return entries("/proc/self/task"); }
size_t fds() { return entries("/proc/self/fd"); }

/// A target in a namespace of its own and one jump host serving in it.
struct OneHopLab {
  NetNs ns;
  SshdHost target{ns.exec_prefix()};
  InetdSshd jump{ns};
  Endpoint ep;
  OneHopLab() {
    jump.authorize(target.client_key() + ".pub");
    ep = target.endpoint();
    ep.known_hosts = target.dir() + "/kh";
    write_file(ep.known_hosts, target.known_hosts_line() + "\n" + jump.known_hosts_line() + "\n");
    ep.jump = "root@127.0.0.1:" + std::to_string(jump.port());
  }
};

}  // namespace

TEST_CASE("jump pool: targets behind one jump host share one connection to it", "[ssh][jump]") {
  OneHopLab lab;
  const size_t threads_before = threads();
  const size_t fds_before = fds();
  {
    // Three at once, as --forks does: each connect on its own thread.
    std::vector<std::unique_ptr<Transport>> ts;
    std::vector<ConnectInfo> infos(3);
    std::vector<std::optional<ConnectError>> errs(3);
    for (int i = 0; i < 3; ++i) ts.push_back(make_ssh_transport(lab.ep));
    std::vector<std::thread> connecting;
    for (int i = 0; i < 3; ++i)
      connecting.emplace_back([&, i] { errs[i] = ts[i]->connect(&infos[i]); });
    for (auto& th : connecting) th.join();
    int reused = 0;
    for (int i = 0; i < 3; ++i) {
      INFO((errs[i] ? errs[i]->message : ""));
      REQUIRE_FALSE(errs[i]);
      CHECK(infos[i].via == std::vector<std::string>{lab.ep.jump});
      reused += infos[i].jump_reused;
    }
    CHECK(reused == 2);  // one opened the connection, two rode on it
    CHECK(lab.jump.connections() == 1);
    CHECK(threads() == threads_before + 1);  // one thread serves every channel of the hop

    // Channels of one connection carry each target's own session, in parallel.
    std::vector<ExecResult> out(3);
    std::vector<std::thread> running;
    for (int i = 0; i < 3; ++i)
      running.emplace_back(
          [&, i] { out[i] = ts[i]->exec(request("head -c 2000000 /dev/zero | wc -c")); });
    for (auto& th : running) th.join();
    for (auto& r : out) {
      CHECK(r.exit_code == 0);
      CHECK(r.out.data == "2000000\n");
    }

    // One host done: the others keep the connection, and a new host reuses it.
    ts[0]->close();
    CHECK(ts[1]->exec(request("echo still")).out.data == "still\n");
    ConnectInfo info;
    REQUIRE_FALSE(ts[0]->connect(&info));
    CHECK(info.jump_reused);
    CHECK(lab.jump.connections() == 1);
    for (auto& t : ts) t->close();
    // The last one gone: the hop's thread stops and its session is freed.
    CHECK(settles_to(threads, threads_before) == threads_before);
    CHECK(settles_to(fds, fds_before) == fds_before);
  }

  // Hosts one after another: each connects the hop anew and frees it again.
  for (int i = 0; i < 2; ++i) {
    ConnectInfo info;
    auto t = make_ssh_transport(lab.ep);
    REQUIRE_FALSE(t->connect(&info));
    CHECK_FALSE(info.jump_reused);
    CHECK(t->exec(request("true")).exit_code == 0);
  }
  CHECK(lab.jump.connections() == 3);
  CHECK(threads() == threads_before);
  CHECK(fds() == fds_before);

  // Other settings (here: the connect timeout) make another connection.
  {
    auto a = make_ssh_transport(lab.ep);
    Endpoint other = lab.ep;
    other.connect_timeout = std::chrono::milliseconds(6000);
    auto b = make_ssh_transport(other);
    ConnectInfo ia, ib;
    REQUIRE_FALSE(a->connect(&ia));
    REQUIRE_FALSE(b->connect(&ib));
    CHECK_FALSE(ib.jump_reused);
    CHECK(lab.jump.connections() == 5);
    CHECK(threads() == threads_before + 2);
  }
  CHECK(threads() == threads_before);
}

TEST_CASE("jump pool: a jump host that dies between hosts makes the next host reconnect",
          "[ssh][jump]") {
  OneHopLab lab;
  const size_t threads_before = threads();
  const size_t fds_before = fds();
  {
    auto first = make_ssh_transport(lab.ep);
    ConnectInfo info;
    REQUIRE_FALSE(first->connect(&info));
    REQUIRE(first->exec(request("true")).exit_code == 0);
    lab.jump.drop_connections();  // the bastion's side of the shared connection dies

    // At once, before anything noticed: the dead connection is not handed out.
    auto start = std::chrono::steady_clock::now();
    auto second = make_ssh_transport(lab.ep);
    auto err = second->connect(&info);
    INFO((err ? err->message : ""));
    REQUIRE_FALSE(err);
    CHECK_FALSE(info.jump_reused);
    CHECK(lab.jump.connections() == 2);
    CHECK(second->exec(request("echo again")).out.data == "again\n");

    // The host still on the dead one fails its next command at once.
    auto r = first->exec(request("sleep 30"));
    CHECK_FALSE(r.error.empty());
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    CHECK(threads() == threads_before + 1);  // the dead hop's thread ended already
    first->close();
    CHECK(second->exec(request("echo alive")).out.data == "alive\n");
  }
  CHECK(threads() == threads_before);
  CHECK(fds() == fds_before);

  // The jump host gone for good: a clear error, never a hang.
  auto t = make_ssh_transport(lab.ep);
  {
    ConnectInfo info;
    REQUIRE_FALSE(t->connect(&info));
  }
  lab.jump.drop_connections();
  auto r = t->exec(request("true"));
  CHECK_FALSE(r.error.empty());
  t->close();
  CHECK(threads() == threads_before);
}

TEST_CASE("jump pool: both hops of a two-hop chain are shared and freed last hop first",
          "[ssh][jump]") {
  NetNs outer, inner;
  SshdHost target(inner.exec_prefix());
  InetdSshd j2(inner, &outer);  // reachable only from `outer`, dials inside `inner`
  InetdSshd j1(outer);          // reachable from here, dials inside `outer`
  for (InetdSshd* j : {&j1, &j2}) j->authorize(target.client_key() + ".pub");
  Endpoint ep = target.endpoint();
  ep.known_hosts = target.dir() + "/kh";
  write_file(ep.known_hosts, target.known_hosts_line() + "\n" + j1.known_hosts_line() + "\n" +
                                 j2.known_hosts_line() + "\n");
  const std::string hop1 = "root@127.0.0.1:" + std::to_string(j1.port());
  const std::string hop2 = "root@127.0.0.1:" + std::to_string(j2.port());
  ep.jump = hop1 + "," + hop2;
  const size_t threads_before = threads();
  const size_t fds_before = fds();
  {
    auto a = make_ssh_transport(ep);
    auto b = make_ssh_transport(ep);
    ConnectInfo ia, ib;
    auto err = a->connect(&ia);
    INFO((err ? err->message : ""));
    REQUIRE_FALSE(err);
    REQUIRE_FALSE(b->connect(&ib));
    CHECK(ia.via == std::vector<std::string>{hop1, hop2});
    CHECK(ib.via == ia.via);
    CHECK_FALSE(ia.jump_reused);
    CHECK(ib.jump_reused);
    CHECK(j1.connections() == 1);
    CHECK(j2.connections() == 1);
    CHECK(threads() == threads_before + 2);  // a thread per hop

    // Only the first hop in common: j2's own connection, on j1's shared one.
    Endpoint one_hop = ep;
    one_hop.jump = hop1;
    one_hop.address = "127.0.0.1";
    one_hop.port = j2.port();
    auto c = make_ssh_transport(one_hop);
    ConnectInfo ic;
    err = c->connect(&ic);
    INFO((err ? err->message : ""));
    REQUIRE_FALSE(err);
    CHECK(ic.jump_reused);
    CHECK(j1.connections() == 1);
    CHECK(j2.connections() == 2);
    CHECK(c->exec(request("echo on j2")).out.data == "on j2\n");

    CHECK(a->exec(request("echo a")).out.data == "a\n");
    a->close();
    CHECK(b->exec(request("echo b")).out.data == "b\n");
    b->close();
    CHECK(threads() == threads_before + 1);  // j2's hop freed; j1's still carries c
    CHECK(c->exec(request("echo c")).out.data == "c\n");
  }
  CHECK(threads() == threads_before);
  CHECK(fds() == fds_before);
}

TEST_CASE("jump pool: hosts waiting for a hop that fails to connect each get its error",
          "[ssh][jump]") {
  SshdHost target;
  const int closed = ratchet::testing::free_port();  // nothing listens there
  Endpoint ep = target.endpoint();
  ep.jump = "root@127.0.0.1:" + std::to_string(closed);
  const size_t threads_before = threads();
  std::vector<std::optional<ConnectError>> errs(4);
  std::vector<std::thread> connecting;
  for (size_t i = 0; i < errs.size(); ++i)
    connecting.emplace_back([&, i] { errs[i] = ratchet::testing::try_connect(ep); });
  for (auto& th : connecting) th.join();
  for (auto& e : errs) {
    REQUIRE(e);
    CHECK(e->kind == FailureKind::refused);
    CHECK(e->message == "via 127.0.0.1:" + std::to_string(closed) +
                            ": connection refused; is sshd running and listening on port " +
                            std::to_string(closed) + "?");
  }
  CHECK(threads() == threads_before);
}

TEST_CASE("jump pool: a shared jump host that hangs fails the next host's channel within the connect timeout",
          "[ssh][jump]") {
  OneHopLab lab;
  lab.ep.connect_timeout = std::chrono::milliseconds(2000);
  const size_t threads_before = threads();
  const size_t fds_before = fds();
  {
    auto first = make_ssh_transport(lab.ep);
    ConnectInfo info;
    REQUIRE_FALSE(first->connect(&info));
    REQUIRE(first->exec(request("true")).exit_code == 0);
    lab.jump.pause_connections(true);  // its TCP stays open: nothing says it is gone

    auto start = std::chrono::steady_clock::now();
    auto err = ratchet::testing::try_connect(lab.ep);
    const auto took = std::chrono::steady_clock::now() - start;
    REQUIRE(err);
    CHECK(err->kind == FailureKind::timeout);
    CHECK(err->message == "via 127.0.0.1:" + std::to_string(lab.jump.port()) +
                              ": cannot open a channel to 127.0.0.1:" +
                              std::to_string(lab.target.port()) + " through it: timed out after 2 s");
    CHECK(took >= std::chrono::milliseconds(1900));
    CHECK(took < std::chrono::seconds(6));
    CHECK(lab.jump.connections() == 1);  // it was the shared connection that was asked
    first->close();  // never waits on the hung bastion
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(8));
    lab.jump.pause_connections(false);
  }
  CHECK(threads() == threads_before);
  CHECK(fds() == fds_before);
}
