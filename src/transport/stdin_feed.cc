#include "transport/stdin_feed.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>

namespace ratchet::transport {

StdinFeed::StdinFeed(std::string head, std::string file) : head_(std::move(head)), file_(std::move(file)) {}

StdinFeed::~StdinFeed() {
  if (fd_ >= 0) ::close(fd_);
}

bool StdinFeed::open(std::string* err) {
  if (file_.empty() || fd_ >= 0) return true;
  fd_ = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd_ < 0) {
    *err = "cannot open " + file_ + ": " + strerror(errno);
    return false;
  }
  return true;
}

std::string_view StdinFeed::next() {
  if (in_head_) {
    if (at_ < head_.size()) return std::string_view(head_).substr(at_);
    in_head_ = false;
    at_ = 0;
  }
  if (at_ < buf_.size()) return std::string_view(buf_).substr(at_);
  if (fd_ < 0 || eof_) return {};
  buf_.resize(1 << 20);
  for (;;) {
    ssize_t got = ::read(fd_, buf_.data(), buf_.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) error_ = "cannot read " + file_ + ": " + strerror(errno);
    if (got <= 0) {
      eof_ = true;
      buf_.clear();
      at_ = 0;
      return {};
    }
    buf_.resize(size_t(got));
    at_ = 0;
    return buf_;
  }
}

void StdinFeed::consume(size_t n) { at_ += n; }

}  // namespace ratchet::transport
