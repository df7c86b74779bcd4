#pragma once
// A copy step's source, read once at load: every file, directory and symlink
// under it with its mode, and each file's size and sha256 (streamed: a large
// file is never held in memory). The plan pins these; apply re-hashes them.
#include <string>
#include <vector>

#include "playbook/model.h"

namespace ratchet::playbook {

/// What to read and how.
struct TreeOptions {
  bool follow = false;               ///< follow symlinks (default: each is an entry of its own)
  std::vector<std::string> exclude;  ///< fnmatch(3) globs, tested on the relative path and on the name
};

/// Reads `src` (a file, a directory, or with follow a symlink to either) into
/// *out, parents before their children, names sorted. False with *err (one
/// line: what could not be read, or a symlink loop under follow).
bool read_tree(const std::string& src, const TreeOptions& opt, std::vector<TreeEntry>* out, std::string* err);

/// The SHA-256 (hex) of the file at `path`, read in chunks; false with *err.
bool sha256_file(const std::string& path, std::string* hex, unsigned long long* size, std::string* err);

/// The key Playbook::files holds a copy source under: its name as written,
/// with the options that change what is read ("dir\0follow\0*.tmp").
std::string tree_key(const std::string& src, const TreeOptions& opt);

}  // namespace ratchet::playbook
