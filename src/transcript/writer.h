#pragma once
// The transcript: JSON Lines, one event a line, appended and flushed as it
// happens (design.md §5). docs/transcript.md documents the schema.
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ratchet::transcript {

/// Schema version written in run_start; bump on incompatible changes.
inline constexpr int kSchemaVersion = 1;

class Writer {
 public:
  /// Opens `path` for appending (created mode 0600, parent directories made).
  /// Throws std::runtime_error naming the path when it cannot.
  explicit Writer(const std::string& path);
  /// A writer that records nothing (tests, `exec` without --transcript).
  Writer();
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  /// Writes {"event": name, "t": now (RFC 3339 UTC, ms), ...fields} as one line
  /// with one write(2). Every string passes through the secret mask. Thread-safe.
  void emit(const std::string& event, nlohmann::json fields = nlohmann::json::object());

  /// Every later occurrence of `value` in any string becomes "***" (empty: ignored).
  void add_secret(const std::string& value);

  /// Replaces every known secret in `s` by "***".
  std::string mask(std::string s) const;

  /// Masks every string (keys too) in `v`, in place.
  void mask_tree(nlohmann::json& v) const;

  const std::string& path() const { return path_; }

  /// True once a write failed (disk full, I/O error): later events are dropped,
  /// and the run is to stop before its next step. Thread-safe.
  bool failed() const;
  /// "cannot write transcript PATH: REASON (event NAME)", or "" while none failed.
  std::string failure() const;

 private:
  std::string path_;
  int fd_ = -1;
  std::string failure_;
  std::vector<std::string> secrets_;
  mutable std::mutex mu_;
};

/// The output event's fields for `data`: {"stream", "data"} when it is UTF-8,
/// else {"stream", "data_b64"}; plus "bytes" (total written) and "dropped".
nlohmann::json output_fields(const std::string& stream, const std::string& data,
                             unsigned long long total, unsigned long long dropped);

}  // namespace ratchet::transcript
