#pragma once
// A real ssh-agent for tests, started on a socket in a fresh /tmp directory
// and stopped by its PID (never by name).
#include <sys/types.h>

#include <optional>
#include <string>

namespace ratchet::testing {

/// RAII ssh-agent: the constructor starts `ssh-agent -a SOCKET` (throws
/// std::runtime_error on failure); the destructor kills exactly the PID it
/// printed, even after a failed test, and removes its directory.
class SshAgent {
 public:
  SshAgent();
  ~SshAgent();
  SshAgent(const SshAgent&) = delete;
  SshAgent& operator=(const SshAgent&) = delete;

  const std::string& socket() const { return socket_; }
  pid_t pid() const { return pid_; }
  /// ssh-add the (unencrypted) private key file `key`; throws on failure.
  void add(const std::string& key) const;
  /// The public keys the agent holds, as `ssh-add -L` prints them ("" = none).
  std::string list() const;

 private:
  std::string dir_, socket_;
  pid_t pid_ = 0;
};

/// Sets an environment variable for a scope and restores it (or its absence)
/// afterwards. Not thread-safe: for single-threaded test code only.
class ScopedEnv {
 public:
  ScopedEnv(const std::string& name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace ratchet::testing
