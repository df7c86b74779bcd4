#include "engine/host_run.h"

#include "transcript/run_events.h"
#include "engine/fetch.h"

#include <fmt/format.h>

#include <chrono>

#include "playbook/when.h"
#include "util/clock.h"
#include "steps/prepare.h"

namespace ratchet::engine {

using nlohmann::json;

static long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The step's values as templates see them: steps.ID.*.
static playbook::Value outcome_value(const StepOutcome& o) {
  return playbook::Value::table({{"status", name(o.status)},
                                 {"rung", o.rung},
                                 {"rc", o.rc},
                                 {"stdout", o.out},
                                 {"stderr", o.err},
                                 {"ms", o.ms},
                                 {"holders", steps::to_value(o.holders)},
                                 {"holders_left", steps::to_value(o.holders_left)},
                                 {"gpus", o.gpus},
                                 {"gpus_after", o.gpus_after}});
}

// steps.ID = v; an included step's dotted id (INCLUDE.ID) nests, so that
// {{ steps.INCLUDE.ID.FIELD }} walks to it.
static void set_step_value(playbook::Value& scope, const std::string& id, const playbook::Value& v) {
  playbook::Value* at = &scope["steps"];
  for (size_t b = 0, e; (e = id.find('.', b)) != std::string::npos; b = e + 1) {
    at = &(*at)[id.substr(b, e - b)];
    if (!at->is_table()) *at = playbook::Value::table();
  }
  (*at)[id.substr(id.rfind('.') == std::string::npos ? 0 : id.rfind('.') + 1)] = v;
}

// step_start: where the step was written, for a step an include brought in.
static json step_start(const std::string& host, const plan::Step& step) {
  json e = {{"host", host}, {"step", step.id}, {"kind", name(step.kind)}, {"name", step.name}};
  if (step.source.find(", included from ") != std::string::npos) e["source"] = step.source;
  return e;
}

std::string stopped_reason(const std::string& step) { return fmt::format("host stopped at {}", step); }

void HostRun::skip(const plan::Step& step, const std::string& reason, const std::string& stopped_at) {
  const std::string& host = job_.host.name;
  auto& w = *shared_.w;
  w.emit(transcript::events::kStepStart, step_start(host, step));
  json end = {{"host", host}, {"step", step.id}, {"status", name(StepStatus::skipped)}, {"rung", 0}, {"ms", 0}, {"reason", reason}};
  if (!stopped_at.empty()) end["stopped_at"] = stopped_at;
  w.emit(transcript::events::kStepEnd, end);
  StepOutcome skipped;  // every field defined, so later templates render
  skipped.status = StepStatus::skipped;
  skipped.reason = reason;
  set_step_value(job_.scope, step.id, outcome_value(skipped));
  if (!step.register_as.empty()) set_step_value(job_.scope, step.register_as, outcome_value(skipped));
  rep_.counts["skipped"]++;
  rep_.skipped.push_back({step.id, reason});
  shared_.progress->step_skipped(host, step.id, reason);
}

HostRun::HostRun(HostJob& job, transport::Transport& t, const RunShared& shared)
    : job_(job), t_(t), shared_(shared) {
  rep_.host = job.host.name;
  for (const char* k : {"ok", "changed", "escalated", "failed", "skipped"}) rep_.counts[k] = 0;
}

bool HostRun::connect() {
  const std::string& host = job_.host.name;
  auto& w = *shared_.w;
  start_ms_ = now_ms();
  started_at_ = util::rfc3339(std::chrono::system_clock::now());
  shared_.progress->connecting(host);
  // The executor records `connect` (or `unreachable`) as it does after a drop.
  ex_.emplace(t_, w, host, shared_.interrupted);
  transport::ConnectInfo info;
  if (auto err = ex_->connect(&info)) {
    shared_.progress->unreachable(host, err->message);
    rep_.status = host_key_failure(*err) ? HostStatus::host_key : HostStatus::unreachable;
    rep_.reason = err->message;
    rep_.cause = transport::cause_name(err->kind);
    ex_.reset();  // no session: nothing to run or skip
    return false;
  }
  std::string via;
  for (const auto& hop : info.via) via += (via.empty() ? " via " : ", ") + hop;
  shared_.progress->connected(host, fmt::format("{}@{}:{}{}", info.user, info.address, info.port, via));
  ex_->set_become_password(shared_.become_password);
  ex_->set_reconnect(shared_.reconnect_timeout, shared_.sleep);
  Progress* prog = shared_.progress;
  ex_->set_observer([prog, host](int rung, const std::string& role) { prog->command_started(host, rung, role); });
  rep_.status = HostStatus::ok;
  if (wants_lock()) {  // before the first step; fail closed: a lock not taken runs nothing
    if (std::string why = take_lock(false); !why.empty()) {
      bool interrupted = shared_.interrupted && shared_.interrupted->load();
      rep_.status = interrupted ? HostStatus::interrupted : HostStatus::failed;
      rep_.reason = why;
      lock_refused_ = true;
      return false;
    }
  }
  return true;
}

bool HostRun::commands_for(const plan::Step& p, steps::PreparedStep* out, std::string* err) const {
  if (p.runtime_refs.empty()) {  // final at plan time: runs byte for byte
    *out = p.prepared;
    return true;
  }
  const playbook::Playbook& pb = *job_.pb;
  if (p.index >= pb.steps.size() || pb.steps[p.index].id != p.id) {
    *err = fmt::format("step `{}`: not in the playbook the plan was made from", p.id);
    return false;
  }
  steps::PrepareOptions popt;
  popt.files = &pb.files;
  return steps::prepare_step(pb.steps[p.index], job_.scope, popt, out, err);
}

bool HostRun::run_step(size_t i) {
  const auto& step = job_.plan->steps.at(i);
  const std::string& host = job_.host.name;
  auto& w = *shared_.w;
  Progress& p = *shared_.progress;
  next_ = i;
  if (shared_.interrupted && shared_.interrupted->load()) {
    rep_.status = HostStatus::interrupted;
    return false;
  }
  if (w.failed()) {  // without a transcript nothing more is done: the run stops here
    rep_.status = HostStatus::failed;
    rep_.reason = fmt::format("{}; stopped before step {}", w.failure(), step.id);
    return false;
  }
  next_ = i + 1;
  if (!step.when.empty()) {
    bool go = true;
    std::string why;
    if (!playbook::eval_when(step.when, job_.scope, &go, &why) || !go) {
      skip(step, why.empty() ? fmt::format("when: {} is false", step.when) : why);
      return true;
    }
  }
  w.emit(transcript::events::kStepStart, step_start(host, step));
  p.step_started(host, step.id, step.name);
  ex_->set_step(step.id, step.become, step.become_user, step.capture);
  steps::PreparedStep ps;
  std::string err;
  StepOutcome o;
  const long long t0 = now_ms();
  if (!commands_for(step, &ps, &err)) {
    o.status = StepStatus::failed;
    o.reason = err;
  } else if (std::string why = ex_->ensure_become(0); !why.empty()) {
    o.status = StepStatus::failed;  // nothing of the step ran: sudo cannot be reached as asked
    o.reason = why;
  } else if (step.kind == playbook::Kind::fetch) {
    o = run_fetch(ps, *ex_, w, host, shared_.artifacts);
  } else if (step.kind == playbook::Kind::reboot) {
    o = run_reboot(ps);
    // The lock lived on the host's tmpfs: taken again over the new session.
    if (lock_held_ && t_.connected()) {
      lock_held_ = false;
      if (std::string why = take_lock(true); !why.empty()) {
        o.status = StepStatus::failed;
        o.reason = why;
      }
      ex_->set_step(step.id, step.become, step.become_user, step.capture);
    }
  } else {
    bool secret_input = false;
    for (const auto& r : ps.rungs)
      if (r.action && w.mask(r.action->stdin_data) != r.action->stdin_data) secret_input = true;
    ex_->set_redact_output(secret_input);
    o = run_ratchet(ps, *ex_, shared_.sleep);
    ex_->set_redact_output(false);
    if (secret_input) o.out = o.err = "***";  // never into later templates either
  }
  if (o.ms == 0) o.ms = now_ms() - t0;
  json end = {{"host", host}, {"step", step.id}, {"status", name(o.status)}, {"rung", o.rung}, {"ms", o.ms}};
  if (!o.reason.empty()) end["reason"] = o.reason;
  w.emit(transcript::events::kStepEnd, end);
  set_step_value(job_.scope, step.id, outcome_value(o));
  if (!step.register_as.empty()) set_step_value(job_.scope, step.register_as, outcome_value(o));
  rep_.counts[std::string(name(o.status))]++;
  p.step_done(host, step.id, o);
  if (!ex_->lost().empty()) {  // the host is gone: no later step can run
    rep_.status = shared_.interrupted && shared_.interrupted->load() ? HostStatus::interrupted : HostStatus::failed;
    rep_.failed_step = step.id;  // the step that stopped the host, over any it continued past
    rep_.stopped_at = step.id;
    rep_.reason = o.status == StepStatus::failed ? o.reason : ex_->lost();
    return false;
  }
  if (o.status != StepStatus::failed) return true;
  bool interrupted = shared_.interrupted && shared_.interrupted->load();
  rep_.status = interrupted ? HostStatus::interrupted : HostStatus::failed;
  bool stops = step.on_failure == playbook::OnFailure::stop || interrupted;
  // The host's reason is the step that stopped it; else the first it continued past.
  if (stops || rep_.failed_step.empty()) {
    rep_.failed_step = step.id;
    rep_.reason = o.reason;
  }
  if (stops) rep_.stopped_at = step.id;
  return !stops;
}

HostReport HostRun::finish() {
  // A host that stopped at a failed step (not one interrupted: ^C stops the
  // run, and records nothing more) lists every step it did not run.
  if (rep_.status == HostStatus::failed && ex_) {
    const auto& steps = job_.plan->steps;
    for (size_t k = next_; k < steps.size(); ++k) {
      if (!rep_.stopped_at.empty())
        skip(steps[k], stopped_reason(rep_.stopped_at), rep_.stopped_at);
      else if (shared_.w->failed())  // nothing more can be recorded; the recap still lists them
        skip(steps[k], "not run: the transcript cannot be written");
      else if (lock_refused_)
        skip(steps[k], "not run: the host's lock was not taken");
    }
  }
  if (ex_) {
    release_lock();
    // A become host's audit line goes through sudo: probed (and recorded) before host_end.
    if (shared_.guards && shared_.guards->audit && !job_.plan->guards.audit_log.empty() && job_.host.become) {
      ex_->set_final(true);
      ex_->set_step("(audit)", true, job_.host.become_user);
      ex_->ensure_become(0);
      ex_->set_final(false);
    }
  }
  rep_.ms = start_ms_ ? now_ms() - start_ms_ : 0;
  transcript::HostEnd end{rep_.host, std::string(name(rep_.status)), rep_.counts, rep_.ms, std::nullopt, std::nullopt};
  if (!rep_.reason.empty()) end.reason = rep_.reason;
  if (!rep_.stopped_at.empty()) end.stopped_at = rep_.stopped_at;
  transcript::write_host_end(*shared_.w, end);
  write_audit();  // after host_end: it carries that line's digest
  ex_.reset();
  t_.close();
  shared_.progress->host_done(rep_);
  return rep_;
}

HostReport run_host(HostJob& job, transport::Transport& t, const RunShared& shared) {
  HostRun hr(job, t, shared);
  if (hr.connect())
    for (size_t i = 0; i < hr.step_count() && hr.run_step(i); ++i) {
    }
  return hr.finish();
}

}  // namespace ratchet::engine
