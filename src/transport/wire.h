#pragma once
// The exact strings sent to a host: a POSIX sh wrapper that names the command's
// process, the watchdog that enforces its deadline on the host (see wire.cc for
// the rules), privilege escalation, the host library ahead of a script, and a
// typed command (transport.h) made into all of that. Pure string transforms, no I/O.
#include <string>
#include <string_view>

#include "transport/remote_process.h"
#include "util/duration.h"

namespace ratchet::transport {

struct ExecRequest;  // transport.h

/// Privilege escalation for one command through sudo(8).
struct Become {
  bool enabled = false;
  std::string user;  ///< "" = sudo's default (root)
  /// sudo asks for a password: `sudo -k -S -p ''` reads it as the first line of
  /// stdin (one byte at a time, so the rest stays the command's input); -k makes
  /// sudo ask every time, so a cached credential never turns that line into input.
  /// false: `sudo -n`, which fails at once instead of prompting.
  bool password = false;
  /// Runs sudo under `env LC_ALL=C` so that its messages are sudo's own
  /// English ones whatever the host's locale: for the become probe only (the
  /// command's own locale is left alone).
  bool c_locale = false;
};

/// Shell functions sent ahead of a script that calls them (the host library,
/// steps/library.h), and the line the transcript records in their place.
struct Library {
  std::string_view text;       ///< sent before the script, then "\n"
  std::string_view reference;  ///< one comment line recorded instead of `text` (sent_form)
  std::string_view marker;     ///< a script that does not contain it calls none of them: sent alone
};

/// `script` as it goes out: lib->text, "\n", then the script when lib is set
/// and the script contains lib->marker; else `script` unchanged.
std::string with_library(const std::string& script, const Library* lib);
/// The same with lib->reference in place of lib->text (what the transcript records).
std::string with_library_reference(const std::string& script, const Library* lib);

/// The argv sudo is given for `command` under b (b.enabled), as an operator
/// writes it in a sudoers rule: "sudo -n -H [-u USER] -- /bin/sh -c COMMAND".
std::string sudo_argv(const Become& b, const std::string& command);

/// Extra time the client waits after the host-side deadline, so the host's kill
/// (and its exit signal) normally reports first.
inline constexpr util::Millis kClientGrace{3'000};

/// Most bytes a wire_command() string may have under become: sudo is given
/// it as one argument, and Linux takes at most MAX_ARG_STRLEN (32 pages,
/// 131072 bytes, its NUL included) in one argument (execve(2), E2BIG).
inline constexpr size_t kMaxWireBytes = 131071;

/// The exec request of every command, helper and session shell: one fixed
/// string that sh, dash, bash, zsh, ksh, fish, tcsh/csh and BusyBox ash all
/// parse alike (no quote, no `!`, no backslash, no `$`). The login shell
/// execs /bin/sh, which reads its first line from stdin (exec_line()).
inline constexpr std::string_view kExecRequest = "exec /bin/sh -s ratchet-wire";

/// The first line sent on stdin after kExecRequest, the bootstrap: it holds
/// no part of the command. `__g=HEAD;` first, then a guard (`$1` must be
/// ratchet-wire: a shell that an rc file put in /bin/sh's place, reading
/// stdin, stops there), then the go line "[ratchet-go HEAD-TAIL]" on stdout
/// and stderr (an rc file that read the line's first bytes took `__g=HEAD`
/// with them: no go line), then it reads exactly `payload_bytes` bytes of
/// stdin (dd iflag=fullblock), checks that they end with kPayloadEnd, and
/// evals them; `exit` after. The client sends the payload (payload_of) and the
/// rest of stdin only once it has read the go line: nothing of the command
/// ever reaches a host that did not run this line whole.
std::string exec_line(std::string_view go_id, size_t payload_bytes);

/// "[ratchet-go HEAD-TAIL]\n" (go_id's two halves): ratchet's own first words
/// on each stream; what comes before it is the login's (an rc file's).
std::string go_line(std::string_view go_id);

/// The last bytes of every payload: a payload cut short is never run.
inline constexpr std::string_view kPayloadEnd = "\n#ratchet-end";

/// `command_line` as the bootstrap reads it: the line, then kPayloadEnd.
std::string payload_of(std::string_view command_line);

/// The environment entry that ratchet's own helper processes on a host carry
/// (the session shell, its readers, the watchdog; never a command): the host
/// library never selects a process whose /proc/PID/environ holds it
/// (docs/host-library.md, "What is never selected"). Set with `env` as they
/// are started: no argv holds it, so no kill pattern matches or forges it.
inline constexpr std::string_view kSelfEnv = "RATCHET_SELF=1";

/// The client-side deadline for a command whose host deadline is `timeout`:
/// timeout + kClientGrace (ms).
util::Millis client_deadline(util::Millis timeout);

/// When a command still running (or ended, but with its output still held
/// open) gets its host-side watchdog: after a tenth of its host timeout, at
/// least 500 ms and at most 10 s, never after the timeout itself (ms). Short
/// commands, the most, never need one; a loaded fleet does not pay for one per
/// command.
util::Millis arm_after(util::Millis timeout);

/// The sh script run as `/bin/sh -c SCRIPT /bin/sh RUN_ID COMMAND [MS WATCHDOG]`:
/// with MS, first starts WATCHDOG (watchdog_script()) detached on the host for
/// itself, MS ms (HostWatch::on); prints the "[ratchet-pid RUN_ID] ..." line on
/// stderr, exports RATCHET_RUN_ID, then runs COMMAND in the same shell.
std::string_view run_script();

/// The sh script run as `/bin/sh -c SCRIPT ratchet PID PGID TICKS MS RUN_ID
/// [PARENT SESSION]`: checks the marker's numbers (exit 3 and "ratchet-watchdog: refused: ..." on
/// stderr when they do not name the command), then detaches and ends the
/// command MS ms from now, or once the connection that started it is gone
/// (given PARENT and SESSION: the run wrapper's; wire.cc says how).
std::string_view watchdog_script();

/// The session shell (session_wire.h, docs/transport.md), run as
/// `/bin/sh -c SCRIPT ratchet-session HELLO`.
std::string_view session_script();

/// A fresh run id: 16 lowercase hex digits from the OS's random source.
std::string new_run_id();
/// Whether `id` is a run id (16 lowercase hex digits).
bool valid_run_id(std::string_view id);

/// Whether the run wrapper starts the watchdog on the host itself (on: the
/// channel path and the local backend, where nothing else may reach the host
/// in time) or leaves the deadline to the client (off: the session shell's
/// child, whose guard takes the watchdog in band).
enum class HostWatch { on, off };

/// The sh command line for `command`, run by the /bin/sh that kExecRequest
/// starts (exec_line's payload). timeout > 0 (ms): through run_script() with `run_id`
/// (throws std::invalid_argument unless valid), so that its deadline can be
/// enforced on the host: in that same shell (`set -- RUN_ID COMMAND [MS
/// WATCHDOG]; RUN; exit`; MS and WATCHDOG with HostWatch::on), or under become
/// `exec sudo -n -H [-u USER] -- /bin/sh -c RUN /bin/sh RUN_ID COMMAND [MS
/// WATCHDOG]` (`sudo -k -S -p '' -H ...` when b.password);
/// <= 0: `exec [sudo ...] /bin/sh -c COMMAND` (run_id unused).
std::string wire_command(const std::string& command, util::Millis timeout, const Become& b,
                         std::string_view run_id = {}, HostWatch w = HostWatch::on);

/// The wire string that lists, one "PID COMM" line each, the processes of the
/// command sent with `run_id` (RATCHET_RUN_ID in their environment) that
/// still run, with the same become as the command (for held_output_warning).
std::string held_output_query(std::string_view run_id, const Become& b);

/// The wire string that arms the watchdog for process p of the command sent
/// with `run_id`, `left` ms before its deadline (<= 0: stop it now), with the
/// same become as the command.
std::string watchdog_command(const RemoteProcess& p, util::Millis left, const Become& b,
                             std::string_view run_id);

/// What the exit event's `watchdog` records for a command whose watchdog the
/// client asked for on a second channel: `second` ("armed", or why not) unless
/// that failed and the run wrapper runs the watchdog on the host (p.watched):
/// then "on host" (the deadline and the end of the connection still hold).
std::string watchdog_report(const std::string& second, const RemoteProcess& p);

/// A typed command made ready for an exec channel (both backends use it).
struct Wire {
  std::string command{kExecRequest};  ///< the exec request's string: always kExecRequest
  std::string line;          ///< stdin's first line: exec_line(go_id, size of the payload)
  /// After the go line: the payload (payload_of(wire_command(script with its
  /// library))), sudo -S's password line (become.password), then the input.
  std::string stdin_data;
  std::string run_id;        ///< the marker's and watchdog's id; "" when not wrapped (no host deadline)
  std::string become_stdin;  ///< what a second channel's sudo reads first: the password line, or ""
  std::string go_id;         ///< the go line's id: the run id, or a fresh one when not wrapped
};

/// req for the wire: exec_line, then as stdin the payload of
/// wire_command(with_library(script), host_timeout, become, run_id). Throws
/// std::invalid_argument for a host deadline without a valid run id.
Wire wire_form(const ExecRequest& req);

/// `command_line` (a helper: the watchdog, the holder query) for the wire,
/// with `become_stdin` after its go line and a fresh go id.
Wire helper_wire(const std::string& command_line, const std::string& become_stdin);

/// The transcript's `sent` for req: its payload's command line with the
/// library's reference line in place of its text (same run id, same become).
std::string sent_form(const ExecRequest& req);

/// "" when req can be sent; else why not, the same words as the executor
/// records: "refused: the command holds a NUL byte, ..." or "refused: the
/// command is N bytes as sent; ..." (under become, its sudo argument over kMaxWireBytes).
std::string unsendable(const ExecRequest& req);

}  // namespace ratchet::transport
