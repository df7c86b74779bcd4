#pragma once
// Which process on the host runs a command: the wire wrapper (wire.h) prints one
// line, "[ratchet-pid] PID PGID START_TICKS", on stderr just before it execs the
// command; the client strips it from the output and keeps the numbers, so that
// it can arm the host-side watchdog or stop the command over a second channel.
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
  bool known() const { return pid > 0 && pgid > 0; }
};

/// The line's prefix; the line ends with '\n'.
inline constexpr std::string_view kPidMarker = "[ratchet-pid] ";

/// Filters a command's stderr as it arrives: the first marker line is removed
/// and parsed; bytes before it (a login shell's noise) and after it pass through.
/// It looks within the first kWindow bytes only; after that, or once the marker
/// was found, every byte passes through unchanged.
class PidMarkerFilter {
 public:
  static constexpr size_t kWindow = 64 * 1024;  ///< bytes searched for the marker
  /// Feeds n bytes; appends what belongs to the output to *out.
  void feed(const char* data, size_t n, std::string* out);
  /// At EOF: appends whatever is still held back (an unfinished line) to *out.
  void finish(std::string* out);
  /// The parsed line; unknown until the marker was seen.
  const RemoteProcess& process() const { return proc_; }

 private:
  void scan(std::string* out);
  bool done_ = false;
  size_t seen_ = 0;   ///< bytes fed while searching
  std::string held_;  ///< bytes not yet known to be output (< kWindow + a line)
  RemoteProcess proc_;
};

/// Parses "PID PGID TICKS" (decimal, single spaces); false when malformed.
bool parse_remote_process(std::string_view fields, RemoteProcess* out);

}  // namespace ratchet::transport
