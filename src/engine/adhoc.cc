#include "engine/adhoc.h"

#include <fmt/format.h>

#include <chrono>

#include "engine/executor.h"
#include "engine/session.h"
#include "playbook/guards.h"
#include "playbook/model.h"
#include "steps/library.h"
#include "util/clock.h"

namespace ratchet::engine {

AdhocResult run_adhoc(const playbook::Host& host, transport::Transport& t, const AdhocShared& s) {
  const auto t0 = std::chrono::steady_clock::now();
  AdhocResult out;
  out.host = host.name;
  out.r.exit_code = -1;
  const playbook::Guards guards = playbook::resolve_guards({}, host.guards);
  // Through the same executor as a step's commands: the same connect and
  // command/output/exit events, the same refusals before sending.
  Executor ex(t, *s.w, host.name, s.interrupted);
  transport::ConnectInfo info;
  if (auto err = ex.connect(&info)) {
    out.status = host_key_failure(*err) ? HostStatus::host_key : HostStatus::unreachable;
    out.reason = err->message;
    out.cause = transport::cause_name(err->kind);
    out.ms = util::ms_since(t0);
    return out;
  }
  out.connected = true;
  // The audit line (after the command, or after a lock refused), over the same session.
  auto audit = [&](const char* status) {
    if (guards.audit_log.empty() || !s.guards) return;
    AuditFacts f{host.name, status, s.started, "", host.become, host.become_user};
    if (std::string warn = write_audit(ex, *s.w, guards.audit_log, *s.guards, f); !warn.empty())
      out.warnings.push_back(warn);
  };
  auto stopped = [&] { return s.interrupted && s.interrupted->load(); };
  if (s.lock && s.guards)
    if (std::string locked = take_lock(ex, *s.w, host.name, guards.lock_path, *s.guards, false); !locked.empty()) {
      out.status = stopped() ? HostStatus::interrupted : HostStatus::failed;
      out.reason = locked + "; nothing was run";
      audit(stopped() ? "interrupted" : "failed");
      t.close();
      out.ms = util::ms_since(t0);
      return out;
    }
  ex.set_step("exec", false, "");
  ex.set_library(nullptr);  // the words as given: no host library
  steps::Command c;
  c.role = steps::Role::action;
  c.text = s.command;
  c.timeout = s.timeout;
  out.ran = true;
  out.r = ex.run(c, 0, "");
  const auto& r = out.r;
  // Over the same session, after ^C too: the lock's release, then the audit line.
  ex.set_library(&steps::wire_library());
  if (s.lock && s.guards)
    if (std::string warn = release_lock(ex, *s.w, host.name, guards.lock_path, *s.guards); !warn.empty())
      out.warnings.push_back(warn);
  if (r.error == "interrupted") {
    out.status = HostStatus::interrupted;
    // "on host": no second channel opened (MaxSessions 1); the wrapper's own
    // watchdog ends the command once this connection closes, as ratchet exits.
    out.reason = r.watchdog == "on host" ? "interrupted; the remote command ends as ratchet's connection closes"
                                         : "interrupted; the remote command was stopped";
  } else if (!r.error.empty()) {
    out.status = HostStatus::unreachable;  // the session broke under the command
    out.reason = r.error;
    out.cause = "other";
  } else if (r.timed_out) {  // our own deadline ended it, whatever signal did it
    out.status = HostStatus::failed;
    out.reason = fmt::format("timed out after {}{}", s.timeout_text, r.signal.empty() ? "" : " (ended by SIG" + r.signal + ")");
  } else if (!r.signal.empty()) {
    out.status = HostStatus::failed;
    out.reason = "killed by SIG" + r.signal;
  } else if (r.exit_code != 0) {
    out.status = HostStatus::failed;
    out.reason = fmt::format("exit {}", r.exit_code);
  }
  audit(out.status == HostStatus::interrupted ? "interrupted" : out.status == HostStatus::ok ? "ok" : "failed");
  t.close();
  out.ms = util::ms_since(t0);
  return out;
}

}  // namespace ratchet::engine
