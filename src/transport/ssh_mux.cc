// Forwarded channels carried to socketpairs by the one thread that owns the
// session. Flow control, per channel: bytes from the socket go to the channel
// only within its window (a blocking write there could wait for a window the
// far side opens only after we read); bytes from the channel are read only
// once the previous chunk reached the socket, so a slow reader holds its
// channel's window shut instead of filling memory. Channel opens run
// non-blocking too (SSH_AGAIN, called again each pass), so a slow far side
// delays only the open that waits for it.
#include "transport/ssh_mux.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <vector>

namespace ratchet::transport::ssh {

using Clock = std::chrono::steady_clock;

/// What another thread asked of the mux thread, and its answer (under mu_).
struct ChannelMux::Request {
  bool open = true;  ///< else close
  std::string host;
  int port = 0;
  int id = 0;  ///< open: the id the channel gets; close: the channel to close
  Clock::time_point deadline;
  long long timeout_s = 0;  ///< for the message
  bool done = false;
  bool abandoned = false;  ///< the caller stopped waiting: a channel opened late is closed
  int fd = -1;             ///< open: the caller's socket end
  std::string err;
};

/// One channel of the session and its socket end, as the thread sees it.
struct ChannelMux::Chan {
  int id = 0;
  ssh_channel ch = nullptr;
  int fd = -1;                       ///< our end of the socketpair; -1 while opening
  std::shared_ptr<Request> opening;  ///< set until the far side answered the open
  std::string to_fd, to_channel;
  bool fd_eof = false, channel_eof = false, eof_sent = false, shut = false;
  short registered = 0;  ///< the events fd is registered for in the thread's ssh_event
};

namespace {

/// ssh_event wants a callback per fd; the loop looks at the fds itself.
int ignore_fd_event(socket_t, int, void*) { return 0; }

bool would_block() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

}  // namespace

std::unique_ptr<ChannelMux> ChannelMux::start(ssh_session s) {
  int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) return nullptr;
  std::unique_ptr<ChannelMux> m(new ChannelMux(s, wake));
  m->thread_ = std::thread([raw = m.get()] { raw->run(); });
  return m;
}

ChannelMux::ChannelMux(ssh_session s, int wake_fd) : session_(s), wake_fd_(wake_fd) {}

ChannelMux::~ChannelMux() { stop(); }

void ChannelMux::stop() {
  if (thread_.joinable()) {
    stop_.store(true);
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  if (wake_fd_ >= 0) ::close(wake_fd_), wake_fd_ = -1;
}

void ChannelMux::post(const std::shared_ptr<Request>& r) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!running_.load()) {
      r->done = true;
      r->err = "the connection is gone";
      return;
    }
    if (r->open) r->id = next_id_++;
    queue_.push_back(r);
  }
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

int ChannelMux::open(const std::string& host, int port, std::chrono::milliseconds timeout,
                     int* peer_fd, std::string* err) {
  auto r = std::make_shared<Request>();
  r->host = host;
  r->port = port;
  r->deadline = Clock::now() + timeout;
  r->timeout_s = (timeout.count() + 999) / 1000;
  post(r);
  std::unique_lock<std::mutex> lock(mu_);
  // The thread answers by the deadline itself; the slack covers a thread that is slow to notice.
  if (!cv_.wait_until(lock, r->deadline + std::chrono::seconds(2), [&] { return r->done; })) {
    r->abandoned = true;
    *err = fmt::format("timed out after {} s", (timeout.count() + 999) / 1000);
    return 0;
  }
  if (r->fd < 0) {
    *err = r->err;
    return 0;
  }
  *peer_fd = r->fd;
  return r->id;
}

void ChannelMux::close(int id) {
  auto r = std::make_shared<Request>();
  r->open = false;
  r->id = id;
  post(r);
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, std::chrono::seconds(5), [&] { return r->done; })) r->abandoned = true;
}

