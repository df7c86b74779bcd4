// `plan --out` (and `plan --probe --out`): the plan file on disk.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "cli/exit_codes.h"
#include "cli/make_plan.h"
#include "plan/codec.h"
#include "util/text.h"

namespace ratchet::cli {

namespace {

/// Writes `text` to `path` as a new file of mode 0600 (replacing one there);
/// "" or why not.
std::string write_private(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return fmt::format("cannot create {}: {}", tmp, std::strerror(errno));
  std::string err;
  if (::fchmod(fd, 0600) != 0) err = std::strerror(errno);
  for (size_t off = 0; err.empty() && off < text.size();) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = std::strerror(errno);
    else off += static_cast<size_t>(n);
  }
  if (err.empty() && ::fsync(fd) != 0) err = std::strerror(errno);
  ::close(fd);
  if (err.empty() && ::rename(tmp.c_str(), path.c_str()) != 0) err = std::strerror(errno);
  if (!err.empty()) {
    ::unlink(tmp.c_str());
    return fmt::format("cannot write {}: {}", path, err);
  }
  return "";
}

}  // namespace

int save_plan(const plan::Plan& P, const Options& o) {
  nlohmann::json doc = plan::plan_json(P, true);
  if (std::string err = write_private(o.out, doc.dump(2) + "\n"); !err.empty()) {
    std::cerr << "ratchet: error: " << util::terminal_line(err) << "\n";
    return kExitUsage;
  }
  std::string digest = doc["digest"].get<std::string>();
  (o.json ? std::cerr : std::cout)
      << util::terminal_line(fmt::format("saved plan {} (mode 0600), {} host(s){}, digest {}", o.out, P.hosts.size(),
                                         P.probe ? ", with the probe's findings" : "", digest))
      << "\n"
      << util::terminal_line(fmt::format("run exactly this with: ratchet apply {} --expect-digest {}", o.out, digest))
      << "\n";
  return kExitOk;
}

}  // namespace ratchet::cli
