#include "engine/planner.h"

#include <fmt/format.h>

#include "engine/scope.h"
#include "steps/prepare.h"

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

nlohmann::json plan_json(const HostPlan& hp) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& p : hp.steps) {
    nlohmann::json cmds = nlohmann::json::array();
    for (size_t k = 0; k < p.prepared.rungs.size(); ++k) {
      const auto& r = p.prepared.rungs[k];
      auto add = [&](const steps::Command& c) {
        nlohmann::json j = {{"rung", k}, {"role", c.role}, {"command", c.text},
                            {"timeout_ms", c.timeout.count()}};
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
    nlohmann::json s = {{"id", p.step->id}, {"kind", p.step->kind}, {"name", p.step->name},
                        {"commands", cmds}};
    if (!p.when_note.empty()) s["when"] = p.step->when;
    if (playbook::becomes(*p.step, hp.host))
      s["become"] = playbook::become_user_for(*p.step, hp.host);  // run through sudo as this user
    steps.push_back(s);
  }
  return {{"host", hp.host.name}, {"steps", steps}};
}

}  // namespace ratchet::engine
