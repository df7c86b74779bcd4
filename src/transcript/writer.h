#pragma once
// The transcript: JSON Lines, one event a line, appended and flushed as it
// happens (docs/transcript.md documents the schema).
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "transcript/chain.h"
#include "transcript/events.h"

namespace ratchet::transcript {

/// Schema version written in run_start; bump on incompatible changes.
inline constexpr int kSchemaVersion = 2;

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

  /// Writes {"event": name, "t": now (RFC 3339 UTC, ms), "prev": the chain's
  /// head, ...fields} as one line with one write(2); run_end also gets
  /// "host_digests" (transcript/chain.h). Every string of `fields` passes
  /// through the secret mask. Thread-safe.
  /// An event that does not fit its row of events.h (events::check_event)
  /// throws std::logic_error, also on a writer that records nothing.
  void emit(const std::string& event, nlohmann::json fields = nlohmann::json::object());

  /// Whether emit() checks each event: true in every build type (a check of
  /// a few fields is cheap; issue 28).
  static bool checks_events();

  /// Every later occurrence of `value` in any string becomes "***" (empty:
  /// ignored); so does each line of 4 bytes or more of a value of several
  /// lines (a reason quoting one line of it must not show that line).
  void add_secret(const std::string& value);
  /// Whether any secret was added. Thread-safe.
  bool has_secrets() const;

  /// Replaces every known secret in `s` by "***" (longest first). Thread-safe.
  std::string mask(std::string s) const;

  /// mask(), and for output cut by the capture cap (`marker` between head and
  /// tail, transport::capture_marker): an end of the head that begins a secret
  /// and a start of the tail that ends one become "***" too.
  std::string mask_cut(const std::string& data, const std::string& marker) const;

  /// Masks every string (keys too) in `v`, in place.
  void mask_tree(nlohmann::json& v) const;

  const std::string& path() const { return path_; }

  /// The digest of the last line written whole: after run_end, the run's final
  /// head ("" before any run_start, and on a writer that records nothing). Thread-safe.
  std::string head() const;
  /// Each host's digest (of its host_end line) in the current run, by host
  /// name as written (masked). Thread-safe.
  std::map<std::string, std::string> host_digests() const;

  /// True once a write failed (disk full, I/O error): later events are dropped,
  /// and the run is to stop before its next step. Thread-safe.
  bool failed() const;
  /// "cannot write transcript PATH: REASON (event NAME)", or "" while none failed.
  std::string failure() const;

 private:
  std::string path_;
  int fd_ = -1;
  std::string failure_;
  std::string mask_unlocked(std::string s) const;
  void mask_tree_unlocked(nlohmann::json& v) const;
  std::vector<std::string> secrets_;
  Chain chain_;  ///< extended only by lines written whole
  mutable std::mutex mu_;
};

/// The output event's fields for `data`: {"stream", "data"} when it is UTF-8,
/// else {"stream", "data_b64"}; plus "bytes" (total written), "dropped", and
/// "sha256" (of all the bytes written, kept or not) when `sha256` is not "".
nlohmann::json output_fields(const std::string& stream, const std::string& data,
                             unsigned long long total, unsigned long long dropped,
                             const std::string& sha256 = "");

}  // namespace ratchet::transcript
