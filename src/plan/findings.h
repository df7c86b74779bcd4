#pragma once
// What a probe found (docs/plan.md#probe): per host, per step, the verdict and
// its evidence. `plan --probe` prints it, `plan --probe --out` saves it in the
// plan file, and `apply` of that file compares a new probe against it.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "playbook/kind.h"
#include "steps/holders.h"

namespace ratchet::plan {

/// What a step would do now.
enum class ProbeVerdict {
  ok,               ///< the check holds: nothing would be sent but the check
  would_act,        ///< the check fails (or there is none): the action would run
  could_not_check,  ///< the check could not look (fail-closed), or could not be sent
  not_probed,       ///< `probe = false`: its check was not run
  skipped,          ///< a false `when`: `run` would skip it too
};

/// The verdict as written: "ok", "would_act", "could_not_check", "not_probed", "skipped".
std::string_view name(ProbeVerdict v);
/// The verdict `s` names exactly (as name() writes it), or nullopt.
std::optional<ProbeVerdict> parse_probe_verdict(std::string_view s);

/// What the probe found for one step.
struct StepFinding {
  std::string id, name;
  playbook::Kind kind = playbook::Kind::run;
  ProbeVerdict verdict = ProbeVerdict::could_not_check;
  std::string reason;  ///< the check's own words (why it fails, a note), masked
  bool no_check = false;  ///< a run step without check/unless/creates: it acts every time
  std::string action;     ///< would_act: the command the step's own action sends ("" = none)
  std::string rung;       ///< would_act with no action of its own: rung 1's command
  /// would_act, but the step has neither an action nor a rung (a verify that
  /// fails): run would fail the step, so the text says "would fail".
  bool no_remedy = false;
  std::vector<std::string> depends_on;  ///< earlier would-act steps whose results or resources it reads
  std::vector<steps::Holder> holders;   ///< kill, no_holders, absent, a busy port: the processes selected now
  std::vector<std::pair<std::string, std::string>> state;  ///< service: active, sub, enabled, reload, file
  bool would_create = false;  ///< write: the file does not exist
  std::string diff;           ///< write: unified diff of content, mode and owner, secrets masked ("" = none)
  std::string output;         ///< a failing command check's output (first lines, masked)
  long long ms = 0;
  bool operator==(const StepFinding&) const = default;
};

/// What the probe found on one host, as the plan file keeps it.
struct HostFindings {
  std::string host;
  std::string status;     ///< engine::HostStatus's name: "ok", "failed", "unreachable", "host_key", "interrupted"
  std::string reason;     ///< why it is not "ok" ("" = it is)
  std::string connected;  ///< "user@address:port" ("" = not reached)
  std::vector<StepFinding> steps;
  long long ms = 0;
  bool operator==(const HostFindings&) const = default;
};

/// A whole probe, saved with its plan.
struct Findings {
  std::string at;  ///< RFC 3339 UTC: when the probe ran
  std::vector<HostFindings> hosts;
  bool operator==(const Findings&) const = default;
};

/// What differs on one host between the probe saved with the plan (`then`) and
/// a probe now, one line per difference, for people ("gpus_free: new holder
/// PID 77 sleep (user root): ..."). Compared: the host's reach, each step's
/// verdict, its holders (by PID and start time; the same process running
/// another program or holding other files is named too), its state (a unit's,
/// a file's sha256, mode, owner and group), and whether its file would be
/// created or differs as before. Not compared: timings, the check's output and
/// reason words. Empty: nothing changed.
std::vector<std::string> changes_since(const HostFindings& then, const HostFindings& now);

}  // namespace ratchet::plan
