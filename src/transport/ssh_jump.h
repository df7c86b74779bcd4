#pragma once
// Internal to the libssh backend: jump hosts through ratchet's own sessions.
// Each hop is a full libssh session set up like the target (known_hosts,
// accept-new, identity, ssh config for the hop's own name, connect timeout);
// the next session rides on a channel forwarded by the one before
// (ssh_pump.h). Replaces libssh 0.10's `ssh -W` ProxyCommand.
#include <libssh/libssh.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "transport/ssh_pump.h"
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
  /// (SSH_OPTIONS_FD; the caller owns it). Errors begin "via HOP" and keep the
  /// hop's cause (a hop's host key failure stays a host key failure).
  std::optional<ConnectError> connect(const Endpoint& target, const std::string& spec,
                                      const std::string& host, int port, int* fd);

  /// The hops connected so far, "user@host:port" each, first hop first.
  const std::vector<std::string>& via() const { return via_; }

  /// Stops the pumps and frees the hop sessions, last hop first. Call only
  /// after the session riding on the chain was freed. Safe to call twice.
  void close();

 private:
  struct Hop {
    ssh_session session = nullptr;
    int fd = -1;  ///< the socket it rides on (the previous hop's pump); -1 for the first
    std::unique_ptr<ChannelPump> pump;  ///< carries the next hop's (or the target's) bytes
  };
  std::vector<Hop> hops_;
  std::vector<std::string> via_;
};

}  // namespace ratchet::transport::ssh
