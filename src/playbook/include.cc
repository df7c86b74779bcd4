// `include`: a [[step]] entry replaced, in place, by another file's steps
// (docs/playbook.md, "Include").
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>

#include "playbook/loader_internal.h"
#include "playbook/local_files.h"
#include "playbook/schema.h"
#include "playbook/template.h"
#include "util/hash.h"

namespace ratchet::playbook {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxDepth = 8;

// Whether `key` is one of `fields` (schema.h's tables: the JSON Schema reads them too).
bool has_field(const std::vector<FieldSpec>& fields, const std::string& key) {
  return std::any_of(fields.begin(), fields.end(), [&](const FieldSpec& f) { return f.name == key; });
}

std::string real_path(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::path(path).lexically_normal().string() : p.string();
}

// The longest of `ids` that `rest` ("free.gpus_free.holders") starts with, whole segments; "" = none.
std::string local_id(const std::string& rest, const std::set<std::string>& ids) {
  std::string best;
  for (const auto& id : ids)
    if ((rest == id || rest.rfind(id + ".", 0) == 0) && id.size() > best.size()) best = id;
  return best;
}

// `text` with each {{ steps.ID... }} whose ID is one of `ids` made {{ steps.PREFIX.ID... }}.
std::string rewrite_refs(const std::string& text, const std::string& prefix, const std::set<std::string>& ids) {
  std::string err;
  auto refs = template_ref_spans(text, &err);
  if (!refs) return text;  // a syntax error: reported at load, as written
  std::string out = text;
  for (auto r = refs->rbegin(); r != refs->rend(); ++r) {
    if (r->name.rfind("steps.", 0) != 0 || local_id(r->name.substr(6), ids).empty()) continue;
    size_t at = out.find(r->name, r->offset);
    if (at == std::string::npos || at >= r->offset + r->length) continue;
    out.insert(at + 6, prefix + ".");
  }
  return out;
}

void rewrite_value(Value& v, const std::string& prefix, const std::set<std::string>& ids) {
  if (v.is_string()) v = Value(rewrite_refs(v.as_string(), prefix, ids));
  else if (v.is_array())
    for (auto& e : v.as_array()) rewrite_value(e, prefix, ids);
}

// `when = "steps.ID..."` (or "not steps.ID...") naming one of `ids`.
void rewrite_when(std::string* when, const std::string& prefix, const std::set<std::string>& ids) {
  size_t at = when->rfind("not ", 0) == 0 ? when->find_first_not_of(' ', 4) : 0;
  if (at == std::string::npos || when->compare(at, 6, "steps.") != 0) return;
  if (!local_id(when->substr(at + 6), ids).empty()) when->insert(at + 6, prefix + ".");
}

// A literal relative `template` / `unit_file` of a step read from the file in
// `dir`: named relative to the playbook's directory, so that it is opened there.
void rebase_local_files(Action& a, const std::string& dir, const std::string& main_dir) {
  LocalFileKey k = local_file_key(a);
  if (!k.field || !k.field->value || fs::path(*k.field->value).is_absolute()) return;
  auto& f = const_cast<Field<std::string>&>(*k.field);
  fs::path opened = (fs::path(dir) / *f.value).lexically_normal();
  fs::path rel = opened.is_absolute() == fs::path(main_dir).is_absolute() ? opened.lexically_relative(main_dir) : fs::path();
  f.value = rel.empty() ? opened.string() : rel.string();
}

void each_action(Step& s, const std::function<void(Action&)>& fn) {
  fn(s.body);
  for (auto& r : s.escalate) fn(r);
}

}  // namespace

