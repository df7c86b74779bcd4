#pragma once
// The transcript's hash chain (docs/transcript.md, "Hash chain"): each line
// after a run's run_start carries `prev`, the sha256 of the line before it;
// a host's digest is the sha256 of its host_end line, the run's head that of
// its run_end line. The writer keeps a Chain; verify_chain() checks a file.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ratchet::transcript {

/// The sha256 of one transcript line's bytes, without its newline, as 64
/// lowercase hex digits: the value of the next line's `prev`.
std::string line_digest(std::string_view line);

/// The chain as a writer extends it, one line written whole at a time. Not thread-safe.
class Chain {
 public:
  /// The `prev` the next line of event `event` carries: "" (none) for a
  /// run_start or before any, else the digest of the last line written.
  std::string prev_for(std::string_view event) const;
  /// `line` (without its newline) of event `event` about host `host` ("" = none)
  /// was written whole: it becomes the head; a host_end's digest is its host's.
  void written(std::string_view event, std::string_view host, std::string_view line);
  /// Each host's digest in the current run so far, by host name as written.
  const std::map<std::string, std::string>& host_digests() const { return hosts_; }
  /// The digest of the last line written ("" before a run_start).
  const std::string& head() const { return head_; }

 private:
  std::string head_;
  std::map<std::string, std::string> hosts_;
};

/// One run of a file whose chain verify_chain() found intact.
struct RunDigests {
  std::string run_id;  ///< run_start's `run_id` ("" for `exec`, which has none)
  size_t first_line = 0, last_line = 0;  ///< its run_start and run_end, from 1
  /// Each host's digest (of its host_end line), with that line, in file order.
  struct Host {
    std::string host, digest;
    size_t line = 0;
  };
  std::vector<Host> hosts;
  std::string head;  ///< the digest of its run_end line: the whole run
};

struct ChainCheck {
  std::vector<RunDigests> runs;  ///< the runs found whole, in file order, up to any problem
  /// Runs that end without run_end before the next run_start (stopped before
  /// their end): one line each, "line 6: run_start, but the run from line 1 has
  /// no run_end (it ends after line 5)". The file is then not whole.
  std::vector<std::string> cut;
  size_t lines = 0;              ///< complete lines read
  /// "" when every chain is intact and the file ends with a run_end (`cut` aside); else the
  /// first problem: "line 7: prev does not match line 6", "ends after line 9
  /// without run_end".
  std::string problem;
};

/// Checks every run's chain in `text` (a whole transcript file's bytes).
ChainCheck verify_chain(std::string_view text);

/// `text` as a bare digest: 64 hex digits, lower case, with any "sha256:"
/// prefix (any case) and surrounding blanks dropped; "" when it is not one.
std::string parse_digest(std::string_view text);

/// What in `check` has digest `hex` (parse_digest's form): "the final head of
/// run ID (line N)", "host H of run ID (line N)"; "" for nothing.
std::string digest_match(const ChainCheck& check, const std::string& hex);

}  // namespace ratchet::transcript
