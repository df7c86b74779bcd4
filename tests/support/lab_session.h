#pragma once
// A lab host (SystemdHost) with a temp dir and an inventory naming it `lab`
// (root over ssh): the shared start of the tests that run ratchet against it.
#include <fstream>
#include <string>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/systemd_fixture.h"

namespace ratchet::testing {

struct LabSession {
  SystemdHost host;
  std::string dir;
  std::string inv;
  /// Boots the host; `prefix` names the temp dir (temp_dir(prefix)).
  explicit LabSession(const std::string& prefix) : dir(temp_dir(prefix.c_str())), inv(dir + "/inv.toml") {
    std::ofstream(inv) << "[hosts.lab]\naddress = \"127.0.0.1\"\nport = " << host.port()
                       << "\nuser = \"root\"\nidentity = \"" << host.client_key() << "\"\nknown_hosts = \""
                       << host.known_hosts() << "\"\n";
  }
  /// `cmd` on the host as root (SystemdHost::ssh), its stdout without trailing newlines.
  std::string sh(const std::string& cmd) {
    std::string out;
    host.ssh(cmd, &out);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
};

}  // namespace ratchet::testing
