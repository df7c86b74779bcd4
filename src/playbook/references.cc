// Template checks: syntax, quoting and secrets at load time (check_step_templates),
// and every reference against what will be in scope (check_references).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>

#include "playbook/loader_internal.h"
#include "playbook/local_files.h"
#include "playbook/schema.h"
#include "playbook/template.h"
#include "util/spell.h"

namespace ratchet::playbook {
namespace {

const std::vector<std::string> kStepFields = {"status", "rung",         "rc",   "stdout",    "stderr",
                                              "ms",     "holders",      "holders_left", "gpus", "gpus_after"};
const std::vector<std::string> kBuiltins = {"host.name",      "host.address",  "run.id",
                                            "run.started",    "playbook.name", "playbook.sha256",
                                            "ratchet.version"};

std::string hint_for(const std::string& word, const std::vector<std::string>& cands) {
  std::string n = util::nearest(word, cands);
  return n.empty() ? "" : fmt::format("did you mean `{}`?", n);
}

// One string found in a step field, with the source positions of its templates.
struct FieldString {
  const std::string* text;
  const FieldSpec* spec;  // nullptr for keys outside the schema (none after loading)
  std::string key;
  std::vector<TemplateRef> refs;
  std::vector<SourcePos> ref_pos;  // parallel to refs
  std::string syntax_error;        // "" = parsed
  SourcePos syntax_pos;
  SourcePos value_pos;  // where the field's value starts
};

// Finds template text in the playbook source, moving forward through one field's
// value; falls back to the value's own position when the text is not found
// verbatim (escapes inside the template).
struct Locator {
  const Playbook& pb;
  SourcePos value_pos;
  size_t cursor, limit;

