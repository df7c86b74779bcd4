// known_hosts as OpenSSH keeps it (src/transport/ssh_hostkey.cc), against a
// real sshd: a changed key names the file and line, HashKnownHosts yes makes
// --accept-new write a hashed entry, and the ssh config's HostKeyAlgorithms
// and PubkeyAcceptedAlgorithms are honoured.
#include <catch2/catch.hpp>
#include <regex>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transport/transport.h"

using namespace ratchet;
using namespace ratchet::transport;
using ratchet::testing::try_connect;
using ratchet::testing::read_file;
using ratchet::testing::run_sh;
using ratchet::testing::SshdHost;
using ratchet::testing::write_file;

namespace {


/// A fresh key pair under `dir`; returns "TYPE BASE64" of its public key.
std::string new_pubkey(const std::string& dir, const std::string& name, const std::string& type) {
  std::string path = dir + "/" + name;
  REQUIRE(run_sh("ssh-keygen -q -t " + type + " -N '' -C test -f " + path + " </dev/null").code == 0);
  std::string pub = read_file(path + ".pub");
  return pub.substr(0, pub.rfind(' '));
}

/// "SHA256:..." of the sshd's host key, as ssh-keygen -l prints it.
std::string host_fingerprint(const SshdHost& host) {
  auto r = run_sh("ssh-keygen -l -E sha256 -f " + host.host_pubkey());
  REQUIRE(r.code == 0);
  auto at = r.out.find("SHA256:");
  return r.out.substr(at, r.out.find(' ', at) - at);
}

}  // namespace

TEST_CASE("known_hosts: a changed host key names the file and line", "[ssh][known_hosts]") {
  SshdHost host;
  Endpoint ep = host.endpoint();
  const std::string kh = host.dir() + "/known_hosts_changed";
  ep.known_hosts = kh;
  const std::string name = "[127.0.0.1]:" + std::to_string(host.port());
  const std::string where = "127.0.0.1:" + std::to_string(host.port());
  const std::string head = "# a comment\nother.example " + new_pubkey(host.dir(), "o1", "ed25519") +
                           "\n[127.0.0.1]:1 " + new_pubkey(host.dir(), "o2", "ed25519") + "\n";
  std::string what;
  SECTION("another key of the same type, on line 4") {
    write_file(kh, head + name + " " + new_pubkey(host.dir(), "other", "ed25519") + "\n");
    what = "another key";
  }
  SECTION("a key of another type, on line 4") {
    write_file(kh, head + name + " " + new_pubkey(host.dir(), "other", "ecdsa") + "\n");
    what = "a key of another type";
  }
  SECTION("a hashed entry, on line 4") {
    write_file(kh, head);
    const std::string pub = host.dir() + "/other_hashed";
    std::string key = new_pubkey(host.dir(), "other_hashed", "ed25519");
    write_file(kh + ".tmp", name + " " + key + "\n");
    REQUIRE(run_sh("ssh-keygen -q -H -f " + kh + ".tmp && cat " + kh + ".tmp >> " + kh).code == 0);
    REQUIRE(read_file(kh).find("|1|") != std::string::npos);
    what = "another key";
  }
  const std::string before = read_file(kh);
  for (bool accept_new : {false, true}) {
    ep.accept_new = accept_new;
    auto err = try_connect(ep);
    REQUIRE(err);
    CHECK(err->kind == FailureKind::host_key_changed);
    CHECK(err->message ==
          where + ": HOST KEY CHANGED: the server offers ssh-ed25519 " + host_fingerprint(host) +
              " but " + kh + ":4 lists " + what +
              " for it (possible man-in-the-middle); verify the new key out of band, then "
              "replace line 4 of " + kh + "; --accept-new never overrides this");
  }
  CHECK(read_file(kh) == before);  // never rewritten
}

