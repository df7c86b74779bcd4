#pragma once
// Proof that the host ran what ratchet sent: the first line on stdin
// (wire.h exec_line) prints "[ratchet-go ID]" on stdout and on stderr before
// anything of the command. A GoSplit reads one stream: what comes before that
// line is the login's own (an rc file's output, a forced command's answer),
// kept apart and never the command's output; what comes after it is the
// command's. A stream that ends without it carries no result of ratchet's command.
#include <string>
#include <string_view>

namespace ratchet::transport {

class GoSplit {
 public:
  /// Looks for wire.h go_line(go_id).
  explicit GoSplit(std::string_view go_id);
  /// Feeds n bytes; appends what comes after the go line to *out (a second go
  /// line right after it, from an rc file's `exec 2>&1`, is taken out too).
  void feed(const char* data, size_t n, std::string* out);
  /// At the stream's end: what was held back goes to before() (no go line
  /// came) or to *out (the command's bytes that looked like a second go line).
  void finish(std::string* out);
  /// The go line came on this stream.
  bool seen() const { return seen_; }
  /// What came before the go line (or all of it, when none came): its first
  /// kKeep bytes, for the transcript (ExecResult::login_output) and the error.
  const std::string& before() const { return before_; }
  static constexpr size_t kKeep = 4096;

 private:
  std::string marker_;
  std::string tail_;    ///< the last bytes not yet known to be before the marker (< marker size)
  std::string before_;  ///< capped at kKeep
  bool seen_ = false;
  bool second_pending_ = false;  ///< right after the go line: a second one may follow
};

/// The error for a command whose go line never came: "the host did not run
/// the command ratchet sent: it printed `LINE` (ENDED; a forced command, or
/// an rc file or login shell that ran something else)": LINE is the first
/// non-empty line of `out_before`, else of `err_before` ("it printed nothing"
/// when both are empty); ENDED how it ended, such as "exit 0".
std::string not_run_error(const std::string& out_before, const std::string& err_before, std::string_view ended);

}  // namespace ratchet::transport
