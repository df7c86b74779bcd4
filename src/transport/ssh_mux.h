#pragma once
// Internal to the libssh backend: one thread that owns a connected session and
// carries any number of forwarded (direct-tcpip) channels, each to a local
// socket, so that other libssh sessions can ride on them (SSH_OPTIONS_FD).
// A jump hop shared by many targets (ssh_jump_pool.h) has one of these.
#include <libssh/libssh.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace ratchet::transport::ssh {

/// Copies bytes both ways between each channel and one end of its socketpair,
/// never more than a channel's window and never blocking on any side (so no
/// channel, and no direction, can stall another). The thread owns the session
/// from start() until stop(): nothing else may use it meanwhile. Other threads
/// ask it for channels through open() and close() (a queue and an eventfd).
class ChannelMux {
 public:
  /// Starts the thread for the connected session `s`. Returns nullptr (and
  /// `s` stays the caller's) when no eventfd could be made.
  static std::unique_ptr<ChannelMux> start(ssh_session s);
  ~ChannelMux();
  ChannelMux(const ChannelMux&) = delete;
  ChannelMux& operator=(const ChannelMux&) = delete;

  /// Has the thread open a channel to host:port (the remote sshd dials it)
  /// and waits for it, at most `timeout`. Returns the channel's id (> 0) and
  /// sets *peer_fd to the other end of its socketpair, which the caller owns;
  /// on failure returns 0 and sets *err (the far sshd's reason, "timed out
  /// after N s", or "the connection is gone" once the session died).
  int open(const std::string& host, int port, std::chrono::milliseconds timeout, int* peer_fd,
           std::string* err);

  /// Closes channel `id` and the thread's end of its socket, waiting for the
  /// thread to do so (it never blocks; at most 5 s). An unknown id, or a
  /// thread already ended, does nothing.
  void close(int id);

  /// False once the thread ended: the session died (every channel's socket
  /// was then closed, so what rode on them sees EOF at once) or stop() ran.
  bool alive() const { return running_.load(); }

  /// Stops the thread (it wakes at once), joins it, and frees every channel
  /// and socket end of its own; the session goes back to the caller. Safe twice.
  void stop();

 private:
  struct Request;
  struct Chan;
  ChannelMux(ssh_session s, int wake_fd);
  void run();
  void post(const std::shared_ptr<Request>& r);

  ssh_session session_;
  int wake_fd_;  ///< eventfd: a request or stop() writes to it so the thread leaves its poll
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{true};
  std::mutex mu_;
  std::condition_variable cv_;                  ///< a request was answered
  std::deque<std::shared_ptr<Request>> queue_;  ///< under mu_
  int next_id_ = 1;                             ///< under mu_
  std::thread thread_;
};

}  // namespace ratchet::transport::ssh
