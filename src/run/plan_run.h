#pragma once
// A plan's run, for `run` and `apply`: the transcript, secrets, run_start,
// the host jobs, the lock and audit, the fleet under one cancel token, run_end.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/host_run.h"
#include "engine/progress.h"
#include "plan/plan.h"
#include "playbook/model.h"
#include "run/request.h"
#include "transcript/writer.h"

namespace ratchet::run {

/// The saved plan `apply` executes (run_start's "plan").
struct Applied {
  std::string path;    ///< absolute
  std::string digest;  ///< "sha256:..."
};

/// Run plan P, made from pb (and inv), on its hosts.
struct PlanRequest {
  const playbook::Playbook* pb = nullptr;
  const playbook::Inventory* inv = nullptr;  ///< null: ad hoc hosts only
  std::vector<std::string> extra_keys;       ///< the names given with -e
  const plan::Plan* plan = nullptr;
  std::optional<Applied> applied;            ///< apply: the plan file it came from
  Settings settings;                         ///< settings.transcript: the file (never "")
};

/// What the caller shows once run_start is written.
struct Started {
  std::string run_id;
  const transcript::Writer* w = nullptr;  ///< its mask, for what is shown
};

/// The caller's side while the run goes, each called once on the calling thread.
struct Display {
  /// run_start is written: say what runs; return where progress goes (it must outlive the run).
  std::function<engine::Progress*(const Started&)> started;
  /// Every host ended, before run_end: stop a live view.
  std::function<void()> hosts_done = [] {};
};

struct PlanResult {
  int code = 0;       ///< the exit code (README.md, "Exit codes")
  bool ran = false;   ///< false: stopped before any host (2: a secret or password unreadable, printed;
                      ///< 1: run_start could not be written)
  std::string run_id;
  std::vector<engine::HostReport> reps;     ///< in P's hosts' order; reasons masked
  std::map<std::string, int> totals;        ///< step statuses over every host
  std::map<std::string, int> host_status;   ///< hosts per status
  long long ms = 0;                         ///< wall time since `wall0`
  std::shared_ptr<transcript::Writer> writer;  ///< its mask, digests, head and failure
};

/// Runs the request; `wall0` is when the command began (run_end's ms).
PlanResult run_plan(const PlanRequest& r, const Display& d, std::chrono::steady_clock::time_point wall0);

}  // namespace ratchet::run
