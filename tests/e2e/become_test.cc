// become on a real systemd host: an unprivileged login user writes a
// root-owned file and restarts a unit through `sudo -n`; a user whose sudo
// wants a password fails fast and clearly (no hang, no prompt).
#include <catch2/catch.hpp>

#include <fstream>

#include "support/local_proc.h"
#include "support/systemd_fixture.h"
#include "transcript/reader.h"

using ratchet::testing::run_sh;
using ratchet::testing::SystemdHost;

TEST_CASE("become: sudo -n for a NOPASSWD user; a password user fails clearly", "[systemd][e2e]") {
  SystemdHost host;
  REQUIRE(run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " alice nopasswd").code == 0);
  REQUIRE(run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " bob password=hunter2").code == 0);
  std::string dir = ratchet::testing::temp_dir("ratchet-become");
  std::ofstream(dir + "/inv.toml") << "[hosts.alice]\naddress = \"127.0.0.1\"\nport = " << host.port()
                                   << "\nuser = \"alice\"\nidentity = \"" << host.client_key()
                                   << "\"\nknown_hosts = \"" << host.known_hosts() << "\"\n"
                                   << "[hosts.bob]\naddress = \"127.0.0.1\"\nport = " << host.port()
                                   << "\nuser = \"bob\"\nidentity = \"" << host.client_key()
                                   << "\"\nknown_hosts = \"" << host.known_hosts() << "\"\n";
  std::ofstream(dir + "/p.toml") << R"(name = "become"
[[step]]
id = "whoami"
kind = "verify"
command = "id -un"
stdout_matches = "^root$"
become = true
[[step]]
id = "notes"
kind = "write"
path = "/root/become-notes.md"
mode = "0600"
content = "written by {{ host.name }} as root\n"
become = true
)";
  auto r = run_sh(std::string(RATCHET_BINARY) + " run " + dir + "/p.toml -i " + dir + "/inv.toml -F none --limit alice --transcript " + dir + "/a.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  std::string out;
  REQUIRE(host.ssh("stat -c '%U %a' /root/become-notes.md; cat /root/become-notes.md", &out) == 0);
  CHECK(out == "root 600\nwritten by alice as root\n");

  auto t0 = std::chrono::steady_clock::now();
  r = run_sh(std::string(RATCHET_BINARY) + " run " + dir + "/p.toml -i " + dir + "/inv.toml -F none --limit bob --transcript " + dir + "/b.jsonl");
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(secs < 20);
  auto t = ratchet::transcript::read_transcript(dir + "/b.jsonl");
  std::string reason;
  for (const auto& e : t.events)
    if (e["event"] == "step_end" && e["step"] == "whoami") reason = e.value("reason", "");
  CHECK(reason.find("a password is required") != std::string::npos);
}
