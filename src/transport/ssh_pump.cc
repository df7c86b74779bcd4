// A direct-tcpip channel carried to a socketpair by one thread. Flow control:
// bytes from the socket go to the channel only within its window (a blocking
// write there could wait for a window the far side opens only after we read);
// bytes from the channel are read only once the previous chunk reached the
// socket, so a slow reader holds the channel's window shut instead of
// filling memory.
#include "transport/ssh_pump.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace ratchet::transport::ssh {

namespace {

/// ssh_event wants a callback per fd; the loop below looks at the fds itself.
int ignore_fd_event(socket_t, int, void*) { return 0; }

bool would_block() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

}  // namespace

std::unique_ptr<ChannelPump> ChannelPump::open(ssh_session s, const std::string& host, int port,
                                               int* peer_fd, std::string* err) {
  ssh_channel ch = ssh_channel_new(s);
  if (ch == nullptr) {
    *err = ssh_get_error(s);
    return nullptr;
  }
  // The originator fields are informational for the far sshd (its log).
  if (ssh_channel_open_forward(ch, host.c_str(), port, "127.0.0.1", 0) != SSH_OK) {
    *err = ssh_get_error(s);
    ssh_channel_free(ch);
    return nullptr;
  }
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    *err = "socketpair failed";
    ssh_channel_close(ch);
    ssh_channel_free(ch);
    return nullptr;
  }
  int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    *err = "eventfd failed";
    ::close(pair[0]);
    ::close(pair[1]);
    ssh_channel_close(ch);
    ssh_channel_free(ch);
    return nullptr;
  }
  std::unique_ptr<ChannelPump> p(new ChannelPump(s, ch, pair[0], wake));
  p->thread_ = std::thread([raw = p.get()] { raw->run(); });
  *peer_fd = pair[1];
  return p;
}

ChannelPump::ChannelPump(ssh_session s, ssh_channel ch, int fd, int wake_fd)
    : session_(s), channel_(ch), fd_(fd), wake_fd_(wake_fd) {}

ChannelPump::~ChannelPump() { stop(); }

void ChannelPump::stop() {
  if (thread_.joinable()) {
    stop_.store(true);
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  if (fd_ >= 0) ::close(fd_), fd_ = -1;
  if (wake_fd_ >= 0) ::close(wake_fd_), wake_fd_ = -1;
  if (channel_ != nullptr) {
    if (ssh_channel_is_open(channel_)) ssh_channel_close(channel_);
    ssh_channel_free(channel_);
    channel_ = nullptr;
  }
}

void ChannelPump::run() {
  // Non-blocking from here: ssh_channel_write queues what the socket cannot
  // take yet and ssh_event_dopoll flushes it.
  ssh_set_blocking(session_, 0);
  ssh_event ev = ssh_event_new();
  if (ev == nullptr) {
    ::close(fd_), fd_ = -1;
    return;
  }
  ssh_event_add_session(ev, session_);
  ssh_event_add_fd(ev, wake_fd_, POLLIN, ignore_fd_event, nullptr);
  short registered = 0;  // the events fd_ is registered for in `ev`
  std::string to_fd, to_channel;
  bool fd_eof = false, channel_eof = false, eof_sent = false, shut = false;
  char buf[32768];

  while (!stop_.load()) {
    bool moved = false;
    // channel -> socket
    if (to_fd.empty() && !channel_eof) {
      int n = ssh_channel_read_nonblocking(channel_, buf, sizeof buf, 0);
      if (n > 0)
        to_fd.assign(buf, size_t(n));
      else if (n == SSH_EOF)
        channel_eof = true;
      else if (n == SSH_ERROR)
        break;  // the session is gone
    }
    if (!to_fd.empty()) {
      ssize_t w = ::send(fd_, to_fd.data(), to_fd.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w > 0) {
        to_fd.erase(0, size_t(w));
        moved = true;
      } else if (w < 0 && !would_block()) {
        break;  // the session riding on us is gone
      }
    }
    if (channel_eof && to_fd.empty() && !shut) {
      ::shutdown(fd_, SHUT_WR);  // pass the far side's EOF on
      shut = true;
    }
    // socket -> channel
    if (to_channel.empty() && !fd_eof) {
      ssize_t r = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (r > 0)
        to_channel.assign(buf, size_t(r));
      else if (r == 0 || !would_block())
        fd_eof = true;
    }
    if (!to_channel.empty()) {
      size_t window = ssh_channel_window_size(channel_);
      if (window > 0) {
        int w = ssh_channel_write(channel_, to_channel.data(),
                                  uint32_t(std::min(window, to_channel.size())));
        if (w == SSH_ERROR) break;
        if (w > 0) {
          to_channel.erase(0, size_t(w));
          moved = true;
        }
      }
    }
    if (fd_eof && to_channel.empty() && !eof_sent) {
      ssh_channel_send_eof(channel_);
      eof_sent = true;
    }
    if (to_fd.empty() && (channel_eof || ssh_channel_is_closed(channel_))) {
      if (eof_sent || ssh_channel_is_closed(channel_)) break;  // both directions done
    }

    short want = 0;
    if (to_channel.empty() && !fd_eof) want |= POLLIN;
    if (!to_fd.empty()) want |= POLLOUT;
    if (want != registered) {
      if (registered) ssh_event_remove_fd(ev, fd_);
      if (want) ssh_event_add_fd(ev, fd_, want, ignore_fd_event, nullptr);
      registered = want;
    }
    // After progress, only a quick pass (flush, new packets); else sleep until
    // a packet, the socket or stop() wakes us. Data libssh already buffered
    // for the channel is picked up by the read at the top, not by poll.
    if (ssh_event_dopoll(ev, moved ? 0 : 1000) == SSH_ERROR && !ssh_is_connected(session_)) break;
  }
  if (registered) ssh_event_remove_fd(ev, fd_);
  ssh_event_remove_fd(ev, wake_fd_);
  ssh_event_remove_session(ev, session_);
  ssh_event_free(ev);
  // The session riding on us sees EOF at once instead of waiting for stop().
  ::close(fd_);
  fd_ = -1;
}

}  // namespace ratchet::transport::ssh
