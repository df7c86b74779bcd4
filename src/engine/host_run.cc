#include "engine/host_run.h"

#include <fmt/format.h>

#include <thread>

#include "engine/executor.h"
#include "engine/scope.h"
#include "steps/prepare.h"

namespace ratchet::engine {

using nlohmann::json;

static json outcome_json(const StepOutcome& o) {
  return {{"status", o.status}, {"rung", o.rung},     {"rc", o.rc},
          {"stdout", o.out},    {"stderr", o.err},    {"ms", o.ms},
          {"holders", o.holders}, {"holders_left", o.holders_left}};
}

HostReport run_host(HostJob& job, transport::Transport& t, transcript::Writer& w, Progress& p,
                    const std::atomic<bool>* interrupted, const Sleeper& sleep) {
  const playbook::Playbook& pb = *job.pb;
  const std::string& host = job.host.name;
  HostReport rep;
  rep.host = host;
  for (const char* k : {"ok", "changed", "escalated", "failed", "skipped"}) rep.counts[k] = 0;

  transport::ConnectInfo info;
  if (auto err = t.connect(&info)) {
    json ev = {{"host", host}, {"cause", transport::cause_name(err->kind)}, {"message", err->message}};
    if (!err->methods_tried.empty()) ev["methods_tried"] = err->methods_tried;
    w.emit("unreachable", ev);
    p.unreachable(host, err->message);
    bool key = err->kind == transport::FailureKind::host_key_unknown ||
               err->kind == transport::FailureKind::host_key_changed;
    rep.status = key ? "host_key" : "unreachable";
    w.emit("host_end", {{"host", host}, {"status", rep.status}, {"counts", rep.counts}});
    return rep;
  }
  w.emit("connect", {{"host", host}, {"address", info.address}, {"port", info.port},
                     {"user", info.user}, {"fingerprint", info.fingerprint},
                     {"auth_method", info.auth_method}, {"ms", info.ms}});
  p.connected(host, fmt::format("{}@{}:{}", info.user, info.address, info.port));

  Executor ex(t, w, host, interrupted);
  steps::PrepareOptions popt;
  popt.playbook_dir = pb.dir;
  rep.status = "ok";
  for (const auto& step : pb.steps) {
    if (interrupted && interrupted->load()) {
      rep.status = "interrupted";
      break;
    }
    if (!step.when.empty()) {
      bool go = true;
      std::string why;
      if (!eval_when(step.when, job.scope, &go, &why) || !go) {
        std::string reason = why.empty() ? fmt::format("when: {} is false", step.when) : why;
        w.emit("step_start", {{"host", host}, {"step", step.id}, {"kind", step.kind}, {"name", step.name}});
        w.emit("step_end", {{"host", host}, {"step", step.id}, {"status", "skipped"}, {"rung", 0},
                            {"ms", 0}, {"reason", reason}});
        job.scope["steps"][step.id] = {{"status", "skipped"}};
        rep.counts["skipped"]++;
        p.step_skipped(host, step.id, reason);
        continue;
      }
    }
    w.emit("step_start", {{"host", host}, {"step", step.id}, {"kind", step.kind}, {"name", step.name}});
    p.step_started(host, step.id, step.name);
    ex.set_step(step.id, step.become || job.host.become,
                !step.become_user.empty() ? step.become_user : job.host.become_user, step.capture);
    steps::PreparedStep ps;
    std::string err;
    StepOutcome o;
    if (!steps::prepare_step(step, job.scope, popt, &ps, &err)) {
      o.status = "failed";
      o.reason = err;
    } else {
      bool secret_input = false;
      for (const auto& r : ps.rungs)
        if (r.action && w.mask(r.action->stdin_data) != r.action->stdin_data) secret_input = true;
      ex.set_redact_output(secret_input);
      o = run_ratchet(ps, ex, sleep);
      ex.set_redact_output(false);
      if (secret_input) o.out = o.err = "***";  // never into later templates either
    }
    json end = {{"host", host}, {"step", step.id}, {"status", o.status}, {"rung", o.rung}, {"ms", o.ms}};
    if (!o.reason.empty()) end["reason"] = o.reason;
    w.emit("step_end", end);
    job.scope["steps"][step.id] = outcome_json(o);
    if (!step.register_as.empty()) job.scope["steps"][step.register_as] = outcome_json(o);
    rep.counts[o.status]++;
    p.step_done(host, step.id, o);
    if (o.status == "failed") {
      rep.status = (interrupted && interrupted->load()) ? "interrupted" : "failed";
      if (step.on_failure == playbook::OnFailure::stop || rep.status == "interrupted") break;
    }
  }
  w.emit("host_end", {{"host", host}, {"status", rep.status}, {"counts", rep.counts}});
  t.close();
  return rep;
}

std::vector<HostReport> run_hosts(std::vector<HostJob>& jobs, int forks,
                                  const TransportFactory& make, transcript::Writer& w, Progress& p,
                                  const std::atomic<bool>* interrupted, const Sleeper& sleep) {
  std::vector<HostReport> reports(jobs.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      if (interrupted && interrupted->load()) {
        reports[i] = {jobs[i].host.name, "interrupted", {}};
        continue;
      }
      auto t = make(jobs[i].endpoint);
      reports[i] = run_host(jobs[i], *t, w, p, interrupted, sleep);
    }
  };
  size_t n = std::max<size_t>(1, std::min<size_t>(forks > 0 ? forks : 1, jobs.size()));
  std::vector<std::thread> threads;
  for (size_t k = 0; k < n; ++k) threads.emplace_back(worker);
  for (auto& th : threads) th.join();
  return reports;
}

}  // namespace ratchet::engine