void ChannelMux::run() {
  // Non-blocking from here: ssh_channel_write queues what the socket cannot
  // take yet and ssh_event_dopoll flushes it.
  ssh_set_blocking(session_, 0);
  ssh_event ev = ssh_event_new();
  std::vector<std::unique_ptr<Chan>> chans;
  bool gone = false;  // the session died (else stop() ended us)
  auto answer = [&](const std::shared_ptr<Request>& r, int fd, std::string err) {
    std::lock_guard<std::mutex> lock(mu_);
    r->fd = fd;
    r->err = std::move(err);
    r->done = true;
    cv_.notify_all();
    return !r->abandoned;
  };
  // Closes and frees a channel and our socket end: what rides on it sees EOF.
  auto finish = [&](Chan& c) {
    if (c.registered) ssh_event_remove_fd(ev, c.fd), c.registered = 0;
    if (c.fd >= 0) ::close(c.fd), c.fd = -1;
    if (c.ch != nullptr) {
      if (c.opening == nullptr && ssh_channel_is_open(c.ch)) ssh_channel_close(c.ch);
      ssh_channel_free(c.ch);
      c.ch = nullptr;
    }
  };
  if (ev == nullptr) {
    gone = true;
  } else {
    ssh_event_add_session(ev, session_);
    ssh_event_add_fd(ev, wake_fd_, POLLIN, ignore_fd_event, nullptr);
  }
  char buf[32768];

  while (!gone && !stop_.load()) {
    uint64_t drained;
    [[maybe_unused]] ssize_t nd = ::read(wake_fd_, &drained, sizeof drained);
    std::deque<std::shared_ptr<Request>> todo;
    {
      std::lock_guard<std::mutex> lock(mu_);
      todo.swap(queue_);
    }
    for (auto& r : todo) {
      if (r->open) {
        auto c = std::make_unique<Chan>();
        c->id = r->id;
        c->ch = ssh_channel_new(session_);
        if (c->ch == nullptr) {
          answer(r, -1, ssh_get_error(session_));
          continue;
        }
        c->opening = r;
        chans.push_back(std::move(c));
      } else {
        auto it = std::find_if(chans.begin(), chans.end(), [&](auto& c) { return c->id == r->id; });
        if (it != chans.end()) {
          if ((*it)->opening) answer((*it)->opening, -1, "closed");
          finish(**it);
          chans.erase(it);
        }
        answer(r, -1, "");
      }
    }

    bool moved = false;
    auto next_deadline = Clock::now() + std::chrono::seconds(1);
    for (size_t i = 0; i < chans.size();) {
      Chan& c = *chans[i];
      bool done = false;
      if (c.opening) {
        const Request& r = *c.opening;
        // The originator fields are informational for the far sshd (its log).
        int rc = ssh_channel_open_forward(c.ch, r.host.c_str(), r.port, "127.0.0.1", 0);
        if (rc == SSH_OK) {
          int pair[2];
          if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
            answer(c.opening, -1, "socketpair failed");
            c.opening = nullptr;
            done = true;
          } else {
            c.fd = pair[0];
            auto req = std::move(c.opening);
            c.opening = nullptr;
            if (!answer(req, pair[1], "")) {  // nobody waits for it any more
              ::close(pair[1]);
              done = true;
            }
            moved = true;
          }
        } else if (rc == SSH_ERROR || Clock::now() >= r.deadline) {
          std::string why = rc == SSH_ERROR ? std::string(ssh_get_error(session_))
                                            : fmt::format("timed out after {} s", r.timeout_s);
          // A dead session is told before the answer, so that the caller's
          // alive() already says so (the loop ends below).
          if (ssh_is_connected(session_) == 0) running_.store(false);
          answer(c.opening, -1, why);
          done = true;
        } else {
          next_deadline = std::min(next_deadline, r.deadline);
        }
      } else {
        // channel -> socket
        if (c.to_fd.empty() && !c.channel_eof) {
          int n = ssh_channel_read_nonblocking(c.ch, buf, sizeof buf, 0);
          if (n > 0)
            c.to_fd.assign(buf, size_t(n));
          else if (n == SSH_EOF)
            c.channel_eof = true;
          else if (n == SSH_ERROR)
            done = true;  // this channel (or the whole session: checked below) is gone
        }
        if (!done && !c.to_fd.empty()) {
          ssize_t w = ::send(c.fd, c.to_fd.data(), c.to_fd.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
          if (w > 0) {
            c.to_fd.erase(0, size_t(w));
            moved = true;
          } else if (w < 0 && !would_block()) {
            done = true;  // the session riding on it is gone
          }
        }
        if (!done && c.channel_eof && c.to_fd.empty() && !c.shut) {
          ::shutdown(c.fd, SHUT_WR);  // pass the far side's EOF on
          c.shut = true;
        }
        // socket -> channel
        if (!done && c.to_channel.empty() && !c.fd_eof) {
          ssize_t r = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
          if (r > 0)
            c.to_channel.assign(buf, size_t(r));
          else if (r == 0 || !would_block())
            c.fd_eof = true;
        }
        if (!done && !c.to_channel.empty()) {
          size_t window = ssh_channel_window_size(c.ch);
          if (window > 0) {
            int w = ssh_channel_write(c.ch, c.to_channel.data(),
                                      uint32_t(std::min(window, c.to_channel.size())));
            if (w == SSH_ERROR) {
              done = true;
            } else if (w > 0) {
              c.to_channel.erase(0, size_t(w));
              moved = true;
            }
          }
        }
        if (!done && c.fd_eof && c.to_channel.empty() && !c.eof_sent) {
          ssh_channel_send_eof(c.ch);
          c.eof_sent = true;
        }
        if (!done && c.to_fd.empty() && (c.channel_eof || ssh_channel_is_closed(c.ch)) &&
            (c.eof_sent || ssh_channel_is_closed(c.ch)))
          done = true;  // both directions done
        if (!done) {
          short want = 0;
          if (c.to_channel.empty() && !c.fd_eof) want |= POLLIN;
          if (!c.to_fd.empty()) want |= POLLOUT;
          if (want != c.registered) {
            if (c.registered) ssh_event_remove_fd(ev, c.fd);
            if (want) ssh_event_add_fd(ev, c.fd, want, ignore_fd_event, nullptr);
            c.registered = want;
          }
        }
      }
      if (done) {
        finish(c);
        chans.erase(chans.begin() + long(i));
      } else {
        ++i;
      }
    }
    if (ssh_is_connected(session_) == 0) {
      gone = true;
      break;
    }
    // After progress, only a quick pass (flush, new packets); else sleep until
    // a packet, a socket, a request or stop() wakes us, or an open's deadline.
    // Data libssh already buffered for a channel is picked up by the reads
    // above, not by poll.
    int wait_ms = moved
                      ? 0
                      : int(std::max<long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  next_deadline - Clock::now())
                                                  .count()));
    if (ssh_event_dopoll(ev, wait_ms) == SSH_ERROR && ssh_is_connected(session_) == 0) gone = true;
  }

  // No more requests from here; those queued are answered.
  std::deque<std::shared_ptr<Request>> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_.store(false);
    left.swap(queue_);
  }
  const std::string why = gone ? "the connection is gone" : "stopped";
  for (auto& r : left) answer(r, -1, r->open ? why : "");
  for (auto& c : chans) {
    if (c->opening) answer(c->opening, -1, why);
    finish(*c);  // what rode on it sees EOF at once instead of waiting for stop()
  }
  if (ev != nullptr) {
    ssh_event_remove_fd(ev, wake_fd_);
    ssh_event_remove_session(ev, session_);
    ssh_event_free(ev);
  }
}

}  // namespace ratchet::transport::ssh
