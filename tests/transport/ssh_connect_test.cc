// Connection failures against a real sshd: host keys, auth, refused, timeout, dns.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transport/transport.h"

using namespace ratchet;
using namespace ratchet::transport;
using ratchet::testing::try_connect;
using ratchet::testing::run_local;
using ratchet::testing::SshdHost;

namespace {


void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

/// A fresh key pair under `dir`; returns the private key path.
std::string new_key(const std::string& dir, const std::string& name, const std::string& type) {
  std::string path = dir + "/" + name;
  int status = -1;
  run_local("ssh-keygen -q -t " + type + " -N '' -C test -f " + path + " </dev/null", &status);
  REQUIRE(status == 0);
  return path;
}

std::string pubkey_of(const std::string& key) {  // "ssh-ed25519 AAAA..." without the comment
  std::string pub = read_file(key + ".pub");
  return pub.substr(0, pub.rfind(' '));
}

}  // namespace

TEST_CASE("ssh: an unknown host key is refused unless accept_new", "[ssh]") {
  SshdHost host;
  Endpoint ep = host.endpoint();
  ep.known_hosts = host.dir() + "/empty_known_hosts";
  write_file(ep.known_hosts, "");
  auto err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->kind == FailureKind::host_key_unknown);
  CHECK(cause_name(err->kind) == "host_key");
  CHECK(err->message.find("127.0.0.1:" + std::to_string(host.port()) + ": host key not in " +
                          ep.known_hosts + " (fingerprint SHA256:") == 0);
  CHECK(err->message.find("--accept-new") != std::string::npos);
  CHECK(read_file(ep.known_hosts) == "");  // nothing recorded
}

TEST_CASE("ssh: accept_new records a first-seen key, then strict checking passes", "[ssh]") {
  SshdHost host;
  Endpoint ep = host.endpoint();
  ep.known_hosts = host.dir() + "/new/dir/known_hosts";  // directories created too
  ep.accept_new = true;
  auto err = try_connect(ep);
  INFO((err ? err->message : ""));
  REQUIRE_FALSE(err);
  std::string recorded = read_file(ep.known_hosts);
  std::string expected_line = "[127.0.0.1]:" + std::to_string(host.port()) + " " +
                              pubkey_of(host.dir() + "/ssh_host_ed25519_key");
  CHECK(recorded == expected_line + "\n");
  ep.accept_new = false;
  err = try_connect(ep);
  INFO((err ? err->message : ""));
  CHECK_FALSE(err);
}

TEST_CASE("ssh: a changed host key is refused, even with accept_new", "[ssh]") {
  SshdHost host;
  Endpoint ep = host.endpoint();
  std::string hostport = "[127.0.0.1]:" + std::to_string(host.port());
  SECTION("same key type, other key") {
    std::string other = new_key(host.dir(), "other_ed25519", "ed25519");
    write_file(ep.known_hosts, hostport + " " + pubkey_of(other) + "\n");
  }
  SECTION("other key type") {
    std::string other = new_key(host.dir(), "other_ecdsa", "ecdsa");
    write_file(ep.known_hosts, hostport + " " + pubkey_of(other) + "\n");
  }
  const std::string before = read_file(ep.known_hosts);
  for (bool accept_new : {false, true}) {
    ep.accept_new = accept_new;
    auto err = try_connect(ep);
    REQUIRE(err);
    CHECK(err->kind == FailureKind::host_key_changed);
    CHECK(err->message.find("127.0.0.1:" + std::to_string(host.port()) + ": HOST KEY CHANGED") ==
          0);
  }
  CHECK(read_file(ep.known_hosts) == before);  // never rewritten
}

TEST_CASE("ssh: a key the server does not accept fails auth and lists what was tried", "[ssh]") {
  SshdHost host;
  Endpoint ep = host.endpoint();
  ep.identity = new_key(host.dir(), "stranger", "ed25519");
  auto err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->kind == FailureKind::auth);
  CHECK(cause_name(err->kind) == "auth");
  REQUIRE_FALSE(err->methods_tried.empty());
  CHECK(err->methods_tried.front() == "publickey (" + ep.identity + ")");
  CHECK(err->message.find("127.0.0.1:" + std::to_string(host.port()) +
                          ": authentication as root failed (tried: publickey (" + ep.identity +
                          ")") == 0);

  ep.identity = host.dir() + "/missing_key";
  err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->kind == FailureKind::auth);
  CHECK(err->methods_tried.front() ==
        "publickey (" + ep.identity + ": does not exist)");

  // A file that is there but holds no private key: neither "does not exist" nor unreadable.
  ep.identity = host.dir() + "/not_a_key";
  std::ofstream(ep.identity) << "not a key\n";
  err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->methods_tried.front() == "publickey (" + ep.identity + ": protected by a passphrase, or not a private key)");
}

