#pragma once
// Runs a step's commands on one host and records each in the transcript:
// command (rendered and as sent), output, exit, evidence; and its session:
// connect, and reconnect after a drop (session.h). Hands the transport typed
// commands (transport::ExecRequest); the transport wraps them for the wire.
#include <atomic>
#include <functional>
#include <map>
#include <string>

#include "engine/session.h"
#include "steps/action.h"
#include "transcript/writer.h"
#include "transport/transport.h"
#include "transport/wire.h"

namespace ratchet::engine {

class Executor {
 public:
  /// `interrupted` (may be null) is polled between commands: once set, run()
  /// returns a result with error "interrupted" without sending anything.
  Executor(transport::Transport& t, transcript::Writer& w, std::string host,
           const std::atomic<bool>* interrupted = nullptr);

  /// Sets the step id, become and output cap (bytes per stream) for the following commands.
  void set_step(const std::string& step_id, bool become, const std::string& become_user,
                size_t capture = 1 << 20);

  /// Opens the session (*info filled) and records `connect`, or `unreachable`
  /// and returns why not. `info` must not be null.
  std::optional<transport::ConnectError> connect(transport::ConnectInfo* info);

  /// Hands the transport `c` as a typed command (script, library, become,
  /// c.timeout on the host, the client deadline, `input` on stdin) and records
  /// command/output/exit events under `rung`; refusals are results, nothing sent.
  transport::ExecResult run(const steps::Command& c, int rung, const std::string& input);

  /// While fd >= 0, run()'s stdout goes to that file (at most `limit` bytes),
  /// not into the capture (fetch's downloads: transport::ExecRequest::stdout_fd).
  void set_stdout_sink(int fd, unsigned long long limit) { sink_fd_ = fd, sink_limit_ = limit; }

  /// The library sent with commands that call it (default: the host library,
  /// steps::wire_library()); null = none (`ratchet exec`'s ad hoc command).
  void set_library(const transport::Library* lib) { library_ = lib; }

  /// While on, output events carry only sizes, not data (a step that writes a
  /// secret: its checks print digests of it).
  void set_redact_output(bool on) { redact_ = on; }

  /// Records an evidence event for the current step.
  /// `fields` is a table (what the check or action found); host, step and rung are added.
  void evidence(int rung, util::Value fields);

  bool interrupted() const { return interrupted_ && interrupted_->load(); }

  /// While on, commands are sent (and not cancelled) after an interrupt too:
  /// the lock's release and the audit line go over the still-open session.
  void set_final(bool on) { final_ = on; }

  /// Sends `c` as run() does (the current step's become) but records nothing:
  /// the caller records one event of its own (the audit line, after host_end).
  /// Never reconnects; a closed or lost session is an error result.
  transport::ExecResult run_unrecorded(const steps::Command& c);

  /// Called before each command is sent with its rung and role (for progress).
  void set_observer(std::function<void(int rung, const std::string& role)> f) { observer_ = std::move(f); }

  /// The step id set by set_step().
  const std::string& step() const { return step_; }

  /// The become password (--ask-become-pass, ...), or null for none. Used only
  /// after `sudo -n` showed that sudo asks for one; the caller keeps it alive
  /// and has registered it as a transcript secret.
  void set_become_password(const std::string* password) { password_ = password; }

  /// Reconnects a dropped session before the next command: tries for `window`
  /// (0 = never), with backoff 0.5/1/2/4/5 s through `sleep`; each try is a
  /// `reconnect` event. A host-key failure is never retried.
  void set_reconnect(util::Millis window, std::function<void(util::Millis)> sleep) {
    reconnect_window_ = window;
    sleep_ = std::move(sleep);
  }
  /// "" while the session works; once reconnecting failed, why (every later
  /// run() then fails at once with this error, sending nothing).
  const std::string& lost() const { return lost_; }

  /// Before the first become command for a user: probes `sudo -n true` (and,
  /// if sudo asks for a password, checks the password with one `sudo -S true`).
  /// Returns "" when become works, else a one-line reason naming the fix; the
  /// probes are recorded as commands of role "become_probe". Cached per user.
  std::string ensure_become(int rung);

 private:
  // The typed command for `c` under `b`: the script, the library, input, the
  // become password when b.password, c.timeout on the host, client_deadline,
  // the cap, the cancel flag, a fresh run id.
  transport::ExecRequest command_for(const steps::Command& c, const std::string& input,
                                     const transport::Become& b) const;
  transport::ExecResult exec_recorded(const steps::Command& c, int rung, const std::string& input,
                                      const transport::Become& b);
  transport::ExecResult refused(int rung, std::string why);
  transport::Become become_for_current() const;
  bool reconnect(int rung);

  transport::Transport& t_;
  transcript::Writer& w_;
  std::string host_, step_;
  bool become_ = false;
  std::string become_user_;
  size_t capture_ = 1 << 20;
  bool redact_ = false;
  bool final_ = false;
  const std::atomic<bool>* interrupted_;
  const std::string* password_ = nullptr;
  std::function<void(int, const std::string&)> observer_;
  /// become user -> "nopasswd" | "password" | "failed: reason"
  std::map<std::string, std::string> sudo_mode_;
  util::Millis reconnect_window_{0};
  std::function<void(util::Millis)> sleep_;
  std::string lost_;
  const transport::Library* library_;
  int sink_fd_ = -1;
  unsigned long long sink_limit_ = 0;
};


}  // namespace ratchet::engine
