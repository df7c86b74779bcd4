#include "run/plan_run.h"

#include <fmt/format.h>

#include "engine/artifacts.h"
#include "engine/fleet.h"
#include "plan/scope.h"
#include "run/jobs.h"
#include "plan/codec.h"
#include "run/cancel.h"
#include "run/end.h"
#include "run/exit.h"
#include "run/secrets.h"
#include "steps/library.h"
#include "transcript/run_events.h"
#include "util/clock.h"
#include "util/who.h"

namespace ratchet::run {

namespace {

/// What a run has once run_start is written.
struct Opened {
  std::shared_ptr<transcript::Writer> w;
  playbook::Value secrets;
  std::optional<std::string> become_password;
  plan::RunInfo info;
};

transcript::HostCountField count_field(const playbook::HostCount& c) { return {c.set, c.percent, c.value}; }

transcript::RunStart run_start_of(const PlanRequest& r, const Opened& o) {
  const auto& pb = *r.pb;
  const auto& P = *r.plan;
  transcript::RunStart e;
  e.run_id = o.info.id;
  e.argv = r.settings.argv;
  e.playbook = pb.name;
  e.playbook_path = pb.path;
  e.playbook_sha256 = pb.sha256;
  e.playbook_source = pb.source;
  e.vars = pb.vars;
  e.secret_names = secret_names(o.secrets);
  for (const auto& hp : P.hosts) e.targets.push_back(hp.host.name);
  e.strategy = std::string(playbook::name(P.policy.strategy));
  e.forks = r.settings.forks;
  e.serial = count_field(P.policy.serial);
  e.max_fail = count_field(P.policy.max_fail);
  e.become_password = o.become_password.has_value();
  e.run_by = util::who_here();
  e.selection = plan::step_selection_json(P);  // which steps --tags, --skip-tags, --start-at, --step chose
  if (r.applied) e.plan = transcript::RunStart::Plan{r.applied->digest, r.applied->path, P.made.at, P.made.by};
  return e;
}

/// Secrets, the become password, the writer, run_start and host_library.
/// nullopt: stopped with `*code` (the reason written to diag).
std::optional<Opened> open_run(const PlanRequest& r, int* code) {
  const Settings& s = r.settings;
  std::string err;
  *code = kExitUsage;
  auto secrets = resolve_secrets(*r.pb, &err);
  if (!secrets) {
    *s.diag << "ratchet: error: " << err << "\n";
    return std::nullopt;
  }
  for (const auto& warn : short_secret_warnings(*secrets)) *s.diag << "ratchet: warning: " << warn << "\n";
  Opened o;
  o.secrets = *secrets;
  o.become_password = s.become_password(&err);
  if (!err.empty()) {
    *s.diag << "ratchet: error: " << err << "\n";
    return std::nullopt;
  }
  o.info = {new_run_id(s.started), util::rfc3339(s.started)};
  o.w = std::make_shared<transcript::Writer>(s.transcript);
  // The become password is masked from its first use on (engine/executor.cc).
  mask_secrets(*o.w, o.secrets, s.extra_secrets);
  transcript::write_run_start(*o.w, run_start_of(r, o));
  // The library's text once, in an event of its own: run_start stays small (schema 2; docs/transcript.md).
  transcript::write_host_library(*o.w, steps::host_library_sha256(), steps::host_library());
  if (o.w->failed()) {  // not even run_start went in: run nothing that could not be recorded
    *s.diag << "ratchet: error: " << o.w->failure()
            << "; nothing was run (free space or pick another --transcript)\n";
    *code = kExitFailed;
    return std::nullopt;
  }
  return o;
}

/// The lock and the audit line on each host (docs/playbook.md, "Lock and audit").
engine::RunGuards guards_of(const PlanRequest& r, const std::string& run_id) {
  engine::RunGuards g;
  g.run_id = run_id;
  g.who = util::who_here();  // who runs it now (a saved plan's made.by may be another)
  g.lock_all = r.settings.lock;
  g.break_lock = r.settings.break_lock;
  g.lock_wait = r.settings.lock_wait;
  g.mode = r.applied ? "apply" : "run";
  g.playbook = r.pb->name;
  g.playbook_sha256 = r.pb->sha256;
  g.plan_digest = r.applied ? r.applied->digest : plan::digest_of(plan::plan_json(*r.plan, true));
  return g;
}

/// The exit code, the counts and run_end, once every host ended.
void end_plan_run(PlanResult& out, std::chrono::steady_clock::time_point wall0) {
  auto& w = *out.writer;
  for (auto& rep : out.reps) rep.reason = w.mask(rep.reason);  // reasons quote host output
  std::vector<engine::HostStatus> statuses;
  for (const auto& rep : out.reps) statuses.push_back(rep.status);
  out.code = exit_code_for(statuses, cancelled());
  // The transcript broke mid-run: the hosts stopped before their next step.
  if (w.failed() && (out.code == kExitOk || out.code == kExitUnreachable)) out.code = kExitFailed;
  for (const auto& rep : out.reps) {
    out.host_status[std::string(name(rep.status))]++;
    for (const auto& [k, v] : rep.counts) out.totals[k] += v;
  }
  out.ms = util::ms_since(wall0);
  end_run(w, {exit_name(out.code), out.code, out.totals, out.host_status, std::nullopt, out.ms});
}

}  // namespace

PlanResult run_plan(const PlanRequest& r, const Display& d, std::chrono::steady_clock::time_point wall0) {
  PlanResult out;
  auto opened = open_run(r, &out.code);
  if (!opened) return out;
  out.ran = true;
  out.writer = opened->w;
  out.run_id = opened->info.id;
  engine::Progress* progress = d.started({out.run_id, out.writer.get()});

  auto jobs = host_jobs(*r.pb, r.inv, r.extra_keys, *r.plan, r.settings.endpoint, r.applied.has_value(),
                        opened->secrets, &opened->info);
  const auto guards = guards_of(r, out.run_id);
  engine::RunShared shared;
  shared.w = out.writer.get();
  shared.progress = progress;
  shared.interrupted = &cancel_token();
  shared.sleep = sleep_unless_cancelled;  // in slices, so ^C is noticed within 200 ms
  shared.become_password = opened->become_password ? &*opened->become_password : nullptr;
  shared.reconnect_timeout = r.settings.reconnect_timeout;
  shared.artifacts = r.settings.artifacts.empty() ? engine::default_artifacts(r.settings.transcript, out.run_id)
                                                  : r.settings.artifacts;
  shared.guards = &guards;
  {
    CancelOnSignals on_signals(
        "ratchet: second interrupt: leaving now; commands still running on hosts run on until their "
        "deadline, and the transcript has no run_end\n");
    out.reps = engine::run_fleet(jobs, engine::FleetPolicy{r.plan->policy, r.settings.forks},
                                 [](const transport::Endpoint& e) { return transport::make_ssh_transport(e); },
                                 shared);
  }
  d.hosts_done();
  end_plan_run(out, wall0);
  return out;
}

}  // namespace ratchet::run
