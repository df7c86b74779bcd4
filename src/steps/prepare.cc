#include "steps/prepare.h"

#include <fmt/format.h>

#include "playbook/local_files.h"
#include "playbook/schema.h"
#include "playbook/key_rules.h"
#include "playbook/template.h"
#include "steps/kinds.h"

namespace ratchet::steps {

// The first reference in `written` to a value known only at run time (steps.*, run.*), or "".
static std::string runtime_ref(const playbook::Value& written) {
  if (written.is_array()) {
    for (const auto& e : written.as_array())
      if (std::string r = runtime_ref(e); !r.empty()) return r;
    return "";
  }
  if (!written.is_string()) return "";
  std::string why;
  if (auto refs = playbook::template_refs(written.as_string(), &why))
    for (const auto& r : *refs)
      if (r.rfind("steps.", 0) == 0 || r.rfind("run.", 0) == 0) return r;
  return "";
}

// resolve(), the place of a problem apart: *at and *err ("`pid` ...").
static bool resolve_at(const playbook::Action& a, const playbook::Value& scope, bool plan,
                       playbook::ActionKeys* out, playbook::SourcePos* at, std::string* err) {
  *out = a.keys;
  *at = a.where;
  if (!a.kind) {  // only a playbook that failed to load lacks one
    *err = "no known `kind`";
    return false;
  }
  for (const auto& spec : playbook::kind_spec(*a.kind).fields) {
    playbook::FieldBase& f = spec.field(*out);
    if (!f.written) continue;
    std::string why;
    std::optional<playbook::Value> v;
    if (spec.shell && f.written->is_string())
      v = playbook::render(f.written->as_string(), scope, {playbook::RenderMode::shell, plan}, &why);
    else
      v = playbook::render_tree(*f.written, scope, plan, &why);
    playbook::KeyProblem p;
    *at = f.pos;
    if (!v) {
      *err = fmt::format("`{}`: {}", spec.name, why);
      return false;
    }
    // A shell key's text, unquoted, must not be empty or blank (as a literal must not).
    std::string text;
    if (spec.shell && f.written->is_string()) {
      auto tv = playbook::render(f.written->as_string(), scope, {playbook::RenderMode::text, plan}, &why);
      if (tv && tv->is_string() && !playbook::read_word(spec.name, *tv, true, &text, &p)) {
        *err = fmt::format("{} (rendered from {})", p.message, util::toml_text(*f.written));
        return false;
      }
    }
    if (!spec.read(spec.name, *v, true, *out, &p)) {
      // In a plan, a run-time value is a placeholder: a typed key cannot wait for it.
      if (plan)
        if (std::string later = runtime_ref(*f.written); !later.empty()) {
          *err = fmt::format("`{}` must be known when the plan is made, and `{}` is known only when the run gets there; "
                             "only text keys (command, pattern, holders_of, content, ...) may use steps.* and run.*",
                             spec.name, later);
          return false;
        }
      *err = fmt::format("{} (rendered from {}){}", p.message, util::toml_text(*f.written), p.hint.empty() ? "" : "; " + p.hint);
      return false;
    }
    f.written.reset();  // read: what the builder sees is the value
  }
  // Keys that must agree (a service's scope and user), as the loader holds literals to it.
  std::string key;
  playbook::KeyProblem p;
  if (playbook::keys_disagree(*out, &key, &p)) {
    for (const auto& spec : playbook::kind_spec(*a.kind).fields)
      if (spec.name == key) *at = spec.field(*out).pos;
    *err = p.message + (p.hint.empty() ? "" : "; " + p.hint);
    return false;
  }
  return true;
}

bool resolve(const playbook::Action& a, const playbook::Value& scope, bool plan, playbook::ActionKeys* out,
             std::string* err) {
  playbook::SourcePos at;
  if (resolve_at(a, scope, plan, out, &at, err)) return true;
  *err = at.str() + ": " + *err;
  return false;
}

// `rung` is 0 for the step's own action, k for the k-th escalation rung.
static bool prepare_action(const playbook::Step& step, const playbook::Action& a, size_t rung,
                           const playbook::Value& scope, const PrepareOptions& opt, Rung* out,
                           std::string* err) {
  const bool own = rung == 0;
  const std::string what = own ? fmt::format("step `{}`", step.id) : fmt::format("rung {} of step `{}`", rung, step.id);
  playbook::ActionKeys keys;
  std::string why;
  playbook::SourcePos at;
  if (!resolve_at(a, scope, opt.plan, &keys, &at, &why)) {
    *err = fmt::format("{}: {}: {}", at.str(), what, why);
    return false;
  }
  BuildContext ctx;
  ctx.timeout = step.timeout;
  out->settle = step.settle;
  out->retries = step.retries;
  out->delay = step.delay;
  if (!own) {  // a rung's own timing, else the step's
    ctx.timeout = a.timeout.value_or(ctx.timeout);
    out->settle = a.settle.value_or(out->settle);
    out->delay = a.delay.value_or(out->delay);
    out->retries = a.retries.value_or(out->retries);
  }
  // The local file the action names, read at load (playbook/local_files.h).
  playbook::LocalFileKey lk = playbook::local_file_key(a);
  const playbook::LocalFile* file = nullptr;
  if (lk.field) {
    auto it = opt.files ? opt.files->find(playbook::local_file_name(a))
                        : std::map<std::string, playbook::LocalFile>::const_iterator{};
    if (!opt.files || it == opt.files->end()) {
      *err = fmt::format("{}: {}: `{}`: the file was not read when the playbook loaded", lk.field->pos.str(), what,
                         lk.key);
      return false;
    }
    file = &it->second;
  }
  if (const auto* w = std::get_if<playbook::WriteAction>(&keys)) {
    if (file) {
      auto v = playbook::render(file->bytes, scope, {playbook::RenderMode::text, opt.plan}, &why);
      if (!v) {
        *err = fmt::format("{}: {}", file->path, why);
        return false;
      }
      ctx.write_content = playbook::to_text(*v);
    } else if (w->content.given) {
      ctx.write_content = *w->content;
    }
  }
  if (std::holds_alternative<playbook::ServiceAction>(keys) && file) ctx.unit_file_content = file->bytes;
  if (std::holds_alternative<playbook::CopyAction>(keys) && file) ctx.tree = &file->tree;
  build_rung(keys, ctx, out);
  if (!own) out->check.clear();  // a rung's own check is unused: the step's check decides
  return true;
}

bool prepare_step(const playbook::Step& step, const playbook::Value& scope, const PrepareOptions& opt,
                  PreparedStep* out, std::string* err) {
  out->rungs.clear();
  Rung own;
  if (!prepare_action(step, step.body, 0, scope, opt, &own, err)) return false;
  if (step.kind == playbook::Kind::verify) own.action.reset();
  out->action_is_result = step.kind == playbook::Kind::run && own.check.empty();
  if (own.action && !own.action->expect.exit_codes.empty()) out->expect_exit = own.action->expect.exit_codes;
  out->rungs.push_back(std::move(own));
  for (size_t i = 0; i < step.escalate.size(); ++i) {
    Rung r;
    if (!prepare_action(step, step.escalate[i], i + 1, scope, opt, &r, err)) return false;
    out->rungs.push_back(std::move(r));
  }
  return true;
}

}  // namespace ratchet::steps
