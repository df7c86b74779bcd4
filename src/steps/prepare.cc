#include "steps/prepare.h"

#include <fmt/format.h>

#include "playbook/template.h"
#include "steps/kinds.h"

namespace ratchet::steps {

bool is_shell_field(playbook::Kind kind, const std::string& key) {
  switch (kind) {
    case playbook::Kind::run: return key == "command" || key == "check" || key == "unless";
    case playbook::Kind::verify: return key == "command";
    case playbook::Kind::reboot: return key == "command" || key == "test_command";
    case playbook::Kind::service:
    case playbook::Kind::kill:
    case playbook::Kind::write: return false;
  }
  return false;
}

// The bytes of the local file `key` names (read once, at load: playbook/local_files.h).
static const playbook::LocalFile* local_file(const PrepareOptions& opt, const Json& fields, const char* key) {
  if (!opt.files || !fields[key].is_string()) return nullptr;
  auto it = opt.files->find(fields[key].get<std::string>());
  return it == opt.files->end() ? nullptr : &it->second;
}

static bool prepare_action(const playbook::Step& step, const playbook::Action& a, bool own,
                           const Json& scope, const PrepareOptions& opt, Rung* out,
                           std::string* err) {
  if (!a.kind) {  // only a playbook that failed to load lacks one
    *err = fmt::format("{}: step `{}`{}: no known `kind`", a.where.str(), step.id, own ? "" : " rung");
    return false;
  }
  const playbook::Kind kind = *a.kind;
  playbook::RenderOptions shell{playbook::RenderMode::shell, opt.plan};
  Json fields = Json::object();
  auto where = [&](const std::string& key) {  // "file:line:col: step `id`: `key`: "
    auto it = a.pos.find(key);
    std::string at = it != a.pos.end() ? it->second.str() : a.where.str();
    return fmt::format("{}: step `{}`{}: `{}`: ", at, step.id,
                       own ? "" : " rung", key);
  };
  for (auto it = a.fields.begin(); it != a.fields.end(); ++it) {
    const std::string& key = it.key();
    std::string why;
    std::optional<Json> v;
    if (is_shell_field(kind, key) && it.value().is_string())
      v = playbook::render(it.value().get<std::string>(), scope, shell, &why);
    else
      v = playbook::render_tree(it.value(), scope, opt.plan, &why);
    if (!v) {
      *err = where(key) + why;
      return false;
    }
    fields[key] = *v;
  }
  BuildContext ctx;
  ctx.timeout = step.timeout;
  out->settle = step.settle;
  out->retries = step.retries;
  out->delay = step.delay;
  std::string why;
  if (!own) {  // a rung's own timing, else the step's
    ctx.timeout = a.timeout.value_or(ctx.timeout);
    out->settle = a.settle.value_or(out->settle);
    out->delay = a.delay.value_or(out->delay);
    out->retries = a.retries.value_or(out->retries);
  }

  if (kind == playbook::Kind::write) {
    if (fields.contains("template")) {
      const playbook::LocalFile* f = local_file(opt, fields, "template");
      if (!f) {
        *err = where("template") + "the template was not read when the playbook loaded";
        return false;
      }
      auto v = playbook::render(f->bytes, scope, {playbook::RenderMode::text, opt.plan}, &why);
      if (!v) {
        *err = fmt::format("{}: {}", f->path, why);
        return false;
      }
      ctx.write_content = playbook::to_text(*v);
    } else if (fields.contains("content")) {
      ctx.write_content = playbook::to_text(fields["content"]);
    }
  }
  if (kind == playbook::Kind::service && fields.contains("unit_file")) {
    const playbook::LocalFile* f = local_file(opt, fields, "unit_file");
    if (!f) {
      *err = where("unit_file") + "the unit file was not read when the playbook loaded";
      return false;
    }
    ctx.unit_file_content = f->bytes;
  }
  if (!build_rung(kind, fields, ctx, out, &why)) {
    // Point at the field the message names ("`path` must be absolute"), if any.
    playbook::SourcePos at = a.where;
    for (size_t open = why.find('`'); open != std::string::npos; open = why.find('`', open + 1)) {
      size_t close = why.find('`', open + 1);
      if (close == std::string::npos) break;
      auto it = a.pos.find(why.substr(open + 1, close - open - 1));
      if (it != a.pos.end()) {
        at = it->second;
        break;
      }
      open = close;
    }
    *err = fmt::format("{}: step `{}`{}: {}", at.str(), step.id, own ? "" : " rung", why);
    return false;
  }
  if (!own) out->check.clear();  // a rung's own check is unused: the step's check decides
  return true;
}

bool prepare_step(const playbook::Step& step, const Json& scope, const PrepareOptions& opt,
                  PreparedStep* out, std::string* err) {
  out->rungs.clear();
  Rung own;
  if (!prepare_action(step, step.body, true, scope, opt, &own, err)) return false;
  if (step.kind == playbook::Kind::verify) own.action.reset();
  out->action_is_result = step.kind == playbook::Kind::run && own.check.empty();
  if (own.action && own.action->expect.is_array()) {
    out->expect_exit.clear();
    for (const auto& x : own.action->expect) out->expect_exit.push_back(x.get<int>());
  }
  out->rungs.push_back(std::move(own));
  for (size_t i = 0; i < step.escalate.size(); ++i) {
    Rung r;
    if (!prepare_action(step, step.escalate[i], false, scope, opt, &r, err)) return false;
    out->rungs.push_back(std::move(r));
  }
  return true;
}

}  // namespace ratchet::steps
