#include "run/probe_run.h"

#include <chrono>

#include "run/jobs.h"
#include "plan/codec.h"
#include "run/cancel.h"
#include "run/end.h"
#include "run/exit.h"
#include "run/secrets.h"
#include "steps/library.h"
#include "transcript/run_events.h"
#include "util/clock.h"

namespace ratchet::run {

namespace {

transcript::RunStart probe_start(const ProbeRequest& r, const std::string& run_id, const playbook::Value& secrets,
                                 bool become_password) {
  transcript::RunStart e;
  e.mode = transcript::RunStart::Mode::probe;
  e.run_id = run_id;
  e.argv = r.settings.argv;
  e.playbook = r.pb->name;
  e.playbook_path = r.pb->path;
  e.playbook_sha256 = r.pb->sha256;
  e.vars = r.pb->vars;
  e.secret_names = secret_names(secrets);
  for (const auto& hp : r.plan->hosts) e.targets.push_back(hp.host.name);
  e.forks = r.settings.forks;
  e.become_password = become_password;
  e.selection = plan::step_selection_json(*r.plan);
  return e;
}

}  // namespace

std::optional<ProbeRun> probe_plan(const ProbeRequest& r) {
  const auto wall0 = std::chrono::steady_clock::now();
  std::string err;
  auto secrets = resolve_secrets(*r.pb, &err);
  if (!secrets) {
    *r.settings.diag << "ratchet: error: " << err << "\n";
    return std::nullopt;
  }
  std::optional<std::string> become_password = r.settings.become_password(&err);
  if (!err.empty()) {
    *r.settings.diag << "ratchet: error: " << err << "\n";
    return std::nullopt;
  }
  // No transcript: a writer that records nothing (a probe leaves nothing behind).
  auto w = r.settings.transcript.empty() ? std::make_shared<transcript::Writer>()
                                         : std::make_shared<transcript::Writer>(r.settings.transcript);
  mask_secrets(*w, *secrets, r.settings.extra_secrets);
  ProbeRun out;
  const auto now = std::chrono::system_clock::now();
  out.at = util::rfc3339(now);
  transcript::write_run_start(*w, probe_start(r, new_run_id(now), *secrets, become_password.has_value()));
  transcript::write_host_library(*w, steps::host_library_sha256(), steps::host_library());

  // Real secrets, no run info: run.* and steps.* stay placeholders.
  auto jobs = host_jobs(*r.pb, r.inv, r.extra_keys, *r.plan, r.settings.endpoint, r.pinned, *secrets, nullptr);
  engine::ProbeShared shared;
  shared.w = w.get();
  shared.interrupted = &cancel_token();
  shared.become_password = become_password ? &*become_password : nullptr;
  {
    CancelOnSignals on_signals(nullptr);
    out.reps = engine::probe_fleet(
        jobs, r.settings.forks, [](const transport::Endpoint& e) { return transport::make_ssh_transport(e); },
        shared);
  }
  for (auto& rep : out.reps) rep.reason = w->mask(rep.reason);
  std::vector<engine::HostStatus> statuses;
  for (const auto& rep : out.reps) statuses.push_back(rep.status);
  out.code = exit_code_for(statuses, cancelled());
  if (w->failed() && (out.code == kExitOk || out.code == kExitUnreachable)) out.code = kExitFailed;
  out.ms = util::ms_since(wall0);
  std::map<std::string, int> host_status;
  for (const auto& rep : out.reps) host_status[std::string(name(rep.status))]++;
  end_run(*w, {exit_name(out.code), out.code, std::nullopt, host_status, std::nullopt, out.ms});
  if (w->failed()) out.transcript_failure = w->failure();
  out.writer = w;
  return out;
}

plan::Findings findings_of(const ProbeRun& r) {
  plan::Findings f;
  f.at = r.at;
  for (const auto& h : r.reps) f.hosts.push_back(engine::findings_of(h));
  return f;
}

}  // namespace ratchet::run