TEST_CASE("ssh: a closed port is refused", "[ssh]") {
  Endpoint ep;
  ep.name = "closed";
  ep.address = "127.0.0.1";
  ep.port = ratchet::testing::free_port();
  ep.ssh_config = "none";
  auto err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->kind == FailureKind::refused);
  CHECK(err->message.find("127.0.0.1:" + std::to_string(ep.port) + ": connection refused") == 0);
}

TEST_CASE("ssh: a peer that never speaks SSH times out", "[ssh]") {
  ratchet::testing::SilentListener silent;  // TCP connects, no banner ever comes
  Endpoint ep;
  ep.name = "silent";
  ep.address = "127.0.0.1";
  ep.port = silent.port();
  ep.ssh_config = "none";
  ep.connect_timeout = std::chrono::milliseconds(1000);
  auto start = std::chrono::steady_clock::now();
  auto err = try_connect(ep);
  auto took = std::chrono::steady_clock::now() - start;
  REQUIRE(err);
  CHECK(err->kind == FailureKind::timeout);
  CHECK(took < std::chrono::seconds(4));
}

TEST_CASE("ssh: an unresolvable name is a dns failure", "[ssh]") {
  Endpoint ep;
  ep.name = "no-such-host.invalid";
  ep.ssh_config = "none";
  auto err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->kind == FailureKind::dns);
  CHECK(cause_name(err->kind) == "dns");
  CHECK(err->message.find("no-such-host.invalid:22: cannot resolve host name") == 0);
}

namespace {

/// Holds one unauthenticated TCP connection to 127.0.0.1:port open until the
/// object goes: under `MaxStartups 1:100:1` sshd resets every other new one.
class HeldStartup {
 public:
  explicit HeldStartup(int port) {
    // sshd answers a connection it drops past MaxStartups with "Exceeded
    // MaxStartups" (the fixture's own port probe may still count): held only
    // once sshd sent its banner.
    for (int tries = 0; tries < 50 && fd_ < 0; ++tries) {
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(port));
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
      char banner[256];
      ssize_t n = ::read(fd, banner, sizeof banner);
      if (n >= 4 && std::string(banner, 4) == "SSH-") {
        fd_ = fd;
      } else {
        ::close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    REQUIRE(fd_ >= 0);
  }
  ~HeldStartup() { release(); }
  void release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace

TEST_CASE("ssh: a connection reset before authentication (MaxStartups) is tried again and the tries are recorded",
          "[ssh]") {
  SshdHost sshd("SSHD_MAX_STARTUPS=1:100:1");
  Endpoint ep = sshd.endpoint();
  SECTION("the slot frees within the tries: connected, each reset named") {
    HeldStartup held(sshd.port());
    std::thread release([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(700));
      held.release();
    });
    ConnectInfo info;
    auto err = try_connect(ep, &info);
    release.join();
    INFO((err ? err->message : std::string("connected")));
    CHECK_FALSE(err.has_value());
    REQUIRE_FALSE(info.retries.empty());
    CHECK(info.retries.size() <= static_cast<size_t>(kResetRetries));
    CHECK(info.retries[0].find("the server closed the connection before authentication") != std::string::npos);
    CHECK(info.retries[0].find("tried again after ") != std::string::npos);
  }
  SECTION("it never frees: a bounded number of tries, then unreachable with the reason") {
    HeldStartup held(sshd.port());
    auto start = std::chrono::steady_clock::now();
    ConnectInfo info;
    auto err = try_connect(ep, &info);
    INFO(info.retries.size() << " retries");
    REQUIRE(err.has_value());
    CHECK(err->reset_before_auth);
    CHECK(err->retries.size() == static_cast<size_t>(kResetRetries));
    CHECK(err->message.find("MaxStartups") != std::string::npos);
    CHECK(err->message.find("(after 5 tries)") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(15));
  }
}
