#pragma once
// The run lock and the audit line on one host (docs/playbook.md, "Lock and
// audit"; docs/audit.md): host library calls over the host's own session,
// through the executor, each recorded in the transcript.
#include <string>

#include "engine/executor.h"
#include "transcript/writer.h"
#include "util/duration.h"

namespace ratchet::engine {

/// What the lock and the audit line need from the run.
struct RunGuards {
  std::string run_id;
  std::string who;            ///< the controller's user@host
  bool lock_all = false;      ///< --lock: take the lock on every host, whatever its `lock`
  bool break_lock = false;    ///< --break-lock: take a stale lock (its holder's session gone)
  util::Millis lock_wait{0};  ///< --lock-wait: how long a held lock is waited for (0 = fail at once)
  bool audit = true;          ///< false: no audit line
  std::string mode;           ///< "run", "apply" or "exec"
  std::string playbook, playbook_sha256, plan_digest;  ///< "" for exec
};

/// Takes the lock at `path` on `host` over ex's session (recorded as the pseudo
/// step "(lock)" and a `lock` event). `again` (after a reboot): this run's own
/// lock or none, never waited for or broken. Returns "" when held, else why
/// not: "locked by WHO since SINCE (run ID)", "stale lock ...", "could not check ...".
std::string take_lock(Executor& ex, transcript::Writer& w, const std::string& host, const std::string& path,
                      const RunGuards& g, bool again);

/// Releases the lock at `path` that g.run_id holds, after an interrupt too.
/// Returns "" when released, else why not (a warning: the lock goes stale with its session).
std::string release_lock(Executor& ex, transcript::Writer& w, const std::string& host, const std::string& path,
                         const RunGuards& g);

/// One host's facts in its audit line.
struct AuditFacts {
  std::string host, status, started;  ///< started: UTC RFC 3339
  std::string digest;                 ///< the sha256 of its host_end line ("" = none: exec)
  bool become = false;                ///< write it through sudo
  std::string become_user;
};

/// Appends the audit line to `path` on the host (docs/audit.md), recorded as
/// one `audit` event. Returns "" when written, else the warning.
std::string write_audit(Executor& ex, transcript::Writer& w, const std::string& path, const RunGuards& g,
                        const AuditFacts& f);

}  // namespace ratchet::engine
