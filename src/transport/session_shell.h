#pragma once
// Internal to the libssh backend: the session shell (docs/transport.md), one
// long-lived `/bin/sh` on one channel that runs each command as a fresh child
// of its own, so that an instant command costs one round trip.
#include <libssh/libssh.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "transport/ssh_transport.h"

namespace ratchet::transport::ssh {

struct ShellChannel;  // session_shell.cc

/// A become shell (docs/transport.md, "Become with a password"): the session
/// shell started once through `sudo -k -A` as `user`, which then runs every
/// command of that become with no sudo of its own.
struct BecomeStart {
  std::string user;      ///< "" = sudo's default (root)
  std::string password;  ///< one line (no newline, no NUL); sent once, after the payload
};

/// How sudo refused to start a become shell: its exit status and what it said.
struct SudoRefusal {
  int status = 1;
  std::string said;  ///< sudo's stderr (after ratchet's go line)
};

class SessionShell {
 public:
  SessionShell();
  ~SessionShell();
  SessionShell(const SessionShell&) = delete;
  SessionShell& operator=(const SessionShell&) = delete;

  /// Starts the shell on a new channel of the connected session `s` and waits
  /// up to `timeout` for its ready line. "" on success, else why not (the
  /// shell's own words, or libssh's), with nothing left open; *no_channel is
  /// set when no channel could be opened or used at all (a channel per
  /// command would fail the same way: not a reason to fall back). Returns
  /// "interrupted" (and *no_channel set) once *cancel is set: nothing is sent.
  /// With `become`, a become shell: sudo authenticates once, here; when sudo
  /// itself refuses (a wrong password, a sudoers rule), *refusal (non-null
  /// with become) holds what it said and the reason starts "sudo refused".
  std::string open(ssh_session s, const Target& t, util::Millis timeout, bool* no_channel,
                   const std::atomic<bool>* cancel = nullptr, const BecomeStart* become = nullptr,
                   std::optional<SudoRefusal>* refusal = nullptr);
  bool is_open() const;
  /// Takes in what came on the open shell's channel while no command ran:
  /// "" when the shell is still there; else how it ended ("channel closed",
  /// "exit 1", "output while idle"), and it is closed.
  std::string check_idle();

  /// Runs req on the open shell (the same guarantees as exec_channel). In a
  /// become shell req's become is the shell's own: the command runs with no
  /// sudo (a second channel, where one is needed, still goes through sudo). When
  /// the exchange does not end with the command's trailer (the shell died, a
  /// deadline, ^C) the shell is closed, ExecResult::error says why, and the
  /// next open() starts a fresh one. `ka` (nullable) is ticked meanwhile: a
  /// lost connection ends the exchange with its message.
  ExecResult exec(ssh_session s, const Target& t, const ExecRequest& req, KeepaliveWatch* ka = nullptr);

  /// Whether the last exec() ended because the shell could take no more
  /// requests (a command had removed its directory: it exits 96 before it
  /// reads the request): nothing of that request ran, a fresh shell may run it.
  bool last_not_started() const { return not_started_; }

  /// Closes the channel (the shell ends at EOF); safe to call twice.
  void close();

 private:
  std::unique_ptr<ShellChannel> ch_;
  std::string dir_;      ///< the shell's 0700 directory on the host
  bool become_ = false;  ///< a become shell: its commands run without sudo
  std::string library_;  ///< the host library the shell keeps in DIR/l ("" = none yet)
  bool not_started_ = false;  ///< last_not_started()
};

}  // namespace ratchet::transport::ssh
