// load_playbook: the top-level table, vars, secrets, -e; steps are read in
// step_loader.cc, the inventory in inventory_loader.cc.
#include "playbook/loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "playbook/loader_internal.h"
#include "playbook/local_files.h"
#include "playbook/schema.h"
#include "util/hash.h"
#include "util/rules.h"
#include "util/text.h"
#include "util/spell.h"

namespace ratchet::playbook {
namespace {

bool reserved(const std::string& name) {
  const auto& r = reserved_names();
  return std::find(r.begin(), r.end(), name) != r.end();
}

bool plain_var_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-') return false;
  for (unsigned char c : s)
    if (!std::isalnum(c) && c != '_' && c != '-') return false;
  return true;
}

/// `serial` / `max_fail`: an integer in util::int_range(key), or "N%" with N
/// from that range's minimum to 100.
void read_count(const Diag& d, const char* key, HostCount* out) {
  const Value& root = d.doc.root;
  if (!root.contains(key)) return;
  const Value& v = root[key];
  const util::IntRange& r = *util::int_range(key);
  auto bad = [&] {
    d.error(d.doc.at(DocPath() / key),
            fmt::format("`{}` must be a number of hosts ({}..{}) or a percentage ({}%..100%) such as \"30%\"",
                        key, r.min, r.max, r.min),
            fmt::format("write {} = {} or {} = \"25%\"", key, std::max<long long>(r.min, 2), key));
  };
  if (v.is_int()) {
    if (!util::range_problem(key, v.as_int()).empty()) return bad();
    *out = {true, v.as_int(), false};
    return;
  }
  if (!v.is_string()) return bad();
  std::string s = v.as_string();
  if (s.size() < 2 || s.back() != '%' || s.size() > 5) return bad();
  std::string digits = s.substr(0, s.size() - 1);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return bad();
  long long n = std::stoll(digits);
  if (n < r.min || n > 100) return bad();
  *out = {true, n, true};
}

void read_policy(const Diag& d, RunPolicy* p) {
  const Value& root = d.doc.root;
  if (root.contains("strategy")) {
    const Value& v = root["strategy"];
    std::string s = v.is_string() ? v.as_string() : "";
    if (auto st = parse_strategy(s)) {
      p->strategy = *st;
    } else {
      std::string near = v.is_string() ? util::nearest(s, {"linear", "free"}) : "";
      d.error(d.doc.at(DocPath() / "strategy"),
              fmt::format("`strategy` must be \"linear\" or \"free\"{}",
                          v.is_string() ? fmt::format(", not \"{}\"", s) : ""),
              near.empty() ? "" : fmt::format("did you mean \"{}\"?", near));
    }
  }
  read_count(d, "serial", &p->serial);
  read_count(d, "max_fail", &p->max_fail);
  // fleet.cc checks max_fail before each batch: with one batch it never stops anything.
  if (p->max_fail.set && !root.contains("serial"))
    d.error(d.doc.at(DocPath() / "max_fail"),
            "`max_fail` is checked between batches; set `serial` (without it every host runs in one batch, and "
            "no failure stops another)",
            "write serial = 1 beside it; one host at a time, a canary first; or serial = \"25%\"; or drop max_fail");
}

void read_top(const Diag& d, Playbook* pb) {
  const Value& root = d.doc.root;
  std::vector<std::string> top_keys;
  for (const auto& f : top_fields()) top_keys.push_back(f.name);
  for (const auto& it : root.as_table()) {
    if (std::find(top_keys.begin(), top_keys.end(), it.first) != top_keys.end()) continue;
    std::string near = util::nearest(it.first, top_keys);
    d.error(d.doc.key_at(DocPath() / it.first), fmt::format("unknown top-level key `{}`", it.first),
            near.empty() ? "" : fmt::format("did you mean `{}`?", near));
  }
  auto typed = [&](const char* key, FieldType type) -> const Value* {
    if (!root.contains(key)) return nullptr;
    std::string err = type_error(key, root[key], type, false);
    if (err.empty()) return &root[key];
    d.error(d.doc.at(DocPath() / key), err);
    return nullptr;
  };
  if (!root.contains("name"))
    d.error({d.doc.file, 1, 1}, "playbook has no `name`", "add name = \"...\" at the top");
  if (auto v = typed("name", FieldType::string)) pb->name = v->as_string();
  if (auto v = typed("description", FieldType::string)) pb->description = v->as_string();
  if (auto v = typed("targets", FieldType::strings)) {
    if (v->is_array() && v->empty())
      d.error(d.doc.at(DocPath() / "targets"), "`targets` is empty",
              "name hosts or groups, or leave `targets` out to select every host");
    if (v->is_string())
      pb->targets.push_back(v->as_string());
    else
      for (const auto& t : v->as_array()) pb->targets.push_back(t.as_string());
  }
  read_policy(d, &pb->policy);
  for (const char* k : {"lock", "lock_path", "audit_log"})
    if (root.contains(k))
      if (std::string err = read_guard_key(k, root[k], &pb->guards); !err.empty()) d.error(d.doc.at(DocPath() / k), err);
  if (auto v = typed("vars", FieldType::table)) {
    for (const auto& it : v->as_table()) {
      DocPath p = (DocPath() / "vars") / it.first;
      if (reserved(it.first))
        d.error(d.doc.key_at(p), fmt::format("`{}` is a built-in name, not a var", it.first),
                "pick another name");
      pb->vars[it.first] = it.second;
      pb->var_pos[it.first] = d.doc.at(p);
    }
  }
  if (auto v = typed("secrets", FieldType::table)) {
    for (const auto& it : v->as_table()) {
      DocPath p = (DocPath() / "secrets") / it.first;
      const Value& s = it.second;
      std::string src = s.is_string() ? s.as_string() : "";
      bool env = src.rfind("env:", 0) == 0 && src.size() > 4;
      bool file = src.rfind("file:", 0) == 0 && src.size() > 5;
      if (!env && !file) {
        d.error(d.doc.at(p), "secrets take a source, not a value",
                "write \"env:NAME\" or \"file:PATH\"");
        continue;
      }
      if (pb->vars.contains(it.first) || reserved(it.first))
        d.error(d.doc.key_at(p), fmt::format("secret `{}` has the name of a var", it.first),
                "give the secret its own name");
      pb->secrets[it.first] = src;
    }
  }
  if (auto v = typed("inventory", FieldType::table)) {
    (void)v;
    pb->inventory = read_inventory(d.doc, (DocPath() / "inventory"), d.out);
    if (pb->inventory) pb->inventory->path = pb->path;
  }
}

// A -e value that can only be meant as TOML: an array, a table or a quoted
// string. Anything else that does not parse (10s, a path, a word) is text.
bool starts_like_toml(const std::string& text) {
  size_t i = text.find_first_not_of(" \t");
  return i != std::string::npos && std::string_view("[{\"'").find(text[i]) != std::string_view::npos;
}

void apply_extra_vars(const LoadOptions& opt, Playbook* pb, std::vector<LoadError>* errors) {
  const std::set<std::string> secret(opt.secret_vars.begin(), opt.secret_vars.end());
  for (const auto& name : opt.secret_vars) {
    bool given = false;
    for (const auto& kv : opt.extra_vars) given |= kv.first == name;
    if (!given)
      errors->push_back({{"--secret", 0, 0},
                         fmt::format("`{}`: no -e {}=VALUE gives this secret its value", name, name),
                         fmt::format("add -e {}=VALUE, or use a [secrets] entry (env:NAME, file:PATH)", name),
                         ""});
  }
  for (const auto& [key, text] : opt.extra_vars) {
    SourcePos pos{"-e", 0, 0};
    if (secret.contains(key) && plain_var_name(key) && !reserved(key) && !pb->secrets.contains(key)) {
      // A secret given on the command line: the text as is, never a var.
      pb->vars.erase(key);
      pb->var_pos.erase(key);
      pb->secrets[key] = "-e";
      pb->extra_secrets[key] = text;
      continue;
    }
    if (secret.contains(key) && pb->extra_secrets.contains(key)) {  // given twice: last wins
      pb->extra_secrets[key] = text;
      continue;
    }
    if (!plain_var_name(key)) {
      errors->push_back({pos,
                         fmt::format("`{}={}`: `{}` is not a variable name", key,
                                     secret.contains(key) ? "***" : text, key),
                         "write -e name=value", ""});
      continue;
    }
    if (reserved(key) || pb->secrets.contains(key)) {
      errors->push_back({pos,
                         fmt::format("`{}` is a {}; -e sets vars only", key,
                                     reserved(key) ? "built-in name" : "secret"),
                         "", ""});
      continue;
    }
    std::string why;
    size_t at = 0;
    auto parsed = parse_toml_value(text, &why, &at);
    if (!parsed && starts_like_toml(text)) {  // an array or a string the shell or a typo broke: never text
      errors->push_back({pos,
                         fmt::format("`{}={}`: the value starts like TOML (`{}`) but is not TOML at column {} of it: {}",
                                     key, text, text[text.find_first_not_of(" \t")], at, why),
                         fmt::format("write valid TOML, each string quoted (-e '{}=[\"/dev/nvidia0\"]'), or quote "
                                     "the whole value to pass it as text (-e '{}=\"...\"')",
                                     key, key),
                         ""});
      continue;
    }
    pb->vars[key] = parsed.value_or(Value(text));
    pb->var_pos.emplace(key, pos);  // a var of the file keeps its place there
  }
}

}  // namespace

