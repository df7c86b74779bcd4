#include "transcript/tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace ratchet::transcript {

LineTail::LineTail(std::string path) : path_(std::move(path)) {}

LineTail::~LineTail() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<std::string> LineTail::poll(std::string* error) {
  std::vector<std::string> out;
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      if (errno != ENOENT) *error = fmt::format("cannot read transcript {}: {}", path_, std::strerror(errno));
      return out;
    }
    struct stat st{};
    if (::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {
      *error = fmt::format("cannot read transcript {}: {}", path_, std::strerror(EISDIR));
      return out;
    }
  }
  struct stat st{};
  if (::fstat(fd_, &st) == 0 && static_cast<unsigned long long>(st.st_size) < offset_) {
    *error = fmt::format("transcript {} shrank to {} bytes after {} were read: it was cut or replaced", path_,
                         static_cast<long long>(st.st_size), offset_);
    return out;
  }
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = fmt::format("cannot read transcript {}: {}", path_, std::strerror(errno));
      return out;
    }
    if (n == 0) break;
    offset_ += static_cast<unsigned long long>(n);
    partial_.append(buf, static_cast<size_t>(n));
  }
  size_t start = 0;
  for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1)
    out.push_back(partial_.substr(start, nl - start));
  partial_.erase(0, start);
  lines_ += out.size();
  return out;
}

}  // namespace ratchet::transcript
