#pragma once
// The exact strings sent to a host: a POSIX sh wrapper that names the command's
// process, the watchdog that enforces its deadline on the host (see wire.cc for
// the rules), and privilege escalation. Pure string transforms, no I/O.
#include <string>
#include <string_view>

#include "transport/remote_process.h"
#include "util/duration.h"

namespace ratchet::transport {

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

/// The argv sudo is given for `command` under b (b.enabled), as an operator
/// writes it in a sudoers rule: "sudo -n -H [-u USER] -- /bin/sh -c COMMAND".
std::string sudo_argv(const Become& b, const std::string& command);

/// Extra time the client waits after the host-side deadline, so the host's kill
/// (and its exit signal) normally reports first.
inline constexpr util::Millis kClientGrace{3'000};

/// Most bytes a wire_command() string may have: sshd hands it to the login
/// shell as one argument, and Linux takes at most MAX_ARG_STRLEN (32 pages,
/// 131072 bytes, its NUL included) in one argument (execve(2), E2BIG).
inline constexpr size_t kMaxWireBytes = 131071;

/// The client-side deadline for a command whose host deadline is `timeout`:
/// timeout + kClientGrace (ms).
util::Millis client_deadline(util::Millis timeout);

/// When a command still running (or ended, but with its output still held
/// open) gets its host-side watchdog: after a tenth of its host timeout, at
/// least 500 ms and at most 10 s, never after the timeout itself (ms). Short
/// commands, the most, never need one; a loaded fleet does not pay for one per
/// command.
util::Millis arm_after(util::Millis timeout);

/// The sh script run as `/bin/sh -c SCRIPT /bin/sh RUN_ID COMMAND`: prints the
/// "[ratchet-pid RUN_ID] ..." line on stderr, exports RATCHET_RUN_ID, then runs
/// COMMAND in the same shell.
std::string_view run_script();

/// The sh script run as `/bin/sh -c SCRIPT ratchet PID PGID TICKS MS RUN_ID`:
/// checks the marker's numbers (exit 3 and "ratchet-watchdog: refused: ..." on
/// stderr when they do not name the command), then detaches and ends the
/// command MS ms from now (wire.cc says how).
std::string_view watchdog_script();

/// A fresh run id: 16 lowercase hex digits from the OS's random source.
std::string new_run_id();
/// Whether `id` is a run id (16 lowercase hex digits).
bool valid_run_id(std::string_view id);

/// The wire string for `command` (a sh command line). timeout > 0 (ms): through
/// run_script() with `run_id` (throws std::invalid_argument unless valid), so
/// that its deadline can be enforced on the host; <= 0: plain `/bin/sh -c`
/// (run_id unused). Wrapped in `sudo -n -H [-u USER] --` when b.enabled
/// (`sudo -k -S -p '' -H [-u USER] --` when b.password). Independent of the
/// login shell: always `exec` into /bin/sh.
std::string wire_command(const std::string& command, util::Millis timeout, const Become& b,
                         std::string_view run_id = {});

/// The wire string that lists, one "PID COMM" line each, the processes of the
/// command sent with `run_id` (RATCHET_RUN_ID in their environment) that
/// still run, with the same become as the command (for held_output_warning).
std::string held_output_query(std::string_view run_id, const Become& b);

/// The wire string that arms the watchdog for process p of the command sent
/// with `run_id`, `left` ms before its deadline (<= 0: stop it now), with the
/// same become as the command.
std::string watchdog_command(const RemoteProcess& p, util::Millis left, const Become& b,
                             std::string_view run_id);

}  // namespace ratchet::transport
