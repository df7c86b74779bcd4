#pragma once
// Internal to the libssh backend: jump hosts through ratchet's own sessions.
// Each hop is a full libssh session set up like the target (known_hosts,
// accept-new, identity, ssh config for the hop's own name, connect timeout);
// the next session rides on a channel forwarded by the one before
// (ssh_mux.h). Hops are shared by every chain in the process that goes the
// same way (ssh_jump_pool.h). Replaces libssh 0.10's `ssh -W` ProxyCommand.
#include <libssh/libssh.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "transport/ssh_jump_pool.h"
#include "transport/transport.h"

namespace ratchet::transport::ssh {

class JumpChain {
 public:
  JumpChain() = default;
  ~JumpChain() { close(); }
  JumpChain(const JumpChain&) = delete;
  JumpChain& operator=(const JumpChain&) = delete;

  /// Connects the hops of `spec` ("[user@]host[:port],...", first hop first;
  /// the first hop's own ssh config ProxyJump is followed too, as ssh -J does)
  /// with `target`'s settings, then has the last hop open a channel to
  /// host:port. On success *fd is the socket the target session must use
  /// (SSH_OPTIONS_FD; the caller owns it). A hop already connected for another
  /// chain with the same settings is reused (one connection per hop and
  /// process); one found dead is replaced once. Errors begin "via HOP" and keep
  /// the hop's cause (a hop's host key failure stays a host key failure).
  std::optional<ConnectError> connect(const Endpoint& target, const std::string& spec,
                                      const std::string& host, int port, int* fd);

  /// The hops connected so far, "user@host:port" each, first hop first.
  const std::vector<std::string>& via() const { return via_; }
  /// True when the first hop's connection was already open (another chain's)
  /// and this chain rode on it rather than connecting it.
  bool reused() const { return reused_; }

  /// Closes the target's channel and lets go of the hops, last hop first (a
  /// hop no other chain uses is then disconnected). Call only after the
  /// session riding on the chain was freed. Safe to call twice.
  void close();

 private:
  std::vector<std::shared_ptr<SharedHop>> hops_;  ///< first hop first
  int channel_ = 0;  ///< the target's channel on the last hop; 0 = none
  std::vector<std::string> via_;
  bool reused_ = false;
};

}  // namespace ratchet::transport::ssh
