#include "report/write.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace ratchet::report {

namespace {

std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISLNK(m)) return "a symbolic link";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  return "not a regular file";
}

}  // namespace

std::string write_private_atomic(const std::string& path, const std::string& text) {
  auto fail = [&](const std::string& why) {
    return fmt::format("cannot write report {}: {}", path, why);
  };
  if (path.empty()) return fail("no file name");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return fail(
        fmt::format("it is {}; a report goes to a regular file of its own", kind_of(st.st_mode)));
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmpl = dir + "/." + base + ".XXXXXX";
  std::vector<char> tmp(tmpl.begin(), tmpl.end());
  tmp.push_back('\0');
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);  // mode 0600, a name nobody else holds
  if (fd < 0) return fail(std::strerror(errno));
  std::string err;
  if (::fchmod(fd, 0600) != 0) err = std::strerror(errno);
  for (size_t off = 0; err.empty() && off < text.size();) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      err = std::strerror(errno);
    else
      off += static_cast<size_t>(n);
  }
  if (err.empty() && ::fsync(fd) != 0) err = std::strerror(errno);
  if (::close(fd) != 0 && err.empty()) err = std::strerror(errno);
  if (err.empty() && ::rename(tmp.data(), path.c_str()) != 0) err = std::strerror(errno);
  if (!err.empty()) {
    ::unlink(tmp.data());
    return fail(err);
  }
  return "";
}

}  // namespace ratchet::report
