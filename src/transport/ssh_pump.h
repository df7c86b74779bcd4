#pragma once
// Internal to the libssh backend: a forwarded (direct-tcpip) channel carried to
// a local socket, so that another libssh session can ride on it (SSH_OPTIONS_FD).
#include <libssh/libssh.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

namespace ratchet::transport::ssh {

/// One thread copies bytes both ways between a channel and one end of a
/// socketpair, never more than the channel's window and never blocking on
/// either side (so neither direction can stall the other). The thread owns
/// the session from open() until stop(): nothing else may use it meanwhile.
class ChannelPump {
 public:
  /// Opens a channel on the connected session `s` to host:port (the remote
  /// sshd dials it; blocks up to the session timeout) and starts the thread.
  /// Returns the pump and sets *peer_fd to the other socket end, which the
  /// caller owns; on failure returns nullptr and sets *err to libssh's reason.
  static std::unique_ptr<ChannelPump> open(ssh_session s, const std::string& host, int port,
                                           int* peer_fd, std::string* err);
  ~ChannelPump();
  ChannelPump(const ChannelPump&) = delete;
  ChannelPump& operator=(const ChannelPump&) = delete;

  /// Stops the thread (it wakes at once), joins it, then closes and frees the
  /// channel and this end of the pair; the session goes back to the caller.
  /// Safe to call twice.
  void stop();

 private:
  ChannelPump(ssh_session s, ssh_channel ch, int fd, int wake_fd);
  void run();

  ssh_session session_;
  ssh_channel channel_;
  int fd_;       ///< our end of the socketpair; closed by the thread when it ends
  int wake_fd_;  ///< eventfd: stop() writes to it so the thread leaves its poll
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace ratchet::transport::ssh