std::vector<Step> read_include(const Doc& doc, const DocPath& path, const StepDefaults& def,
                               IncludeState* inc, std::vector<LoadError>* errors) {
  Diag d{doc, errors};
  const Value& t = doc.get(path);
  const SourcePos site = doc.at(path);
  bool ok = true;
  for (const auto& it : t.as_table()) {
    if (has_field(include_entry_fields(), it.first)) continue;
    d.error(doc.key_at(path / it.first),
            fmt::format("an include entry takes `id`, `include`, `vars` and `tags` only, not `{}`", it.first),
            "keys of the included steps go in the included file's [[step]] tables");
    ok = false;
  }
  std::string id;
  if (!t.contains("id")) {
    d.error(site, "an include entry needs an `id`: its steps' ids become ID.STEP", "add id = \"...\"");
    ok = false;
  } else if (!t["id"].is_string()) {
    d.error(doc.at(path / "id"), type_error("id", t["id"], FieldType::string, false));
    ok = false;
  } else {
    const std::string& v = t["id"].as_string();
    bool ident = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
    if (ident) {
      id = v;
    } else {
      d.error(doc.at(path / "id"), fmt::format("step id `{}` must match [a-z0-9_]+", v),
              slug(v).empty() ? "" : fmt::format("try `{}`", slug(v)));
      ok = false;
    }
  }
  if (!t["include"].is_string() || t["include"].as_string().empty()) {
    d.error(doc.at(path / "include"), "`include` must be the path of a playbook piece (a string)",
            "include = \"common/free-gpus.toml\" (relative to this file)");
    return {};
  }
  std::vector<std::string> tags;
  if (t.contains("tags")) {
    if (std::string err = type_error("tags", t["tags"], FieldType::strings, false); !err.empty()) {
      d.error(doc.at(path / "tags"), err);
      ok = false;
    } else {
      for (const auto& tag : t["tags"].as_list()) tags.push_back(tag.as_string());
    }
  }
  if (t.contains("vars") && !t["vars"].is_table()) {
    d.error(doc.at(path / "vars"), type_error("vars", t["vars"], FieldType::table, false),
            "vars = { name = value, ... }");
    ok = false;
  }
  const std::string name = t["include"].as_string();
  const SourcePos at = doc.at(path / "include");
  fs::path dir = fs::path(doc.file).parent_path();
  std::string file = fs::path(name).is_absolute() ? fs::path(name).lexically_normal().string()
                                                  : (dir / name).lexically_normal().string();
  if (inc->sites.size() >= kMaxDepth) {
    d.error(at, fmt::format("includes nest deeper than {}: {} -> {}", kMaxDepth, fmt::join(inc->chain, " -> "), file),
            "include the pieces side by side instead");
    return {};
  }
  const std::string real = real_path(file);
  if (auto c = std::find(inc->chain_real.begin(), inc->chain_real.end(), real); c != inc->chain_real.end()) {
    std::vector<std::string> loop(inc->chain.begin() + (c - inc->chain_real.begin()), inc->chain.end());
    loop.push_back(file);
    d.error(at, fmt::format("include cycle: {}", fmt::join(loop, " -> ")), "a piece cannot include itself");
    return {};
  }
  std::string text, err;
  std::error_code ec;
  if (fs::exists(file, ec) && !fs::is_regular_file(file, ec)) {  // a FIFO or /dev/zero would never end
    d.error(at, fmt::format("included file `{}` is not a regular file", file));
    return {};
  }
  if (!read_text_file(file, &text, &err)) {
    d.error(at, fmt::format("cannot read included file `{}`: {}", file, err));
    return {};
  }
  if (!ok) return {};
  const size_t before = errors->size();
  auto sub = parse_doc(text, file, errors);
  if (std::none_of(inc->files.begin(), inc->files.end(), [&](const IncludedFile& f) { return f.path == file; })) {
    IncludedFile f{file, text, util::sha256_hex(text), {}};
    f.included_from.push_back(site);
    for (auto s = inc->sites.rbegin(); s != inc->sites.rend(); ++s) f.included_from.push_back(*s);
    inc->files.push_back(std::move(f));
  }
  std::vector<Step> steps;
  if (sub) {
    Diag sd{*sub, errors};
    for (const auto& it : sub->root.as_table())
      if (!has_field(piece_fields(), it.first))
        sd.error(sub->key_at(DocPath() / it.first),
                 fmt::format("an included file holds only [vars] and [[step]] tables, not `{}`", it.first),
                 it.first == "defaults" ? "the including playbook's [defaults] apply to its steps"
                                        : "top-level keys belong in the playbook that includes it");
    if (sub->root.contains("vars")) {
      const Value& v = sub->root["vars"];
      if (!v.is_table()) {
        sd.error(sub->at(DocPath() / "vars"), type_error("vars", v, FieldType::table, false));
      } else {
        for (const auto& it : v.as_table())
          inc->vars.push_back({it.first, it.second, sub->at((DocPath() / "vars") / it.first), true});
      }
    }
    inc->chain.push_back(file);
    inc->chain_real.push_back(real);
    inc->sites.push_back(site);
    steps = read_step_list(*sub, def, inc, errors);
    inc->sites.pop_back();
    inc->chain.pop_back();
    inc->chain_real.pop_back();
  }
  if (t.contains("vars") && t["vars"].is_table())
    for (const auto& it : t["vars"].as_table())
      inc->vars.push_back({it.first, it.second, doc.at((path / "vars") / it.first), false});
  // Errors in the piece name the entry that read it; the innermost entries have added theirs.
  for (size_t i = before; i < errors->size(); ++i) {
    LoadError& e = (*errors)[i];
    if (e.pos.file == doc.file) continue;
    if (e.message.size() > 1 && e.message.back() == ')' && e.message.find(" (included from ") != std::string::npos)
      e.message.insert(e.message.size() - 1, ", from " + site.str());
    else
      e.message += fmt::format(" (included from {})", site.str());
  }
  std::set<std::string> ids;
  for (const auto& s : steps) {
    ids.insert(s.id);
    if (!s.register_as.empty()) ids.insert(s.register_as);
  }
  for (auto& s : steps) {
    const bool direct = s.included_from.empty();  // written in this file, not a nested include's
    each_action(s, [&](Action& a) {
      if (direct) rebase_local_files(a, fs::path(file).parent_path().string(), inc->main_dir);
      if (!a.kind || keys_of(*a.kind).index() != a.keys.index()) return;
      for (const auto& f : kind_spec(*a.kind).fields)
        if (FieldBase& b = f.field(a.keys); b.written) rewrite_value(*b.written, id, ids);
    });
    rewrite_when(&s.when, id, ids);
    s.id = id + "." + s.id;
    if (!s.register_as.empty()) s.register_as = id + "." + s.register_as;
    s.included_from.push_back(site);
    for (const auto& tag : tags)
      if (std::find(s.tags.begin(), s.tags.end(), tag) == s.tags.end()) s.tags.push_back(tag);
  }
  return steps;
}

