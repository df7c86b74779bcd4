#include "plan/build.h"

#include <fmt/format.h>

#include <algorithm>

#include "playbook/local_files.h"
#include "playbook/schema.h"
#include "playbook/template.h"
#include "playbook/when.h"
#include "steps/prepare.h"
#include "transport/wire.h"

namespace ratchet::plan {

namespace {

void collect_refs(const playbook::Value& v, std::vector<std::string>* out) {
  if (v.is_string()) {
    std::string err;
    if (auto refs = playbook::template_refs(v.as_string(), &err))
      out->insert(out->end(), refs->begin(), refs->end());
  } else if (v.is_array()) {
    for (const auto& x : v.as_array()) collect_refs(x, out);
  } else if (v.is_table()) {
    for (const auto& [k, x] : v.as_table()) collect_refs(x, out);
  }
}

}  // namespace

std::vector<std::string> runtime_refs(const playbook::Playbook& pb, const playbook::Step& s) {
  std::vector<std::string> all;
  auto add_action = [&](const playbook::Action& a) {
    playbook::each_key(a, [&](const playbook::FieldSpec&, const playbook::FieldBase& b) {
      if (b.written) collect_refs(*b.written, &all);
    });
    std::string err;
    if (const playbook::LocalFile* f = playbook::local_file_of(pb, a); f && f->role == "template")
      if (auto refs = playbook::template_refs(f->bytes, &err)) all.insert(all.end(), refs->begin(), refs->end());
  };
  add_action(s.body);
  for (const auto& r : s.escalate) add_action(r);
  std::vector<std::string> out;
  for (const auto& r : all) {
    std::string root = r.substr(0, r.find('.'));
    bool runtime = root == "steps" || root == "run" || pb.secrets.contains(root);
    if (runtime && std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

bool plan_host(const playbook::Playbook& pb, const playbook::Host& host, const playbook::Value& scope,
               HostPlan* out, std::vector<std::string>* errors, const std::vector<bool>* keep) {
  out->host = host;
  out->guards = playbook::resolve_guards(pb.guards, host.guards);
  out->steps.clear();
  out->vars = playbook::Value::table();
  for (const auto& it : scope.as_table()) {
    static const char* const kBuiltins[] = {"host", "run", "playbook", "ratchet", "steps"};
    if (std::find(std::begin(kBuiltins), std::end(kBuiltins), it.first) != std::end(kBuiltins)) continue;
    if (pb.secrets.contains(it.first)) continue;
    out->vars[it.first] = it.second;
  }
  steps::PrepareOptions opt;
  opt.plan = true;
  opt.files = &pb.files;
  bool ok = true;
  for (size_t i = 0; i < pb.steps.size(); ++i) {
    if (keep && i < keep->size() && !(*keep)[i]) continue;  // left out by the selection
    const playbook::Step& s = pb.steps[i];
    Step p;
    p.index = i;
    p.id = s.id;
    p.name = s.name;
    p.source = playbook::origin(s);
    p.when = s.when;
    p.on_failure = s.on_failure;
    p.register_as = s.register_as;
    p.capture = s.capture;
    p.timeout = s.timeout;
    if (!s.when.empty()) {
      bool go = true;
      std::string why;
      if (!playbook::eval_when(s.when, scope, &go, &why)) {
        auto at = s.body.pos.find("when");  // the `when` line, else the step's
        errors->push_back(fmt::format("host {}: {}: step `{}`: {}", host.name,
                                      (at == s.body.pos.end() ? s.where : at->second).str(), s.id, why));
        ok = false;
        continue;
      }
      p.when_note = fmt::format("runs only when `{}` (now {})", s.when, go ? "true: runs" : "false: skipped");
    }
    p.become = playbook::becomes(s, host);
    if (p.become) {
      p.become_user = !s.become_user.empty() ? s.become_user : host.become_user;  // as sudo -u gets it
      p.become_shown = playbook::become_user_for(s, host);
      p.sudo_argv = transport::sudo_argv({true, p.become_user, false}, "...");
    }
    std::string err;
    if (!steps::prepare_step(s, scope, opt, &p.prepared, &err)) {
      errors->push_back(fmt::format("host {}: {}", host.name, err));
      ok = false;
      continue;
    }
    p.kind = p.prepared.rungs[0].kind;  // the step's own: rung 0
    for (size_t k = 0; k < p.prepared.rungs.size(); ++k) {
      const auto& r = p.prepared.rungs[k];
      const playbook::Action* a = k == 0 ? &s.body : k - 1 < s.escalate.size() ? &s.escalate[k - 1] : nullptr;
      RungFacts rf;
      rf.timeout = k > 0 && a && a->timeout ? *a->timeout : s.timeout;
      if (r.kind == playbook::Kind::kill) rf.wait = r.wait;
      p.rung_facts.push_back(rf);
    }
    p.runtime_refs = runtime_refs(pb, s);
    out->steps.push_back(std::move(p));
  }
  return ok;
}

std::string stdout_matches(const steps::Command& c) {
  return c.judge == steps::Judge::matches ? c.expect.stdout_matches : "";
}

std::string gpus_judged(const steps::Command& c) {
  if (c.judge != steps::Judge::gpus || !c.expect.gpus) return "";
  const auto& g = *c.expect.gpus;
  std::string out = fmt::format("GPUs {}, idle at most {} MiB used", fmt::join(g.gpus, ", "), g.max_memory_used_mib);
  if (!g.user.empty()) out += fmt::format(", user {}", fmt::join(g.user, ", "));
  if (!g.exclude.empty()) out += fmt::format(", exclude {}", fmt::join(g.exclude, ", "));
  return out;
}

}  // namespace ratchet::plan
