#pragma once
// The session shell's protocol (docs/transport.md), as pure strings: how it
// is started, one request, the child's command line, the end marker that
// splits a stream, and the trailer. No I/O: session_shell.cc does that.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "transport/transport.h"
#include "util/duration.h"

namespace ratchet::transport {

/// The payload that starts the session shell after the exec request and the
/// bootstrap line (wire.h kExecRequest, exec_line): payload_of(`exec env
/// RATCHET_SELF=1 /bin/sh -c SESSION ratchet-session HELLO`) (HELLO: a fresh
/// nonce, so that a login shell's rc file cannot print the ready line). The
/// client sends it once the go line came, and nothing more until ready.
std::string session_start_payload(std::string_view hello);

/// The payload that starts a become shell instead (docs/transport.md, "Become
/// with a password"): the login user's starter (become_script below), marked
/// as ratchet's own, given `user` ("" = sudo's default, root) and ROOT, the
/// line that sudo runs as `/bin/sh -c ROOT ...`: it puts the login's LC_ALL
/// back and execs the session shell as session_start_payload does. The client
/// sends sudo's password line right after it, then nothing until ready.
std::string become_start_payload(std::string_view hello, const std::string& user);

/// The become shell's starter (src/transport/sh/become.sh joined, as wire.h's
/// scripts are), run as the login user as `/bin/sh -c SCRIPT ratchet-become
/// USER ROOT`: reads sudo's password line from stdin, runs `sudo -k -A` once.
std::string_view become_script();

/// The line the shell prints once ready, without its directory:
/// "ratchet-session HELLO ready " (then DIR and '\n').
std::string session_ready_prefix(std::string_view hello);

/// A fresh end marker: 32 lowercase hex digits from the OS's random source.
std::string new_session_nonce();

/// What one command is, as the session shell receives it.
struct SessionRequest {
  std::string library;  ///< the host library's text, sent once per shell ("" = none, or already there)
  std::string child;    ///< the file the shell sources in `setsid /bin/sh -c "exec 2>DIR/e; . DIR/w"`
  /// sudo -S's password line without its newline: to sudo through a fifo, in
  /// no file. Has a value only under become with a password.
  std::optional<std::string> password;
  std::string stdin_data;
  std::string query;  ///< one line, run with /bin/sh -c when output is held open; "" = none
  util::Millis grace{2'000};
  std::string run_id;  ///< in the child's argv, where the watchdog looks for it
};

/// Whether req's script sources the host library from the shell's file DIR/l:
/// it calls the library, and runs as the login user or as root (sudo to
/// another user cannot read the 0700 directory: the library goes inline).
bool library_from_file(const ExecRequest& req);

/// The child for `req` (which must have a valid run id): the run wrapper
/// (wire.h run_script) with its arguments set, or the wire command under
/// become, for a script led by an EXIT trap that writes the exit status to
/// DIR/s, then the library: `. DIR/l` when library_from_file, else its text.
std::string session_child(const ExecRequest& req, std::string_view dir);

/// req made into a SessionRequest for the shell whose directory is `dir`:
/// the library when library_from_file and !library_sent, the child, sudo
/// -S's password (ahead of the stdin instead when it holds a newline or a
/// NUL, which one line cannot carry), the stdin, the held-output query (none
/// when sudo needs a password: it would have no stdin to read it from).
SessionRequest session_request(const ExecRequest& req, std::string_view dir, bool library_sent);

/// The bytes sent for r: "NONCE WLEN ILEN GRACE LLEN RUN_ID PW\n", the query and
/// "\n", with PW 1 the password and "\n", then the library, the child and the
/// stdin (LLEN, WLEN and ILEN bytes). GRACE in seconds, 3 decimals.
std::string session_frame(std::string_view nonce, const SessionRequest& r);

/// Splits a stream at the first `marker`: the bytes before it are output, let
/// out as soon as they cannot be the marker's start; the bytes after it are kept.
class MarkerSplit {
 public:
  explicit MarkerSplit(std::string marker) : marker_(std::move(marker)) {}
  /// Feeds n bytes; appends what is certainly output to *out.
  void feed(const char* data, size_t n, std::string* out);
  bool found() const { return found_; }
  /// The bytes after the marker (once found).
  const std::string& after() const { return after_; }

 private:
  std::string marker_;
  std::string held_;
  std::string after_;
  bool found_ = false;
};

/// A helper (the watchdog's command line) for the guard that reads the
/// shell's stdin while the child runs: "NONCE LEN PW\n", sudo -S's password
/// and "\n" when given (PW 1), then the LEN bytes of `command_line`. Sent on
/// the shell's own channel: no second channel (docs/transport.md).
std::string session_helper_frame(std::string_view nonce, const std::string& command_line,
                                 const std::optional<std::string>& password);

/// What one of the guard's report lines ("STATUS FIRST-STDERR-LINE") says, in
/// the words of the second channel's watchdog: "armed", or "watchdog: exit N: ...".
std::string helper_outcome(std::string_view report_line);

/// The trailer that follows the end marker on stdout: " end exit N HELD HLEN
/// GLEN\n" or " end signal NAME HELD HLEN GLEN\n", then HLEN and GLEN bytes.
struct SessionTrailer {
  int exit_code = -1;   ///< -1 with a signal
  std::string signal;   ///< "TERM", ... ("" = it exited)
  bool held = false;    ///< output was still held open after the grace
  std::string holders;  ///< the query's output: "PID COMM" lines
  /// The guard's reports, one line per helper it ran, in order (helper_outcome).
  std::vector<std::string> helpers;
};

/// Parses `after` (MarkerSplit::after of stdout). nullopt while incomplete;
/// *bad is set (and nullopt returned) when it cannot be a trailer.
std::optional<SessionTrailer> parse_trailer(std::string_view after, bool* bad);

}  // namespace ratchet::transport
