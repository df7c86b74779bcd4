// The bad-input corpus (tests/corpus/): every broken playbook and inventory
// gets its exact message from validate, plan and run (exit 2), and nothing
// connects: a listener the test owns sees no connection, run writes no transcript.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/local_proc.h"

using namespace ratchet::testing;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

/// A TCP listener on 127.0.0.1 that accepts nothing; counts pending connections.
struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 16) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~Listener() { ::close(fd); }
  /// Connections that arrived (each accepted and closed).
  int arrived() {
    int n = 0;
    for (int c; (c = ::accept(fd, nullptr, nullptr)) >= 0; ++n) ::close(c);
    return n;
  }
};

}  // namespace

TEST_CASE("bad-input corpus: exact messages, exit 2, nothing connects", "[cli][corpus]") {
  const fs::path root = fs::path(RATCHET_SOURCE_DIR) / "tests" / "corpus";
  Listener listener;
  std::string dir = temp_dir("ratchet-corpus");
  std::string inv = dir + "/inventory.toml";
  std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << listener.port
                     << "\nuser = \"root\"\n";
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory()) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  CHECK(cases.size() >= 40);
  for (const auto& c : cases) {
    INFO(c.filename().string());
    REQUIRE(fs::exists(c / "expected.txt"));
    std::string want = slurp(c / "expected.txt");
    std::string inv_arg = fs::exists(c / "inventory.toml") ? "inventory.toml" : inv;
    std::string cd = "cd '" + c.string() + "' && " + RATCHET_BINARY;
    auto v = run_sh(cd + " validate playbook.toml -i " + inv_arg);
    CHECK(v.code == 2);
    CHECK(v.err == want);
    CHECK(v.out.empty());
    auto p = run_sh(cd + " plan playbook.toml -i " + inv_arg);
    CHECK(p.code == 2);
    CHECK(p.err == want);
    std::string t = dir + "/" + c.filename().string() + ".jsonl";
    auto r = run_sh(cd + " run playbook.toml -i " + inv_arg + " -F none --transcript " + t);
    CHECK(r.code == 2);
    CHECK(r.err == want);
    CHECK_FALSE(fs::exists(t));
    CHECK(listener.arrived() == 0);
  }
}
