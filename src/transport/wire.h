#pragma once
// The exact strings sent to a host: a POSIX sh wrapper that enforces a
// deadline on the host, and privilege escalation. Pure string transforms, no I/O.
#include <string>
#include <string_view>

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
};

/// Extra time the client waits after the host-side deadline, so the host's kill
/// (and its exit signal) normally reports first.
inline constexpr util::Millis kClientGrace{3'000};

/// The client-side deadline for a command whose host deadline is `timeout`:
/// timeout + kClientGrace (ms).
util::Millis client_deadline(util::Millis timeout);

/// The sh script run as `/bin/sh -c SCRIPT ratchet COMMAND TIMEOUT_MS`: starts a
/// detached watchdog, then execs `/bin/sh -c COMMAND` (see wire.cc for the rules).
std::string_view deadline_script();

/// The wire string for `command` (a sh command line) with a host-side deadline of
/// `timeout` (ms; <= 0 = none), wrapped in `sudo -n -H [-u USER] --` when
/// b.enabled (`sudo -k -S -p '' -H [-u USER] --` when b.password). Independent of the login shell: always `exec` into /bin/sh.
std::string wire_command(const std::string& command, util::Millis timeout, const Become& b);

}  // namespace ratchet::transport
