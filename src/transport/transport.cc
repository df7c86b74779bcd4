// Backend-independent pieces of the transport seam: failure names and capture.
#include "transport/transport.h"

#include <fmt/format.h>

#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

namespace ratchet::transport {

std::string cause_name(FailureKind k) {
  switch (k) {
    case FailureKind::dns:
      return "dns";
    case FailureKind::refused:
      return "refused";
    case FailureKind::timeout:
      return "timeout";
    case FailureKind::host_key_unknown:
    case FailureKind::host_key_changed:
      return "host_key";
    case FailureKind::auth:
      return "auth";
    case FailureKind::other:
      break;
  }
  return "other";
}

std::string capture_marker(unsigned long long dropped) {
  return fmt::format("\n[ratchet: {} bytes dropped]\n", dropped);
}

CaptureBuffer::CaptureBuffer(size_t cap) : head_cap_(cap / 2), tail_cap_(cap - cap / 2) {}

void CaptureBuffer::sink_to(int fd, unsigned long long limit) {
  sink_fd_ = fd;
  sink_limit_ = limit;
}

void CaptureBuffer::append(const char* data, size_t n) {
  const unsigned long long before = total_;
  total_ += n;
  sha_.update(std::string_view(data, n));
  if (sink_fd_ >= 0) {
    size_t room = before >= sink_limit_ ? 0 : size_t(std::min<unsigned long long>(n, sink_limit_ - before));
    while (room > 0 && sink_error_.empty()) {
      ssize_t w = ::write(sink_fd_, data, room);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        sink_error_ = std::string("cannot write the file: ") + strerror(errno);
        break;
      }
      data += w;
      room -= size_t(w);
    }
    return;
  }
  size_t to_head = std::min(n, head_cap_ - head_.size());
  head_.append(data, to_head);
  data += to_head;
  n -= to_head;
  if (n == 0 || tail_cap_ == 0) return;
  if (n >= tail_cap_) {  // the new bytes alone fill the tail
    tail_.assign(data + n - tail_cap_, tail_cap_);
    return;
  }
  tail_.append(data, n);
  // Trim lazily so appending stays amortised O(n).
  if (tail_.size() > 2 * tail_cap_) tail_.erase(0, tail_.size() - tail_cap_);
}

Captured CaptureBuffer::finish() const {
  Captured c;
  c.total = total_;
  c.sha256 = sha_.hex();
  c.sink_error = sink_error_;
  std::string_view tail = tail_;
  if (tail.size() > tail_cap_) tail.remove_prefix(tail.size() - tail_cap_);
  unsigned long long kept = head_.size() + tail.size();
  c.dropped = total_ - kept;
  c.data = head_;
  if (c.dropped > 0) c.data += capture_marker(c.dropped);
  c.data += tail;
  return c;
}

}  // namespace ratchet::transport
