#pragma once
// Which process on the host runs a command: the wire wrapper (wire.h) prints one
// line, "[ratchet-pid RUN_ID] PID PGID START_TICKS[ watch]", on stderr just before it
// runs the command; the client strips it from the output and keeps the numbers,
// so that it can arm the host-side watchdog or stop the command over a second
// channel. Only a line with the command's own run id counts (a login shell's rc
// file prints before the wrapper and cannot guess it in advance), and the
// watchdog checks the numbers again on the host before it signals anything.
#include <string>
#include <string_view>

namespace ratchet::transport {

/// The command's process on the host. Fields read from /proc/PID/stat (proc(5)):
/// pgid is field 5, start_ticks field 22 (clock ticks after boot, which tells a
/// recycled PID apart). pid == 0: unknown (no line came, or it was malformed).
struct RemoteProcess {
  long pid = 0;
  long pgid = 0;
  unsigned long long start_ticks = 0;
  /// The line ended " watch": the run wrapper started the watchdog on the
  /// host itself (wire.h HostWatch::on), so the deadline needs no second channel.
  bool watched = false;
  bool known() const { return pid > 1 && pgid > 1; }
};

/// The marker line's prefix for `run_id`: "[ratchet-pid RUN_ID] "; the line
/// ends with '\n'.
std::string pid_marker(std::string_view run_id);

/// Filters a command's stderr as it arrives: the first marker line is removed
/// and parsed; bytes before it (a login shell's noise) and after it pass through.
/// It looks within the first kWindow bytes only; after that, or once the marker
/// was found, every byte passes through unchanged.
class PidMarkerFilter {
 public:
  /// Looks for the marker of `run_id` (wire.h); "" finds none (all is output).
  explicit PidMarkerFilter(std::string_view run_id);
  static constexpr size_t kWindow = 64 * 1024;  ///< bytes searched for the marker
  /// Feeds n bytes; appends what belongs to the output to *out.
  void feed(const char* data, size_t n, std::string* out);
  /// At EOF: appends whatever is still held back (an unfinished line) to *out.
  void finish(std::string* out);
  /// The parsed line; unknown until the marker was seen.
  const RemoteProcess& process() const { return proc_; }

 private:
  void scan(std::string* out);
  std::string marker_;  ///< pid_marker(run_id)
  bool done_ = false;
  size_t seen_ = 0;   ///< bytes fed while searching
  std::string held_;  ///< bytes not yet known to be output (< kWindow + a line)
  RemoteProcess proc_;
};

/// The warning for output still held open `grace` after the exit status, naming
/// `holders` (the lines of held_output_query(): "PID COMM"; "" when unknown):
/// "output still held open Ns after the command exited, by PID 7 (sleep): left
/// running, not waited for".
std::string held_output_warning(long long grace_ms, const std::string& holders);

/// Parses "PID PGID TICKS" or "PID PGID TICKS watch" (decimal, single spaces);
/// false when malformed or when PID or PGID is 1 or less (never a command
/// ratchet started).
bool parse_remote_process(std::string_view fields, RemoteProcess* out);

}  // namespace ratchet::transport