std::string format_error(const LoadError& e) {
  // Messages echo values from the file: no byte of them may drive the terminal.
  std::string out = util::terminal_line(e.pos.str() + ": error: " + e.message);
  if (!e.hint.empty()) out += " (" + util::terminal_line(e.hint) + ")";
  out += '\n';
  if (e.pos.line <= 0 || e.source_line.empty()) return out;
  std::string line;  // terminal-safe, its tabs kept so the caret lines up
  size_t from = 0;
  for (size_t tab; (tab = e.source_line.find('\t', from)) != std::string::npos; from = tab + 1)
    line += util::terminal_line(std::string_view(e.source_line).substr(from, tab - from)) + '\t';
  line += util::terminal_line(std::string_view(e.source_line).substr(from));
  out += "    " + line + '\n';
  if (e.pos.col <= 0) return out;
  // The caret sits under the column (code points); tabs stay tabs to keep it aligned.
  std::string pad = "    ";
  int col = 1;
  for (size_t i = 0; i < e.source_line.size() && col < e.pos.col; ++i) {
    unsigned char c = static_cast<unsigned char>(e.source_line[i]);
    if ((c & 0xC0) == 0x80) continue;
    pad += c == '\t' ? '\t' : ' ';
    ++col;
  }
  pad.append(static_cast<size_t>(e.pos.col - col), ' ');
  return out + pad + "^\n";
}