  Locator(const Playbook& p, const SourcePos& at, size_t span) : pb(p), value_pos(at) {
    cursor = offset_of_pos(text_of(pb, at.file), at);
    limit = cursor == std::string::npos ? cursor : cursor + 2 * span + 256;
  }
  SourcePos find(const std::string& needle, bool advance) {
    if (cursor == std::string::npos) return value_pos;
    const std::string& text = text_of(pb, value_pos.file);  // the playbook's, or an included file's
    size_t at = text.find(needle, cursor);
    if (at == std::string::npos || at > limit) return value_pos;
    if (advance) cursor = at + needle.size();
    return pos_of_offset(value_pos.file, text, at);
  }
};

void collect(const Value& v, std::vector<const std::string*>* out, size_t* span) {
  if (v.is_string()) {
    out->push_back(&v.as_string());
    *span += out->back()->size();
  } else if (v.is_array()) {
    for (const auto& e : v.as_array()) collect(e, out, span);
  } else if (v.is_table()) {
    for (const auto& [k, e] : v.as_table()) collect(e, out, span);
  }
}

// Calls fn for every string of every field of every action of step `s`.
void each_string(const Playbook& pb, const Step& s,
                 const std::function<void(const Action&, FieldString&)>& fn) {
  auto visit = [&](const Action& a) {
    each_key(a, [&](const FieldSpec& spec, const FieldBase& b) {
      if (!b.written) return;  // a literal: no template in it
      std::vector<const std::string*> strings;
      size_t span = 0;
      collect(*b.written, &strings, &span);
      Locator loc(pb, b.pos, span);
      for (const std::string* str : strings) {
        FieldString f{str, &spec, spec.name, {}, {}, "", {}, loc.value_pos};
        size_t off = 0;
        if (auto refs = template_ref_spans(*str, &f.syntax_error, &off)) {
          f.refs = std::move(*refs);
          for (const auto& r : f.refs)
            f.ref_pos.push_back(loc.find(str->substr(r.offset, r.length), true));
        } else {
          f.syntax_pos = loc.find(str->substr(off, 2), false);
        }
        fn(a, f);
      }
    });
  };
  visit(s.body);
  for (const auto& r : s.escalate) visit(r);
}

std::string first_segment(const std::string& name) { return name.substr(0, name.find('.')); }

// What references may name at one step.
struct Scope {
  std::set<std::string> vars;     // playbook vars, -e, secrets, inventory vars
  std::set<std::string> earlier;  // ids and register names of steps already run
  std::set<std::string> all_steps;
};

// What is wrong with reference `name` (message, hint), or nothing.
std::optional<std::pair<std::string, std::string>> check_ref(const std::string& name,
                                                             const Scope& sc) {
  std::vector<std::string> seg;
  for (size_t b = 0, e;; b = e + 1) {
    e = name.find('.', b);
    seg.push_back(name.substr(b, e == std::string::npos ? e : e - b));
    if (e == std::string::npos) break;
  }
  auto msg = [](std::string m, std::string h = "") { return std::make_pair(m, h); };
  if (seg[0] == "steps") {
    std::string fields = "status, rung, rc, stdout, stderr, ms, holders, holders_left, gpus or gpus_after";
    if (seg.size() < 2) return msg("`steps` needs a step and a field: steps.ID.FIELD");
    // An included step's id has dots (INCLUDE.ID): the longest id that whole segments spell.
    std::string id = seg[1];
    size_t used = 2;
    for (size_t n = 2, len = seg[1].size(); n < seg.size(); ++n) {
      len += 1 + seg[n].size();
      std::string longer = name.substr(6, len);
      if (sc.all_steps.contains(longer)) {
        id = longer;
        used = n + 1;
      }
    }
    seg.erase(seg.begin() + 2, seg.begin() + static_cast<long>(used));
    if (!sc.earlier.contains(id)) {
      if (sc.all_steps.contains(id))
        return msg(fmt::format("`{}`: step `{}` has not run yet at this point", name, id),
                   "only earlier steps' results can be used");
      return msg(fmt::format("unknown step `{}` in `{}`", id, name),
                 hint_for(id, {sc.earlier.begin(), sc.earlier.end()}));
    }
    if (seg.size() < 3) return msg(fmt::format("`{}` needs a field: {}", name, fields));
    if (std::find(kStepFields.begin(), kStepFields.end(), seg[2]) == kStepFields.end())
      return msg(fmt::format("unknown step result `{}` in `{}`", seg[2], name),
                 hint_for(seg[2], kStepFields));
    return std::nullopt;
  }
  if (seg[0] == "host" || seg[0] == "run" || seg[0] == "playbook" || seg[0] == "ratchet") {
    if (std::find(kBuiltins.begin(), kBuiltins.end(), name) != kBuiltins.end()) return std::nullopt;
    return msg(fmt::format("unknown built-in `{}`", name), hint_for(name, kBuiltins));
  }
  if (sc.vars.contains(seg[0])) return std::nullopt;
  return msg(fmt::format("undefined variable `{}`", name),
             hint_for(seg[0], {sc.vars.begin(), sc.vars.end()}));
}

// Checks the references of a write step's template file (read at load;
// secrets allowed). An unreadable file was reported by read_local_files.
void check_template_file(const Playbook& pb, const Action& a, const Scope& sc,
                         std::vector<LoadError>* errors,
                         const std::function<bool(const std::string&)>& host_var) {
  const LocalFile* f = local_file_of(pb, a);
  if (!f || f->role != "template") return;
  const std::string& file = f->path;
  const std::string& text = f->bytes;
  std::string err;
  size_t off = 0;
  auto refs = template_ref_spans(text, &err, &off);
  if (!refs) {
    errors->push_back(make_error(pos_of_offset(file, text, off), err, "", text));
    return;
  }
  for (const auto& r : *refs)
    if (auto bad = check_ref(r.name, sc); bad && !host_var(r.name))
      errors->push_back(
          make_error(pos_of_offset(file, text, r.offset), bad->first, bad->second, text));
}

// The references of a write step's template file; {} when it was not read or
// does not parse (check_references reports that).
std::vector<std::string> template_file_refs(const Playbook& pb, const Action& a) {
  const LocalFile* f = local_file_of(pb, a);
  if (!f || f->role != "template") return {};
  std::string err;
  auto refs = template_refs(f->bytes, &err);
  return refs ? *refs : std::vector<std::string>{};
}

}  // namespace

void check_step_templates(const Playbook& pb, std::vector<LoadError>* errors) {
  auto err = [&](const SourcePos& p, std::string m, std::string h = "") {
    errors->push_back(make_error(p, std::move(m), std::move(h), pb.source));
  };
  for (const auto& s : pb.steps) {
    each_string(pb, s, [&](const Action&, FieldString& f) {
      if (!f.syntax_error.empty())
        return err(f.syntax_pos, fmt::format("`{}`: {}", f.key, f.syntax_error));
      if (f.spec && f.spec->shell) {
        // Where the template at byte `at` of the field was written (else the value's start).
        auto pos_at = [&f](long at) {
          for (size_t i = 0; i < f.refs.size(); ++i)
            if (f.refs[i].offset == static_cast<size_t>(at)) return f.ref_pos[i];
          return f.value_pos;
        };
        long q = quoted_template_offset(*f.text);
        if (q >= 0) {
          size_t close = f.text->find("}}", static_cast<size_t>(q));
          std::string tmpl = f.text->substr(q, close == std::string::npos ? 2 : close + 2 - q);
          size_t line_start = f.text->rfind('\n', static_cast<size_t>(q));
          line_start = line_start == std::string::npos ? 0 : line_start + 1;
          int col = pos_of_offset("", f.text->substr(line_start), q - line_start).col;
          SourcePos p = pos_at(q);
          err(p, fmt::format(
                     "`{}` inside quotes at col {}: values are quoted for you; remove the quotes",
                     tmpl, col));
        } else if (long h = heredoc_template_offset(*f.text); h >= 0) {
          err(pos_at(h), "a template inside a here-document is not quoted by the shell",
              "pass the value on `stdin`, or as an argument: printf '%s\\n' {{ x }}");
        } else {
          std::string why;
          if (long u = unsafe_template_offset(*f.text, &why); u >= 0)
            err(pos_at(u), fmt::format("a template {}", why),
                "give the value its own word: printf '%s\\n' {{ x }}, or pass it on `stdin`");
        }
      }
      if (f.spec && f.spec->secret_ok) return;
      for (size_t i = 0; i < f.refs.size(); ++i) {
        std::string first = first_segment(f.refs[i].name);
        if (pb.secrets.contains(first))
          err(f.ref_pos[i], fmt::format("secret `{}` used in `{}`", first, f.key),
              "secrets go on stdin or into file content only");
      }
    });
  }
}

void check_references(const Playbook& pb, const Inventory* inv, std::vector<LoadError>* errors,
                      std::vector<std::string>* unchecked) {
  size_t before = errors->size();
  if (!inv && pb.inventory) inv = &*pb.inventory;
  if (inv) unchecked = nullptr;  // the hosts are known: every name is decided
  Scope sc;
  for (const auto& it : pb.vars.as_table()) sc.vars.insert(it.first);
  for (const auto& [name, _] : pb.secrets) sc.vars.insert(name);
  if (inv) {
    for (const auto& [_, h] : inv->hosts)
      for (const auto& it : h.vars.as_table()) sc.vars.insert(it.first);
    for (const auto& [_, gv] : inv->group_vars)
      for (const auto& it : gv.as_table()) sc.vars.insert(it.first);
  }
  for (const auto& s : pb.steps) {
    sc.all_steps.insert(s.id);
    if (!s.register_as.empty()) sc.all_steps.insert(s.register_as);
  }
  // Without hosts, a name no playbook var defines may be a host var: noted, not an error.
  auto host_var = [&](const std::string& name) {
    if (!unchecked || name.rfind("steps.", 0) == 0 || name == "steps" ||
        std::find(kBuiltins.begin(), kBuiltins.end(), name) != kBuiltins.end())
      return false;
    std::string first = first_segment(name);
    for (const char* root : {"host", "run", "playbook", "ratchet"})
      if (first == root) return false;
    if (std::find(unchecked->begin(), unchecked->end(), first) == unchecked->end())
      unchecked->push_back(first);
    return true;
  };
  for (const auto& s : pb.steps) {
    if (!s.when.empty()) {
      std::string name = s.when.rfind("not ", 0) == 0 ? s.when.substr(4) : s.when;
      name.erase(0, name.find_first_not_of(' '));
      auto p = s.body.pos.find("when");
      SourcePos at = p == s.body.pos.end() ? s.where : p->second;
      // A `when` that names no variable at all was reported by the schema already.
      bool plain = !name.empty() && name.find_first_of(" =<>!()") == std::string::npos;
      if (plain && !sc.vars.contains(first_segment(name)) && !host_var(name))
        errors->push_back(make_error(at, fmt::format("undefined variable `{}` in `when`", name),
                                     hint_for(name, {sc.vars.begin(), sc.vars.end()}), pb.source));
    }
    each_string(pb, s, [&](const Action&, FieldString& f) {
      for (size_t i = 0; i < f.refs.size(); ++i)
        if (auto bad = check_ref(f.refs[i].name, sc); bad && !host_var(f.refs[i].name))
          errors->push_back(make_error(f.ref_pos[i], bad->first, bad->second, pb.source));
    });
    if (s.kind == Kind::write) check_template_file(pb, s.body, sc, errors, host_var);
    sc.earlier.insert(s.id);
    if (!s.register_as.empty()) sc.earlier.insert(s.register_as);
  }
  note_include_sites(pb, errors, before);
  sort_errors(errors, before, pb.path);
}

void check_extra_vars(const Playbook& pb, const Inventory* inv, const LoadOptions& opt,
                      std::vector<LoadError>* errors) {
  if (!inv && pb.inventory) inv = &*pb.inventory;
  std::set<std::string> known;  // defined or used: a -e of such a name does something
  std::vector<std::string> cands;
  auto add = [&](const std::string& n) {
    if (known.insert(n).second) cands.push_back(n);
  };
  for (const auto& [name, pos] : pb.var_pos)
    if (pos.file != "-e") add(name);
  for (const auto& [name, _] : pb.secrets) add(name);
  for (const auto& name : opt.secret_vars) add(name);
  if (inv) {
    for (const auto& [_, h] : inv->hosts)
      for (const auto& it : h.vars.as_table()) add(it.first);
    for (const auto& [_, gv] : inv->group_vars)
      for (const auto& it : gv.as_table()) add(it.first);
  }
  for (const auto& s : pb.steps) {
    if (!s.when.empty()) {
      std::string name = s.when.rfind("not ", 0) == 0 ? s.when.substr(4) : s.when;
      name.erase(0, name.find_first_not_of(' '));
      add(first_segment(name));
    }
    each_string(pb, s, [&](const Action&, FieldString& f) {
      for (const auto& r : f.refs) add(first_segment(r.name));
    });
    if (s.kind == Kind::write)
      for (const auto& name : template_file_refs(pb, s.body)) add(first_segment(name));
  }
  std::set<std::string> reported;
  for (const auto& [key, text] : opt.extra_vars) {
    // Names the loader refused already (not a name, built-in, a [secrets] entry) are not repeated.
    if (known.contains(key) || !pb.vars.contains(key) || !reported.insert(key).second) continue;
    std::string near = util::nearest(key, cands);
    errors->push_back(
        {{"-e", 0, 0},
         fmt::format("`{}` is not a var of the playbook or its hosts, nor used by a template: "
                     "-e {}=... would change nothing",
                     key, key),
         near.empty() ? "-e sets a var that the playbook's templates use"
                      : fmt::format("did you mean `{}`?", near),
         ""});
  }
}

}  // namespace ratchet::playbook