TEST_CASE("known_hosts: with HashKnownHosts yes --accept-new writes a hashed entry",
          "[ssh][known_hosts]") {
  SshdHost host;
  Endpoint ep = host.endpoint();  // address 127.0.0.1: the config is matched on it
  ep.ssh_config = host.dir() + "/hash_config";
  write_file(ep.ssh_config, "Host 127.0.0.1\n  HashKnownHosts yes\n");
  ep.known_hosts = host.dir() + "/hashed/known_hosts";
  ep.accept_new = true;
  auto err = try_connect(ep);
  INFO((err ? err->message : ""));
  REQUIRE_FALSE(err);
  const std::string recorded = read_file(ep.known_hosts);
  const std::string key = read_file(host.host_pubkey());
  const std::string type_and_key = key.substr(0, key.rfind(' '));
  INFO(recorded);
  CHECK(std::regex_match(recorded, std::regex(R"(\|1\|[A-Za-z0-9+/]{27}=\|[A-Za-z0-9+/]{27}= )" +
                                              std::regex_replace(type_and_key, std::regex(R"([+/])"),
                                                                 R"(\$&)") +
                                              "\n")));
  CHECK(recorded.find("127.0.0.1") == std::string::npos);
  // OpenSSH finds it under the name it looks the server up by.
  auto found = run_sh("ssh-keygen -F '[127.0.0.1]:" + std::to_string(host.port()) + "' -f " +
                      ep.known_hosts);
  CHECK(found.code == 0);
  CHECK(found.out.find("|1|") != std::string::npos);
  // And so does ratchet, strictly, the next time.
  ep.accept_new = false;
  err = try_connect(ep);
  INFO((err ? err->message : ""));
  CHECK_FALSE(err);
  // HashKnownHosts no (or not set): the plain line, as before.
  write_file(ep.ssh_config, "Host 127.0.0.1\n  HashKnownHosts no\n");
  ep.known_hosts = host.dir() + "/plain_known_hosts";
  ep.accept_new = true;
  REQUIRE_FALSE(try_connect(ep));
  CHECK(read_file(ep.known_hosts) == host.known_hosts_line() + "\n");
}

TEST_CASE("ssh config HostKeyAlgorithms is honoured with + and -", "[ssh][known_hosts]") {
  SshdHost host;  // offers one host key: ssh-ed25519
  Endpoint ep = host.endpoint();
  ep.ssh_config = host.dir() + "/hka_config";
  const std::string where = "127.0.0.1:" + std::to_string(host.port());
  SECTION("-ssh-ed25519 leaves nothing the server offers") {
    write_file(ep.ssh_config, "Host 127.0.0.1\n  HostKeyAlgorithms -ssh-ed25519\n");
    auto err = try_connect(ep);
    REQUIRE(err);
    INFO(err->message);
    CHECK(err->kind == FailureKind::other);
    CHECK(err->message.rfind(where + ": no host key algorithm in common: the server offers "
                                     "ssh-ed25519, the ssh config's HostKeyAlgorithms allows ",
                             0) == 0);
    CHECK(err->message.find("ecdsa-sha2-nistp256") != std::string::npos);
    const std::string allowed = "," + err->message.substr(err->message.rfind("allows ") + 7);
    CHECK(allowed.find(",ssh-ed25519,") == std::string::npos);  // removed: "-" applied
    CHECK(allowed.find(",rsa-sha2-512,") != std::string::npos);  // the rest of the defaults kept
  }
  SECTION("a list without the server's algorithm") {
    write_file(ep.ssh_config, "Host 127.0.0.1\n  HostKeyAlgorithms rsa-sha2-256,ecdsa-sha2-nistp256\n");
    auto err = try_connect(ep);
    REQUIRE(err);
    CHECK(err->message == where + ": no host key algorithm in common: the server offers "
                                  "ssh-ed25519, the ssh config's HostKeyAlgorithms allows "
                                  "rsa-sha2-256,ecdsa-sha2-nistp256; fix HostKeyAlgorithms");
  }
  SECTION("+ssh-rsa keeps the defaults") {
    write_file(ep.ssh_config, "Host 127.0.0.1\n  HostKeyAlgorithms +ssh-rsa\n");
    auto err = try_connect(ep);
    INFO((err ? err->message : ""));
    CHECK_FALSE(err);
  }
  SECTION("a block for another host changes nothing") {
    write_file(ep.ssh_config, "Host lab\n  HostKeyAlgorithms -ssh-ed25519\n");
    auto err = try_connect(ep);
    INFO((err ? err->message : ""));
    CHECK_FALSE(err);  // the host argument is the address, 127.0.0.1
  }
}

TEST_CASE("ssh config PubkeyAcceptedAlgorithms is honoured", "[ssh][known_hosts]") {
  SshdHost host;  // the client key is ssh-ed25519
  Endpoint ep = host.endpoint();
  ep.ssh_config = host.dir() + "/pka_config";
  write_file(ep.ssh_config, "Host 127.0.0.1\n  PubkeyAcceptedAlgorithms -ssh-ed25519\n");
  auto err = try_connect(ep);
  REQUIRE(err);
  CHECK(err->kind == FailureKind::auth);
  REQUIRE_FALSE(err->methods_tried.empty());
  CHECK(err->methods_tried.front() ==
        "publickey (" + host.client_key() + ": ssh-ed25519 not in PubkeyAcceptedAlgorithms)");
  write_file(ep.ssh_config, "Host 127.0.0.1\n  PubkeyAcceptedAlgorithms ssh-ed25519,rsa-sha2-512\n");
  err = try_connect(ep);
  INFO((err ? err->message : ""));
  CHECK_FALSE(err);
}