void order_errors(std::vector<LoadError>* errors, const std::string& file) {
  sort_errors(errors, 0, file);
}

std::optional<Playbook> load_playbook(const std::string& path, const LoadOptions& opt,
                                      std::vector<LoadError>* errors, Playbook* partial) {
  size_t before = errors->size();
  std::string text, err;
  if (!read_text_file(path, &text, &err)) {
    errors->push_back({{path, 0, 0}, "cannot read the playbook: " + err, "", ""});
    return std::nullopt;
  }
  auto doc = parse_doc(text, path, errors);
  if (!doc) return std::nullopt;
  Playbook pb;
  pb.path = path;
  std::string dir = std::filesystem::path(path).parent_path().string();
  pb.dir = dir.empty() ? "." : dir;
  pb.source = std::move(text);
  pb.sha256 = util::sha256_hex(pb.source);
  Diag d{*doc, errors};
  read_top(d, &pb);
  IncludeState inc;
  inc.main_dir = pb.dir;
  inc.chain = {path};
  inc.chain_real = {std::filesystem::weakly_canonical(std::filesystem::absolute(path)).string()};
  pb.steps = read_steps(*doc, errors, &inc);
  pb.includes = inc.files;
  apply_include_vars(inc, &pb, errors);
  apply_extra_vars(opt, &pb, errors);
  read_local_files(&pb, errors);
  check_step_templates(pb, errors);
  note_include_sites(pb, errors, before);
  if (errors->size() == before) {
    if (partial) *partial = pb;
    return pb;
  }
  sort_errors(errors, before, path);  // file order, then -e
  if (partial) *partial = std::move(pb);
  return std::nullopt;
}

}  // namespace ratchet::playbook