void apply_include_vars(const IncludeState& inc, Playbook* pb, std::vector<LoadError>* errors) {
  std::map<std::string, SourcePos> from_include;  // names an include's `vars` set -> where
  for (const auto& v : inc.vars) {
    if (v.is_default) continue;
    const std::string& text = text_of(*pb, v.pos.file);
    auto here = pb->var_pos.find(v.name);
    if (pb->vars.contains(v.name) && pb->vars[v.name] != v.value) {
      errors->push_back(make_error(
          v.pos,
          fmt::format("var `{}` is {} here but {} at {}: a playbook's vars have one value each, shared by every step",
                      v.name, util::toml_text(v.value), util::toml_text(pb->vars[v.name]),
                      here == pb->var_pos.end() ? std::string("[vars]") : here->second.str()),
          "give the piece's var another name, or set it in one place", text));
      continue;
    }
    pb->vars[v.name] = v.value;
    if (here == pb->var_pos.end()) pb->var_pos[v.name] = v.pos;
    from_include.emplace(v.name, v.pos);
  }
  for (const auto& v : inc.vars) {
    if (!v.is_default) continue;
    auto here = pb->var_pos.find(v.name);
    bool from_piece = here != pb->var_pos.end() &&
                      std::any_of(pb->includes.begin(), pb->includes.end(),
                                  [&](const IncludedFile& f) { return f.path == here->second.file; });
    if (!pb->vars.contains(v.name)) {
      pb->vars[v.name] = v.value;
      pb->var_pos[v.name] = v.pos;
    } else if (from_piece && !from_include.contains(v.name) && pb->vars[v.name] != v.value) {
      // Two pieces' defaults disagree and nothing chose: say so rather than pick one.
      errors->push_back(make_error(
          v.pos,
          fmt::format("var `{}` defaults to {} here but to {} at {}: set it in the playbook's [vars] or an include's `vars`",
                      v.name, util::toml_text(v.value), util::toml_text(pb->vars[v.name]), here->second.str()),
          "", text_of(*pb, v.pos.file)));
    }
  }
}

void note_include_sites(const Playbook& pb, std::vector<LoadError>* errors, size_t from) {
  for (size_t i = from; i < errors->size(); ++i) {
    LoadError& e = (*errors)[i];
    auto f = std::find_if(pb.includes.begin(), pb.includes.end(), [&](const IncludedFile& x) { return x.path == e.pos.file; });
    if (f == pb.includes.end()) continue;
    e.source_line = source_line(f->source, e.pos.line);
    if (e.message.find(" (included from ") != std::string::npos) continue;
    std::vector<std::string> sites;
    for (const auto& s : f->included_from) sites.push_back(s.str());
    e.message += fmt::format(" (included from {})", fmt::join(sites, ", from "));
  }
}

}  // namespace ratchet::playbook
