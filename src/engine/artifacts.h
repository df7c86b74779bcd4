#pragma once
// The run's artifact directory (fetch's downloads): ARTIFACTS/HOST/PATH, where
// PATH is the remote path's components, each one name here. Never writes
// outside ARTIFACTS whatever the remote names are: "", "." and ".." components
// are %-encoded (so is "%"), no symlink is followed, directories are made 0700
// and files 0600, each file put in place with one rename.
#include <string>

namespace ratchet::engine {

/// The default artifact directory of a run: the transcript's path without
/// ".jsonl" ("transcripts/x-1.jsonl" -> "transcripts/x-1"), or
/// "transcripts/RUN_ID" for a transcript of /dev/null.
std::string default_artifacts(const std::string& transcript, const std::string& run_id);

/// The path below the artifact directory that `remote` (a path on `host`)
/// lands at: "HOST/var/log/syslog"; "HOST/%2E%2E/x" for "/../x".
std::string artifact_rel(const std::string& host, const std::string& remote);

/// A file being written under `root` at `rel` (artifact_rel): open() makes
/// the directories (0700), refusing a symlink or non-directory on the way,
/// and opens a temp file (0600) beside the target; commit() renames it into
/// place; the destructor removes it when not committed.
class ArtifactFile {
 public:
  ArtifactFile(std::string root, std::string rel);
  ~ArtifactFile();
  ArtifactFile(const ArtifactFile&) = delete;
  ArtifactFile& operator=(const ArtifactFile&) = delete;
  /// False with *err (one line) when the file cannot be made.
  bool open(std::string* err);
  int fd() const { return fd_; }
  /// Closes the file and renames it to its name (replacing an earlier file,
  /// never a directory); false with *err.
  bool commit(std::string* err);
  /// root/rel.
  std::string path() const { return root_ + "/" + rel_; }

 private:
  std::string root_, rel_, tmp_name_, name_;
  int dir_fd_ = -1, fd_ = -1;
  bool committed_ = false;
};

}  // namespace ratchet::engine
