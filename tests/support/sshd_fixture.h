#pragma once
// A real sshd on 127.0.0.1 for integration tests ([ssh]), started through
// tests/lab/sshd-host.sh in a fresh /tmp directory and stopped by its PID.
#include <sys/types.h>

#include <optional>
#include <string>

#include "transport/transport.h"

namespace ratchet::testing {

/// Runs `/bin/sh -c command` here and returns its stdout; *status gets the exit
/// status (or -1 when it did not exit normally).
std::string run_local(const std::string& command, int* status = nullptr);

/// A free TCP port on 127.0.0.1 (bound, read, closed: racy but fine for tests); never 2024.
int free_port();

/// True while /proc/PID exists and is not a zombie (a reaped or zombie process is dead).
bool pid_alive(pid_t pid);

/// Waits up to `ms` for pid_alive(pid) to turn false; returns true when it did.
bool wait_pid_gone(pid_t pid, int ms);

/// RAII sshd: the constructor starts it (throws std::runtime_error on failure);
/// the destructor stops exactly that PID, even after a failed test, and removes dir().
class SshdHost {
 public:
  /// `env` is prepended to the sshd-host.sh command line, e.g. "SSHD_MAX_SESSIONS=2".
  explicit SshdHost(const std::string& env = "");
  ~SshdHost();
  SshdHost(const SshdHost&) = delete;
  SshdHost& operator=(const SshdHost&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& dir() const { return dir_; }
  std::string client_key() const { return dir_ + "/client_key"; }
  std::string known_hosts() const { return dir_ + "/known_hosts"; }
  std::string host_pubkey() const { return dir_ + "/ssh_host_ed25519_key.pub"; }
  /// The known_hosts line sshd-host.sh wrote: "[127.0.0.1]:PORT ssh-ed25519 AAAA...".
  std::string known_hosts_line() const;

  /// address 127.0.0.1, this port, user root, identity client_key(),
  /// known_hosts known_hosts(), ssh_config "none", connect timeout 5 s.
  transport::Endpoint endpoint() const;

 private:
  void stop();

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = 0;
};

/// connect() of a fresh ssh transport to `ep`: nullopt on success, *info filled
/// when given; the session is closed again when the transport goes.
inline std::optional<transport::ConnectError> try_connect(const transport::Endpoint& ep,
                                                          transport::ConnectInfo* info = nullptr) {
  auto t = transport::make_ssh_transport(ep);
  transport::ConnectInfo scratch;
  return t->connect(info ? info : &scratch);
}

}  // namespace ratchet::testing
