// [defaults] and [[step]] tables -> Step (docs/playbook.md).
#include <fmt/format.h>

#include "playbook/loader_internal.h"
#include "playbook/schema.h"
#include "util/rules.h"
#include "util/spell.h"

namespace ratchet::playbook {
namespace {

util::Millis millis(const Value& v) {
  std::string err;
  return util::parse_duration(v.as_string(), &err).value_or(util::Millis(0));
}

// Reports schema problems of the table at `path`; `ctx` names it ("step `stop`").
void report(const Diag& d, const DocPath& path, const std::vector<SchemaProblem>& probs,
            const std::string& ctx) {
  for (const auto& p : probs) {
    if (p.key.empty()) {
      // "step has no `kind`" -> "step `a` has no `kind`"; others -> "step `a`: ..."
      std::string m = p.message;
      for (std::string w : {"step ", "rung "})
        if (m.rfind(w + "has no", 0) == 0) m.erase(0, w.size());
      d.error(d.doc.at(path), ctx + (m.rfind("has no", 0) == 0 ? " " : ": ") + m, p.hint);
    } else if (p.unknown_key) {
      d.error(d.doc.key_at(path / p.key), p.message + " in " + ctx, p.hint);
    } else {
      d.error(p.at_key ? d.doc.key_at(path / p.key) : d.doc.at(path / p.key), p.message, p.hint);
    }
  }
}

// verify gpus_idle: each nvidia-smi call is bounded on the host by
// `smi_timeout` (10 s when not given), the whole check (two calls, four with a
// MIG instance, and the scan) by the step's `timeout`: a bound not
// below the deadline would let the deadline cut a wedged nvidia-smi before
// ratchet ends it and names it. A templated smi_timeout is not known here.
void check_smi_bound(const Diag& d, const Action& a, util::Millis timeout) {
  const auto* v = std::get_if<VerifyAction>(&a.keys);
  if (!v || !v->gpus_idle.given) return;
  constexpr util::Millis kDefaultSmi{10'000};
  if (v->smi_timeout.given) {
    if (!v->smi_timeout.value || *v->smi_timeout.value < timeout) return;
    d.error(v->smi_timeout.pos,
            fmt::format("`smi_timeout` {} is not below the step's `timeout` {}: a wedged nvidia-smi would be cut by "
                        "that deadline instead of ended and named by ratchet",
                        util::format_duration(*v->smi_timeout.value), util::format_duration(timeout)),
            "set smi_timeout below timeout");
  } else if (kDefaultSmi >= timeout) {
    auto at = a.pos.find("timeout");
    d.error(at != a.pos.end() ? at->second : v->gpus_idle.pos,
            fmt::format("`gpus_idle` bounds each nvidia-smi call by `smi_timeout`, {} by default, which is not below "
                        "the step's `timeout` {}",
                        util::format_duration(kDefaultSmi), util::format_duration(timeout)),
            "set smi_timeout below timeout");
  }
}

StepDefaults read_defaults(const Diag& d) {
  StepDefaults def;
  if (!d.doc.root.contains("defaults")) return def;
  const Value& t = d.doc.root["defaults"];
  DocPath path = DocPath() / "defaults";
  if (!t.is_table()) {
    d.error(d.doc.at(path), type_error("defaults", t, FieldType::table, false));
    return def;
  }
  std::vector<std::string> names;
  for (const auto& f : defaults_fields()) names.push_back(f.name);
  for (const auto& it : t.as_table()) {
    const FieldSpec* spec = nullptr;
    for (const auto& f : defaults_fields())
      if (f.name == it.first) spec = &f;
    if (!spec) {
      std::string near = util::nearest(it.first, names);
      d.error(d.doc.key_at(path / it.first),
              fmt::format("unknown key `{}` in [defaults]", it.first),
              near.empty() ? "" : fmt::format("did you mean `{}`?", near));
      continue;
    }
    std::string err = type_error(it.first, it.second, spec->type, false);
    if (!err.empty()) {
      d.error(d.doc.at(path / it.first), err);
      continue;
    }
    const Value& v = it.second;
    const std::string& k = it.first;
    if (k == "timeout") def.timeout = millis(v);
    if (k == "settle") def.settle = millis(v);
    if (k == "delay") def.delay = millis(v);
    if (k == "retries" || k == "capture") {
      if (std::string why = util::range_problem(k, v.as_int()); !why.empty()) {
        d.error(d.doc.at(path / k), why);
      } else if (k == "retries") {
        def.retries = static_cast<int>(v.as_int());
      } else {
        def.capture = static_cast<size_t>(v.as_int());
      }
    }
    if (k == "become") def.become = v.as_bool();
    if (k == "become_user") def.become_user = v.as_string();
  }
  return def;
}

// An Action from a table check_table read into `keys`: each key's place recorded.
Action make_action(const Doc& doc, const DocPath& path, const Value& t, ActionKeys keys) {
  Action a;
  // Parsed here only: check_table has reported a kind missing or unknown.
  if (t.contains("kind") && t["kind"].is_string()) a.kind = parse_kind(t["kind"].as_string());
  a.where = doc.at(path);
  a.keys = std::move(keys);
  // A kind check_table refused here (a verify rung) read no keys: the load fails, the kind stays unset.
  if (a.kind && keys_of(*a.kind).index() != a.keys.index()) a.kind.reset();
  for (const auto& it : t.as_table()) a.pos[it.first] = doc.at(path / it.first);
  if (a.kind)
    for (const auto& f : kind_spec(*a.kind).fields)
      if (FieldBase& b = f.field(a.keys); b.given) b.pos = a.pos[f.name];
  return a;
}

// A value of the right type (and an integer in its util::int_range), or nullptr
// (check_table reported the problem already): nothing is ever wrapped.
const Value* get(const Value& t, const char* key, FieldType type) {
  if (!t.contains(key) || !type_error(key, t[key], type, false).empty()) return nullptr;
  if (type == FieldType::integer && !util::range_problem(key, t[key].as_int()).empty())
    return nullptr;
  return &t[key];
}

}  // namespace

std::vector<Step> read_steps(const Doc& doc, std::vector<LoadError>* errors, IncludeState* inc) {
  Diag d{doc, errors};
  StepDefaults def = read_defaults(d);
  return read_step_list(doc, def, inc, errors);
}

std::vector<Step> read_step_list(const Doc& doc, const StepDefaults& def, IncludeState* inc,
                                 std::vector<LoadError>* errors) {
  Diag d{doc, errors};
  const bool included = !inc->sites.empty();
  std::vector<Step> steps;
  if (!doc.root.contains("step")) {
    d.error({doc.file, 1, 1}, included ? "the included file has no steps" : "playbook has no steps",
            "add a [[step]] table");
    return steps;
  }
  const Value& arr = doc.root["step"];
  if (std::string err = type_error("step", arr, FieldType::tables, false); !err.empty()) {
    d.error(doc.at((DocPath() / "step")), err, "write each step as a [[step]] table");
    return steps;
  }
  std::map<std::string, SourcePos> names;  // step ids and register names -> where
  for (size_t i = 0; i < arr.size(); ++i) {
    DocPath path = (DocPath() / "step") / i;
    const Value& t = arr[i];
    if (t.contains("include")) {
      // Its id names the included steps (ID.STEP): unique like a step's.
      if (auto v = get(t, "id", FieldType::string))
        if (auto [it, fresh] = names.emplace(v->as_string(), doc.at(path / "id")); !fresh)
          d.error(doc.at(path / "id"),
                  fmt::format("duplicate step id `{}` (first at {})", v->as_string(), it->second.str()));
      for (auto& s : read_include(doc, path, def, inc, errors)) steps.push_back(std::move(s));
      continue;
    }
    ActionKeys keys;
    auto probs = check_table(TableRole::step, t, &keys);
    Step s;
    s.where = doc.at(path);
    if (auto v = get(t, "name", FieldType::string)) s.name = v->as_string();
    SourcePos id_pos = s.where;
    if (auto v = get(t, "id", FieldType::string)) {
      s.id = v->as_string();
      id_pos = doc.at(path / "id");
    } else if (!s.name.empty()) {
      s.id = slug(s.name);
      id_pos = doc.at(path / "name");
    }
    std::string ctx = s.id.empty() ? fmt::format("step {}", i + 1) : fmt::format("step `{}`", s.id);
    report(d, path, probs, ctx);
    if (!t.contains("id") && !t.contains("name")) {
      s.id = fmt::format("step{}", i + 1);  // neither given: its place in the file
    } else if (s.id.empty() && !s.name.empty()) {
      d.error(id_pos, fmt::format("cannot make a step id from the name `{}`", s.name),
              "set `id`: letters, digits and _");
    }
    if (s.name.empty()) s.name = s.id;
    if (!s.id.empty()) {
      if (auto [it, fresh] = names.emplace(s.id, id_pos); !fresh)
        d.error(id_pos,
                fmt::format("duplicate step id `{}` (first at {})", s.id, it->second.str()));
    }
    s.timeout = def.timeout.value_or(s.timeout);
    s.settle = def.settle.value_or(s.settle);
    s.delay = def.delay.value_or(s.delay);
    s.retries = def.retries.value_or(s.retries);
    s.capture = def.capture.value_or(s.capture);
    s.become = def.become;
    s.become_user = def.become_user.value_or(s.become_user);
    if (auto v = get(t, "timeout", FieldType::duration)) s.timeout = millis(*v);
    if (auto v = get(t, "settle", FieldType::duration)) s.settle = millis(*v);
    if (auto v = get(t, "delay", FieldType::duration)) s.delay = millis(*v);
    if (auto v = get(t, "retries", FieldType::integer)) s.retries = v->as_int();
    if (auto v = get(t, "capture", FieldType::integer)) s.capture = v->as_int();
    if (auto v = get(t, "become", FieldType::boolean)) s.become = v->as_bool();
    if (auto v = get(t, "become_user", FieldType::string)) s.become_user = v->as_string();
    if (auto v = get(t, "when", FieldType::string)) s.when = v->as_string();
    if (auto v = get(t, "probe", FieldType::boolean)) s.probe = v->as_bool();
    if (auto v = get(t, "tags", FieldType::strings))
      for (const auto& tag : v->as_list()) s.tags.push_back(tag.as_string());
    if (auto v = get(t, "on_failure", FieldType::string))
      s.on_failure = *v == "continue" ? OnFailure::cont : OnFailure::stop;
    if (auto v = get(t, "register", FieldType::string)) {
      s.register_as = v->as_string();
      SourcePos rp = doc.at(path / "register");
      if (auto [it, fresh] = names.emplace(s.register_as, rp); !fresh)
        d.error(rp, fmt::format("`register` name `{}` is already used (at {})", s.register_as,
                                it->second.str()));
    }
    s.body = make_action(doc, path, t, std::move(keys));
    s.kind = s.body.kind;
    if (get(t, "escalate", FieldType::tables)) {
      for (size_t j = 0; j < t["escalate"].size(); ++j) {
        DocPath rpath = path / "escalate" / j;
        const Value& r = t["escalate"][j];
        ActionKeys rkeys;
        report(d, rpath, check_table(TableRole::rung, r, &rkeys),
               fmt::format("rung {} of {}", j + 1, ctx));
        Action a = make_action(doc, rpath, r, std::move(rkeys));
        if (auto v = get(r, "timeout", FieldType::duration)) a.timeout = millis(*v);
        if (auto v = get(r, "settle", FieldType::duration)) a.settle = millis(*v);
        if (auto v = get(r, "delay", FieldType::duration)) a.delay = millis(*v);
        if (auto v = get(r, "retries", FieldType::integer)) a.retries = v->as_int();
        s.escalate.push_back(std::move(a));
      }
    }
    check_smi_bound(d, s.body, s.timeout);  // (a rung is never a verify)
    steps.push_back(std::move(s));
  }
  return steps;
}

}  // namespace ratchet::playbook
