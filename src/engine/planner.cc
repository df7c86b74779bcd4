#include "engine/planner.h"

#include <fmt/format.h>

#include "engine/scope.h"
#include "steps/prepare.h"
#include "transport/wire.h"
#include "util/duration.h"

namespace ratchet::engine {

bool plan_host(const playbook::Playbook& pb, const playbook::Host& host,
               const nlohmann::json& scope, HostPlan* out, std::vector<std::string>* errors) {
  out->host = host;
  out->steps.clear();
  steps::PrepareOptions opt;
  opt.plan = true;
  opt.playbook_dir = pb.dir;
  bool ok = true;
  for (const auto& s : pb.steps) {
    PlannedStep p;
    p.step = &s;
    if (!s.when.empty()) {
      bool go = true;
      std::string why;
      if (!eval_when(s.when, scope, &go, &why)) {
        errors->push_back(fmt::format("host {}: {}: step `{}`: {}", host.name, s.where.str(), s.id, why));
        ok = false;
        continue;
      }
      p.when_note = fmt::format("runs only when `{}` (now {})", s.when, go ? "true: runs" : "false: skipped");
    }
    std::string err;
    if (!steps::prepare_step(s, scope, opt, &p.prepared, &err)) {
      errors->push_back(fmt::format("host {}: {}", host.name, err));
      ok = false;
      continue;
    }
    out->steps.push_back(std::move(p));
  }
  return ok;
}

StepFacts step_facts(const PlannedStep& p, const playbook::Host& host) {
  const playbook::Step& s = *p.step;
  StepFacts f;
  f.timeout = s.timeout;
  f.on_failure = s.on_failure == playbook::OnFailure::cont ? "continue" : "stop";
  if (playbook::becomes(s, host)) {
    f.become = playbook::become_user_for(s, host);
    const std::string& user = !s.become_user.empty() ? s.become_user : host.become_user;  // as host_run passes it
    f.sudo_argv = transport::sudo_argv({true, user, false}, "...");
  }
  for (size_t k = 0; k < p.prepared.rungs.size(); ++k) {
    const auto& r = p.prepared.rungs[k];
    const playbook::Action* a = k == 0 ? &s.body : k - 1 < s.escalate.size() ? &s.escalate[k - 1] : nullptr;
    RungFacts rf;
    rf.rung = k;
    rf.kind = r.kind.empty() && a ? a->kind : r.kind;
    rf.timeout = k > 0 && a && a->timeout ? *a->timeout : s.timeout;
    rf.settle = r.settle;
    rf.retries = r.retries;
    rf.delay = r.delay;
    if (rf.kind == "kill") {
      rf.wait = util::Millis(5'000);  // steps/kill_kind.cc's default
      if (a && a->fields.contains("wait")) {
        const auto& w = a->fields["wait"];
        std::string text = w.is_string() ? w.get<std::string>() : w.dump();
        std::string why;
        rf.wait = util::parse_duration(text, &why);
        if (!rf.wait) rf.wait_text = text;
      }
    }
    f.rungs.push_back(rf);
  }
  return f;
}

std::string stdout_matches(const steps::Command& c) {
  return c.judge == "matches" && c.expect.is_string() ? c.expect.get<std::string>() : "";
}

nlohmann::json plan_json(const HostPlan& hp) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& p : hp.steps) {
    const StepFacts facts = step_facts(p, hp.host);
    nlohmann::json cmds = nlohmann::json::array();
    for (size_t k = 0; k < p.prepared.rungs.size(); ++k) {
      const auto& r = p.prepared.rungs[k];
      auto add = [&](const steps::Command& c) {
        nlohmann::json j = {{"rung", k}, {"role", c.role}, {"command", c.text},
                            {"timeout_ms", c.timeout.count()}};
        if (auto re = stdout_matches(c); !re.empty()) j["stdout_matches"] = re;
        if (!c.stdin_data.empty()) j["stdin"] = c.stdin_secret ? "***" : c.stdin_data;
        cmds.push_back(j);
      };
      for (const auto& c : r.check) add(c);
      if (r.action) add(*r.action);
      for (const auto& c : r.after) {  // reboot: run on the new session once the host is back
        add(c);
        cmds.back()["after_reboot"] = true;
      }
    }
    nlohmann::json rungs = nlohmann::json::array();
    for (const auto& rf : facts.rungs) {
      nlohmann::json r = {{"rung", rf.rung},
                          {"kind", rf.kind},
                          {"timeout_ms", rf.timeout.count()},
                          {"settle_ms", rf.settle.count()},
                          {"retries", rf.retries},
                          {"delay_ms", rf.delay.count()}};
      if (rf.wait) r["wait_ms"] = rf.wait->count();
      else if (!rf.wait_text.empty()) r["wait"] = rf.wait_text;
      rungs.push_back(r);
    }
    nlohmann::json s = {{"id", p.step->id},
                        {"kind", p.step->kind},
                        {"name", p.step->name},
                        {"timeout_ms", facts.timeout.count()},
                        {"on_failure", facts.on_failure},
                        {"rungs", rungs},
                        {"commands", cmds}};
    if (!p.when_note.empty()) s["when"] = p.step->when;
    // The sudo user the step runs as, or false: as the login user.
    s["become"] = facts.become.empty() ? nlohmann::json(false) : nlohmann::json(facts.become);
    if (!facts.sudo_argv.empty()) s["sudo_argv"] = facts.sudo_argv;
    steps.push_back(s);
  }
  return {{"host", hp.host.name}, {"steps", steps}};
}

}  // namespace ratchet::engine
