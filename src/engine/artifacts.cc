#include "engine/artifacts.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <vector>

#include <fmt/format.h>

namespace ratchet::engine {

namespace {

// One remote name as one local name: never "", ".", ".." nor holding "/".
std::string safe_name(const std::string& n) {
  std::string out;
  for (char c : n) out += c == '%' ? std::string("%25") : std::string(1, c);
  if (out.empty()) return "%";
  if (out == ".") return "%2E";
  if (out == "..") return "%2E%2E";
  return out;
}

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (at <= path.size()) {
    size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    if (slash > at) parts.push_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  return parts;
}

}  // namespace

std::string default_artifacts(const std::string& transcript, const std::string& run_id) {
  if (transcript == "/dev/null" || transcript.empty()) return "transcripts/" + run_id;
  const std::string ext = ".jsonl";
  if (transcript.size() > ext.size() && transcript.compare(transcript.size() - ext.size(), ext.size(), ext) == 0)
    return transcript.substr(0, transcript.size() - ext.size());
  return transcript + ".artifacts";
}

std::string artifact_rel(const std::string& host, const std::string& remote) {
  std::string rel = safe_name(host);
  for (const auto& p : split(remote)) rel += "/" + safe_name(p);
  return rel;
}

ArtifactFile::ArtifactFile(std::string root, std::string rel) : root_(std::move(root)), rel_(std::move(rel)) {}

ArtifactFile::~ArtifactFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && dir_fd_ >= 0 && !tmp_name_.empty()) ::unlinkat(dir_fd_, tmp_name_.c_str(), 0);
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

bool ArtifactFile::open(std::string* err) {
  // The root itself: made (0700) with its parents as needed; the user named it.
  std::string made;
  for (const auto& p : split(root_)) {
    made += (made.empty() && root_[0] != '/' ? "" : "/") + p;
    if (::mkdir(made.c_str(), 0700) != 0 && errno != EEXIST) {
      *err = fmt::format("cannot make the artifact directory {}: {}", made, strerror(errno));
      return false;
    }
  }
  dir_fd_ = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd_ < 0) {
    *err = fmt::format("cannot open the artifact directory {}: {}", root_, strerror(errno));
    return false;
  }
  std::vector<std::string> parts = split(rel_);  // each already one safe name
  name_ = parts.back();
  parts.pop_back();
  for (const auto& p : parts) {
    if (::mkdirat(dir_fd_, p.c_str(), 0700) != 0 && errno != EEXIST) {
      *err = fmt::format("cannot make {}/{}: {}", root_, p, strerror(errno));
      return false;
    }
    int next = ::openat(dir_fd_, p.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      *err = fmt::format("{} in the artifact directory {} is not a directory of its own ({}): nothing written "
                         "through it", p, root_, strerror(errno));
      return false;
    }
    ::close(dir_fd_);
    dir_fd_ = next;
  }
  std::random_device rd;
  for (int i = 0; i < 16 && fd_ < 0; ++i) {
    tmp_name_ = fmt::format(".ratchet-fetch.{:08x}", rd());
    fd_ = ::openat(dir_fd_, tmp_name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  }
  if (fd_ < 0) {
    *err = fmt::format("cannot make a file in the artifact directory for {}: {}", rel_, strerror(errno));
    tmp_name_.clear();
    return false;
  }
  return true;
}

bool ArtifactFile::commit(std::string* err) {
  if (fd_ >= 0 && ::close(fd_) != 0) {
    fd_ = -1;
    *err = fmt::format("cannot write {}: {}", path(), strerror(errno));
    return false;
  }
  fd_ = -1;
  struct stat st{};
  if (::fstatat(dir_fd_, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
    *err = fmt::format("{} is a directory: not replaced", path());
    return false;
  }
  if (::renameat(dir_fd_, tmp_name_.c_str(), dir_fd_, name_.c_str()) != 0) {
    *err = fmt::format("cannot put {} in place: {}", path(), strerror(errno));
    return false;
  }
  committed_ = true;
  return true;
}

}  // namespace ratchet::engine
