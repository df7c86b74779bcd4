#pragma once
// Internal to the libssh backend: ServerAliveInterval and ServerAliveCountMax
// for a connected session, kept by the transports' poll loops (libssh 0.10
// sends a keepalive only when asked, ssh_send_keepalive, and says nothing of
// its answer). Whether the host answered is read from the packets the session
// received (ssh_set_counters): sshd answers each keepalive@openssh.com request
// with a packet, so a silence past the interval after one means no answer.
#include <libssh/libssh.h>

#include <chrono>
#include <string>

#include "transport/transport.h"

namespace ratchet::transport::ssh {

/// Counts the packets `s` receives from construction until destruction (it
/// must go before the session is freed); tick() sends the keepalives.
class KeepaliveWatch {
 public:
  /// `spec.interval` > 0 (else nothing is ever sent); `where` prefixes the message.
  KeepaliveWatch(ssh_session s, Keepalive spec, std::string where);
  ~KeepaliveWatch();
  KeepaliveWatch(const KeepaliveWatch&) = delete;
  KeepaliveWatch& operator=(const KeepaliveWatch&) = delete;

  /// Called from a poll loop at least every 200 ms: after each interval of
  /// silence asks for an answer (never blocking). Returns "" while the host
  /// answers, else, once spec.count intervals in a row passed with nothing
  /// from it after a keepalive, "HOST:PORT: connection lost: no answer to
  /// keepalives for 2.0s (ServerAliveInterval 1s, ServerAliveCountMax 2)".
  std::string tick();
  /// True once tick() has said the connection is lost.
  bool lost() const { return lost_; }

 private:
  using Clock = std::chrono::steady_clock;
  ssh_session s_;
  Keepalive spec_;
  std::string where_;
  ssh_counter_struct socket_{}, packets_{};
  uint64_t seen_packets_ = 0;
  Clock::time_point last_in_;     ///< when a packet last came (or the watch began)
  Clock::time_point first_sent_;  ///< the first keepalive of the silence
  int sent_ = 0;                  ///< intervals of silence with a keepalive out, since last_in_
  bool lost_ = false;
};

}  // namespace ratchet::transport::ssh
