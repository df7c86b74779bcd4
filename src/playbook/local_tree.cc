#include "playbook/local_tree.h"

#include <dirent.h>
#include <stdlib.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <utility>

#include "util/hash.h"

namespace ratchet::playbook {

bool sha256_file(const std::string& path, std::string* hex, unsigned long long* size, std::string* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = "cannot open " + path + ": " + strerror(errno);
    return false;
  }
  util::Sha256 h;
  std::string buf(1 << 20, '\0');
  unsigned long long n = 0;
  for (;;) {
    ssize_t got = ::read(fd, buf.data(), buf.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      *err = "cannot read " + path + ": " + strerror(errno);
      ::close(fd);
      return false;
    }
    if (got == 0) break;
    h.update(std::string_view(buf.data(), size_t(got)));
    n += static_cast<unsigned long long>(got);
  }
  ::close(fd);
  *hex = h.hex();
  if (size) *size = n;
  return true;
}

std::string tree_key(const std::string& src, const TreeOptions& opt) {
  std::string k = src;
  k += std::string(1, '\0') + (opt.follow ? "follow" : "");
  for (const auto& e : opt.exclude) k += std::string(1, '\0') + e;
  return k;
}

namespace {

struct Walk {
  const TreeOptions& opt;
  std::vector<TreeEntry>* out;
  std::string* err;
  std::set<std::pair<dev_t, ino_t>> open_dirs;  // under follow: the directories being walked (loops)

  bool excluded(const std::string& rel) const {
    if (rel.empty()) return false;
    const std::string base = rel.substr(rel.rfind('/') + 1);
    for (const auto& g : opt.exclude)
      if (fnmatch(g.c_str(), rel.c_str(), 0) == 0 || fnmatch(g.c_str(), base.c_str(), 0) == 0) return true;
    return false;
  }

  bool fail(const std::string& what, const std::string& path) {
    *err = what + " " + path + ": " + strerror(errno);
    return false;
  }

  bool entry(const std::string& path, const std::string& rel) {
    if (excluded(rel)) return true;
    struct stat st{};
    if ((opt.follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) return fail("cannot read", path);
    TreeEntry e;
    e.rel = rel;
    e.path = path;
    e.mode = st.st_mode & 07777;
    if (S_ISLNK(st.st_mode)) {
      e.type = TreeEntry::Type::link;
      std::string target(size_t(st.st_size > 0 ? st.st_size : 256) + 1, '\0');
      ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
      if (n < 0) return fail("cannot read the symlink", path);
      target.resize(size_t(n));
      e.link = target;
      out->push_back(std::move(e));
      return true;
    }
    if (S_ISREG(st.st_mode)) {
      e.type = TreeEntry::Type::file;
      // follow: a symlink to a file sends the file it names. The upload opens
      // e.path without following a link, so it is that file's own path.
      struct stat l{};
      if (opt.follow && ::lstat(path.c_str(), &l) == 0 && S_ISLNK(l.st_mode)) {
        char* real = ::realpath(path.c_str(), nullptr);
        if (real == nullptr) return fail("cannot resolve the symlink", path);
        e.path = real;
        ::free(real);
      }
      if (!sha256_file(e.path, &e.sha256, &e.size, err)) return false;
      out->push_back(std::move(e));
      return true;
    }
    if (!S_ISDIR(st.st_mode)) {
      *err = path + " is neither a file, a directory nor a symlink: copy sends only those";
      return false;
    }
    e.type = TreeEntry::Type::dir;
    out->push_back(std::move(e));
    const auto id = std::make_pair(st.st_dev, st.st_ino);
    if (!open_dirs.insert(id).second) {
      *err = path + " is a directory that contains itself through a symlink (follow = true): a loop";
      return false;
    }
    DIR* d = ::opendir(path.c_str());
    if (!d) return fail("cannot read the directory", path);
    std::vector<std::string> names;
    while (dirent* de = ::readdir(d)) {
      std::string n = de->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const auto& n : names)
      if (!entry(path + "/" + n, rel.empty() ? n : rel + "/" + n)) return false;
    open_dirs.erase(id);
    return true;
  }
};

}  // namespace

bool read_tree(const std::string& src, const TreeOptions& opt, std::vector<TreeEntry>* out, std::string* err) {
  out->clear();
  Walk w{opt, out, err, {}};
  return w.entry(src, "");
}

}  // namespace ratchet::playbook
