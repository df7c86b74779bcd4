// The rules of each step kind: check_table and what it needs.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "playbook/schema.h"
#include "util/rules.h"
#include "util/spell.h"

namespace ratchet::playbook {
namespace {

bool is_ident(const std::string& s) {  // [a-z0-9_]+
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool is_tag(const std::string& s) {  // [a-z0-9_-]+
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool is_var_name(const std::string& s) {  // dotted [A-Za-z0-9_-] segments
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.' ||
      s.back() == '.' || s.find("..") != std::string::npos)
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& cands) {
  std::string n = util::nearest(word, cands);
  return n.empty() ? "" : fmt::format("did you mean `{}`?", n);
}

// The kinds a step (or a rung) may be, each between `q`s: "a, b or c".
std::string kinds_list(TableRole role, const char* q) {
  std::vector<std::string> names;
  for (const auto& k : step_kinds())
    if (role == TableRole::step || k.rung) names.push_back(q + k.name + q);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

// Collects problems for one table and answers "is this key present and well typed".
struct Checker {
  const Value* t;
  std::vector<SchemaProblem> out;
  std::vector<std::string> bad;  // keys whose type was wrong

  bool has(const char* k) const {
    return t->contains(k) && std::find(bad.begin(), bad.end(), k) == bad.end();
  }
  bool literal(const char* k) const { return has(k) && !has_template((*t)[k]); }
  void add(std::string key, std::string msg, std::string hint = "") {
    out.push_back({std::move(key), std::move(msg), std::move(hint)});
  }
  void one_of(const char* k, const std::vector<std::string>& allowed, std::string what) {
    if (!literal(k) || !(*t)[k].is_string()) return;
    const auto& v = (*t)[k].as_string();
    if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return;
    add(k, fmt::format("`{}` must be {}, not `{}`", k, what, v), did_you_mean(v, allowed));
  }
  /// Every integer of `k` (one, or an array of them) within util::int_range(k).
  void in_range(const char* k) {
    if (!literal(k)) return;
    const Value& v = (*t)[k];
    for (const auto& e : v.as_list())
      if (e.is_int())
        if (std::string why = util::range_problem(k, e.as_int()); !why.empty())
          return add(k, why);
  }
  void required(const char* k, std::string_view kind) {
    if (!t->contains(k)) add("", fmt::format("{} needs `{}`", kind, k));
  }
};

void check_common(Checker& c) {
  if (c.literal("id") && !is_ident((*c.t)["id"].as_string())) {
    auto id = (*c.t)["id"].as_string();
    c.add("id", fmt::format("step id `{}` must match [a-z0-9_]+", id),
          slug(id).empty() ? "" : fmt::format("try `{}`", slug(id)));
  }
  if (c.literal("register") && !is_ident((*c.t)["register"].as_string()))
    c.add("register", fmt::format("`register` name `{}` must match [a-z0-9_]+",
                                  (*c.t)["register"].as_string()));
  if (c.literal("when")) {
    auto w = (*c.t)["when"].as_string();
    std::string name = w.rfind("not ", 0) == 0 ? w.substr(4) : w;
    while (!name.empty() && name[0] == ' ') name.erase(0, 1);
    if (!is_var_name(name))
      c.add("when",
            fmt::format("`when` must name a boolean variable or be `not NAME`, not `{}`", w));
  }
  if (c.literal("tags"))
    for (const auto& tag : (*c.t)["tags"].as_list())
      if (!is_tag(tag.as_string())) {
        c.add("tags", fmt::format("tag `{}` must match [a-z0-9_-]+", tag.as_string()),
              slug(tag.as_string()).empty() ? "" : fmt::format("try `{}`", slug(tag.as_string())));
        break;
      }
  c.one_of("on_failure", find_field(TableRole::step, std::nullopt, "on_failure")->values, "`stop` or `continue`");
  c.in_range("retries");
  c.in_range("capture");
}

// `names` between backquotes: "`a`, `b` or `c`".
std::string or_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + ("`" + names[i] + "`");
  return out;
}

// The kind's KindRules, with messages in its terms.
void check_kind(Checker& c, const KindSpec& kind) {
  const KindRules& r = kind_rules(kind.kind);
  for (const auto& k : r.required) c.required(k.c_str(), kind.name);
  if (!r.one_of.empty()) {
    std::vector<std::string> sel;
    for (const auto& k : r.one_of)
      if (c.t->contains(k)) sel.push_back(k);
    const std::string& label = r.one_of_label;
    if (sel.empty())
      c.add("", label.empty() ? fmt::format("{} needs {}", kind.name, or_list(r.one_of))
                              : fmt::format("{} needs one {}: {}", kind.name, label, or_list(r.one_of)));
    else if (sel.size() > 1)
      c.add(sel[1], label.empty() ? fmt::format("{} takes {}, not both", kind.name, or_list(r.one_of))
                                  : fmt::format("{} takes one {}, got `{}` and `{}`", kind.name, label, sel[0], sel[1]));
  }
  if (!r.any_of.empty() && std::none_of(r.any_of.begin(), r.any_of.end(), [&](const std::string& k) { return c.t->contains(k); }))
    c.add("", r.any_of_label.empty() ? fmt::format("{} needs {}", kind.name, or_list(r.any_of))
                                     : fmt::format("{} needs a {}: {}", kind.name, r.any_of_label, or_list(r.any_of)));
  for (const auto& n : r.needs) {
    if (!c.t->contains(n.key)) continue;
    if (std::any_of(n.one_of.begin(), n.one_of.end(), [&](const std::string& k) { return c.t->contains(k); })) continue;
    c.add(n.key, n.why.empty() ? fmt::format("`{}` goes with {}, which this step lacks", n.key, or_list(n.one_of)) : n.why);
  }
}

}  // namespace

const KindRules& kind_rules(Kind k) {
  static const std::vector<KindRules> rules = [] {
    std::vector<KindRules> r;
    r.push_back({Kind::run, {"command"}, {}, "", {}, "", {}});
    r.push_back({Kind::service, {"unit"}, {}, "", {"state", "enabled", "unit_file"}, "", {}});
    r.push_back({Kind::kill, {}, {"pid", "pid_file", "pattern", "holders_of"}, "selector", {}, "", {}});
    r.push_back({Kind::verify,
                 {},
                 {},
                 "",
                 {"no_holders", "gpus_idle", "absent", "port_free", "port_open", "service_active", "file_exists", "command"},
                 "condition",
                 {{"stdout_matches", {"command"}, "`stdout_matches` needs `command` (whose stdout it matches)"},
                  {"user", {"no_holders", "gpus_idle"}},
                  {"exclude", {"no_holders", "gpus_idle"}},
                  {"missing_ok", {"no_holders", "gpus_idle"}},
                  // verify gpus_idle (steps/gpus.h): its keys only with it.
                  {"gpus", {"gpus_idle"}},
                  {"max_memory_used", {"gpus_idle"}},
                  {"gpu_devices", {"gpus_idle"}},
                  {"nvidia_smi", {"gpus_idle"}},
                  {"smi_timeout", {"gpus_idle"}}}});
    r.push_back({Kind::write, {"path"}, {"content", "template"}, "", {}, "", {}});
    r.push_back({Kind::copy, {"src", "dest"}, {}, "", {}, "", {}});
    r.push_back({Kind::fetch, {"src"}, {}, "", {}, "", {}});
    return r;
  }();
  for (const auto& r : rules)
    if (r.kind == k) return r;
  static const KindRules none{};
  return none;
}

std::string normalize_signal(std::string_view name) { return util::signal_name(name); }

std::string slug(std::string_view name) {
  std::string out;
  bool gap = false;
  for (unsigned char ch : name) {
    if (std::isalnum(ch) && ch < 0x80) {
      if (gap && !out.empty()) out += '_';
      out += static_cast<char>(std::tolower(ch));
      gap = false;
    } else {
      gap = true;
    }
  }
  return out;
}

std::vector<SchemaProblem> check_table(TableRole role, const Value& tbl, ActionKeys* keys) {
  const Value* table = &tbl;
  Checker c{table, {}, {}};
  const char* what = role == TableRole::step ? "step" : "rung";
  const KindSpec* kind = nullptr;
  if (!table->contains("kind")) {
    c.add("", fmt::format("{} has no `kind`", what), "add kind = " + kinds_list(role, "\""));
  } else if ((*table)["kind"].is_string()) {
    auto k = (*table)["kind"].as_string();
    std::vector<std::string> names;
    for (const auto& s : step_kinds()) names.push_back(s.name);
    kind = find_kind(k);
    if (!kind) {
      c.add("kind", fmt::format("unknown kind `{}`", k), did_you_mean(k, names));
    } else if (role == TableRole::rung && !kind->rung) {
      c.add("kind", fmt::format("a rung must be of kind {}, not `{}`", kinds_list(TableRole::rung, ""), k));
      kind = nullptr;
    }
  }
  ActionKeys scratch;
  if (kind) {
    if (!keys) keys = &scratch;
    *keys = keys_of(kind->kind);
  }
  // With the kind unknown, keys of any kind pass: only plain typos are reported.
  std::vector<std::string> allowed = allowed_keys(role, kind ? std::optional<Kind>(kind->kind) : std::nullopt);
  if (!kind)
    for (const auto& k : step_kinds())
      for (const auto& f : k.fields) allowed.push_back(f.name);
  for (const auto& it : table->as_table()) {
    const std::string& key = it.first;
    const FieldSpec* f = nullptr;
    if (kind) {
      f = find_field(role, kind->kind, key);
    } else {
      for (const auto& k : step_kinds())
        if (!f) f = find_field(role, k.kind, key);
    }
    if (!f) {
      std::string hint = did_you_mean(key, allowed);
      std::vector<std::string> owners;
      for (const auto& k : step_kinds())
        for (const auto& kf : k.fields)
          if (kf.name == key) owners.push_back("`" + k.name + "`");
      if (!owners.empty())  // another kind's key: say whose, rather than guess a typo
        hint = fmt::format("`{}` belongs to {} steps", key, fmt::join(owners, ", "));
      c.out.push_back({key, fmt::format("unknown key `{}`", key), hint, true, true});
      continue;
    }
    if (!f->read) {  // a common key: its type here, its rules in check_common
      // Read once, when the playbook loads: no host renders it.
      if (key != "name" && has_template(it.second)) {
        c.add(key, fmt::format("`{}` is read when the playbook loads: it cannot hold a template", key),
              "templates go in a kind's keys (command, pid, path, ...); use `when` with a boolean var to choose per host");
        c.bad.push_back(key);
        continue;
      }
      if (std::string err = type_error(key, it.second, f->type, false); !err.empty()) {
        c.add(key, err);
        c.bad.push_back(key);
      }
      continue;
    }
    // A kind key: read by its rule now, or kept as a template each host renders.
    if (!kind) continue;  // whose rule applies is not known
    FieldBase& field = f->field(*keys);
    field.given = true;
    // A template stands for one value: an array holding one is an array, never a scalar.
    const bool scalar = f->type != FieldType::strings && f->type != FieldType::ints;
    if (scalar && it.second.is_array()) {
      c.add(key, type_error(key, it.second, f->type, false));
      c.bad.push_back(key);
      continue;
    }
    if (has_template(it.second)) {
      field.written = it.second;
      continue;
    }
    KeyProblem p;
    if (!f->read(key, it.second, false, *keys, &p)) {
      c.add(key, p.message, p.hint);
      c.bad.push_back(key);
    }
  }
  check_common(c);
  if (!kind) return c.out;
  check_kind(c, *kind);
  std::string at;
  KeyProblem p;
  if (keys_disagree(*keys, &at, &p)) c.add(at, p.message, p.hint);
  return c.out;
}

}  // namespace ratchet::playbook