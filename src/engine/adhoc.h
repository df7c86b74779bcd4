#pragma once
// One ad hoc command on one host (`ratchet exec`): connect, the lock when asked,
// the words as given (no host library), then the lock's release and the audit
// line over the same session. Many hosts: for_each_host() (fleet.h) runs these.
#include <atomic>
#include <string>
#include <vector>

#include "engine/host_lock.h"
#include "engine/status.h"
#include "playbook/model.h"
#include "transcript/writer.h"
#include "transport/transport.h"

namespace ratchet::engine {

/// What every host of one `ratchet exec` shares (the pointers outlive the call).
struct AdhocShared {
  std::string command;            ///< the words as given, joined with spaces
  util::Millis timeout{60'000};   ///< the command's deadline on the host (> 0)
  std::string timeout_text = "60s";  ///< --timeout as given, for "timed out after 60s"
  bool lock = false;              ///< --lock: take the host's lock around the command
  const RunGuards* guards = nullptr;  ///< run id, who, lock_wait, break_lock, mode "exec"
  std::string started;            ///< UTC RFC 3339: the start the audit line records
  transcript::Writer* w = nullptr;  ///< every host's events (a Writer with no file records nothing)
  const std::atomic<bool>* interrupted = nullptr;  ///< ^C / SIGTERM; may be null
};

/// How the command ended on one host.
struct AdhocResult {
  std::string host;
  /// ok: exited 0; failed: another exit status, a signal, its timeout, a lock
  /// refused or a transport error; unreachable / host_key: no session;
  /// interrupted: ^C stopped it (or it never started).
  HostStatus status = HostStatus::ok;
  transport::ExecResult r;  ///< output and exit of the command (exit_code -1: it did not run or end)
  bool connected = false;   ///< a session was opened (else `reason` is the connect error, naming the host)
  bool ran = false;         ///< the command was handed to the transport (not when the lock was refused)
  std::string reason;       ///< "" when it exited 0, else one line: "exit 3", "timed out after 1s ...", ...
  std::string cause;        ///< unreachable only: transport::cause_name() of the failure
  std::vector<std::string> warnings;  ///< the lock not released, the audit line not written
  long long ms = 0;         ///< connect to the end
};

/// Runs s.command on `host` over `t` (not yet connected) and records it in
/// *s.w. Never throws; every failure is in the result.
AdhocResult run_adhoc(const playbook::Host& host, transport::Transport& t, const AdhocShared& s);

}  // namespace ratchet::engine
