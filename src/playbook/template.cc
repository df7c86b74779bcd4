#include "playbook/template.h"

#include <fmt/format.h>

#include <cmath>

#include "transcript/value_json.h"
#include "util/gpu_table.h"
#include "util/owner_words.h"
#include "util/shell.h"
#include "util/spell.h"

namespace ratchet::playbook {
namespace {

// A template split into literal text and references.
struct Piece {
  bool is_ref = false;
  std::string text;  // literal text, or the reference name
  size_t offset = 0;
  size_t length = 0;
};

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return std::string(s.substr(b, e - b));
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// Reference names: dotted segments of [A-Za-z0-9_-], starting with a letter or '_'.
bool valid_name(const std::string& s) {
  if (s.empty() || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
    return false;
  bool seg_empty = true;
  for (char c : s) {
    if (c == '.') {
      if (seg_empty) return false;
      seg_empty = true;
    } else if (is_name_char(c)) {
      seg_empty = false;
    } else {
      return false;
    }
  }
  return !seg_empty;
}

std::optional<std::vector<Piece>> parse(const std::string& t, std::string* err, size_t* err_off) {
  std::vector<Piece> out;
  std::string lit;
  size_t lit_start = 0, i = 0;
  auto flush = [&](size_t end) {
    if (!lit.empty()) out.push_back({false, lit, lit_start, end - lit_start});
    lit.clear();
  };
  while (i < t.size()) {
    if (t.compare(i, 2, "{{") != 0) {
      if (lit.empty()) lit_start = i;
      lit += t[i++];
      continue;
    }
    size_t close = t.find("}}", i + 2);
    auto fail = [&](std::string msg) {
      *err = std::move(msg);
      if (err_off) *err_off = i;
      return std::nullopt;
    };
    if (close == std::string::npos) return fail("unclosed `{{`");
    std::string inner = trim(std::string_view(t).substr(i + 2, close - i - 2));
    size_t len = close + 2 - i;
    flush(i);
    if (inner.size() >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner.back() == inner[0]) {
      out.push_back({false, inner.substr(1, inner.size() - 2), i, len});
    } else if (inner.empty()) {
      return fail("empty `{{ }}`");
    } else if (!valid_name(inner)) {
      return fail(fmt::format("`{}` is not a variable name", inner));
    } else {
      out.push_back({true, inner, i, len});
    }
    i = close + 2;
  }
  flush(t.size());
  return out;
}

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t e; (e = s.find('.', b)) != std::string::npos; b = e + 1)
    out.push_back(s.substr(b, e - b));
  out.push_back(s.substr(b));
  return out;
}

// Walks a dotted name into `scope`. On failure returns null and puts a
// "did you mean" candidate (full dotted name) into *suggest when one is near.
const Value* lookup(const Value& scope, const std::string& name, std::string* suggest) {
  const Value* cur = &scope;
  std::string prefix;
  for (const auto& seg : split_dots(name)) {
    const Value* next = nullptr;
    if (cur->is_table()) {
      next = cur->find(seg);
    } else if (cur->is_array() && !seg.empty() &&
               seg.find_first_not_of("0123456789") == std::string::npos && seg.size() < 9) {
      size_t idx = std::stoul(seg);
      if (idx < cur->size()) next = &(*cur)[idx];
    }
    if (!next) {
      if (cur->is_table()) {
        std::vector<std::string> keys;
        for (const auto& it : cur->as_table()) keys.push_back(it.first);
        std::string near = util::nearest(seg, keys);
        if (!near.empty()) *suggest = prefix + near;
      }
      return nullptr;
    }
    prefix += seg + ".";
    cur = next;
  }
  return cur;
}

bool is_holders(const Value& v) {
  if (!v.is_array() || v.empty()) return false;
  for (const auto& e : v.as_array())
    if (!e.is_table() || !e.contains("pid")) return false;
  return true;
}

std::string holder_line(const Value& h) {
  std::string out = "PID " + to_text(h["pid"]);
  if (h.contains("user")) out += " user " + to_text(h["user"]);
  if (h.contains("started")) out += " started " + to_text(h["started"]);
  if (h.contains("state")) out += " state " + to_text(h["state"]);
  if (const Value* o = h.find("owner"); o && !util::owner_words(*o).empty()) out += " owner " + util::owner_words(*o);
  if (h.contains("cmdline")) {
    const Value& c = h["cmdline"];
    std::string cmd;
    if (c.is_array()) {
      for (const auto& w : c.as_array()) cmd += (cmd.empty() ? "" : " ") + to_text(w);
    } else {
      cmd = to_text(c);
    }
    out += " cmd: " + cmd;
  }
  if (h.contains("files") && !h["files"].empty()) out += " files: " + to_text(h["files"]);
  if (h.contains("nodes") && h["nodes"].is_array())  // a device held through another node
    for (const auto& n : h["nodes"].as_array()) {
      if (!n.is_table()) continue;
      out += std::string(" (holds ") + (n.contains("deleted") ? "the deleted node " : "") + to_text(n["node"]);
      if (n.contains("mount_ns")) out += " of mount namespace " + to_text(n["mount_ns"]);
      out += ": same device " + to_text(n["device"]) + " as " + to_text(n["target"]) + ")";
    }
  return out;
}

bool plan_placeholder(const std::string& name) {
  return name.rfind("steps.", 0) == 0 || name.rfind("run.", 0) == 0 || name == "steps" ||
         name == "run";
}

std::string shell_text(const Value& v) {
  if (!v.is_array()) return util::shell_quote(to_text(v));
  std::string out;
  for (const auto& e : v.as_array()) out += (out.empty() ? "" : " ") + util::shell_quote(to_text(e));
  return out;
}

}  // namespace

std::string to_text(const Value& v) {
  switch (v.type()) {
    case Value::Type::null:
      return "";
    case Value::Type::string:
      return v.as_string();
    case Value::Type::array: {
      std::string out;
      if (util::is_gpu_evidence(v)) return util::gpu_table(v);  // verify gpus_idle's per-GPU evidence
      if (is_holders(v)) {
        for (const auto& h : v.as_array()) out += (out.empty() ? "" : "\n") + holder_line(h);
        return out;
      }
      for (const auto& e : v.as_array()) out += (out.empty() ? "" : ", ") + to_text(e);
      return out;
    }
    case Value::Type::table:
      return transcript::to_json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    default:
      return util::toml_text(v);  // numbers and booleans as TOML writes them
  }
}

std::optional<std::vector<TemplateRef>> template_ref_spans(const std::string& tmpl,
                                                           std::string* err, size_t* err_offset) {
  auto pieces = parse(tmpl, err, err_offset);
  if (!pieces) return std::nullopt;
  std::vector<TemplateRef> out;
  for (const auto& p : *pieces)
    if (p.is_ref) out.push_back({p.text, p.offset, p.length});
  return out;
}

std::optional<std::vector<std::string>> template_refs(const std::string& tmpl, std::string* err) {
  auto spans = template_ref_spans(tmpl, err);
  if (!spans) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& r : *spans) out.push_back(r.name);
  return out;
}

std::optional<Value> render(const std::string& tmpl, const Value& scope, const RenderOptions& opt,
                            std::string* err) {
  auto pieces = parse(tmpl, err, nullptr);
  if (!pieces) return std::nullopt;
  std::string out;
  for (const auto& p : *pieces) {
    if (!p.is_ref) {
      out += p.text;
      continue;
    }
    std::string suggest;
    const Value* v = lookup(scope, p.text, &suggest);
    if (!v) {
      if (opt.plan && plan_placeholder(p.text)) {
        std::string ph = "<" + p.text + ">";
        if (pieces->size() == 1 && opt.mode == RenderMode::text) return Value(ph);
        out += ph;  // unquoted even in shell mode: it names a value, it is not one
        continue;
      }
      *err = fmt::format("undefined variable `{}`", p.text);
      if (!suggest.empty()) *err += fmt::format(" (did you mean `{}`?)", suggest);
      return std::nullopt;
    }
    if (opt.mode == RenderMode::text && pieces->size() == 1 && p.length == tmpl.size()) return *v;
    out += opt.mode == RenderMode::shell ? shell_text(*v) : to_text(*v);
  }
  return Value(out);
}

std::optional<Value> render_tree(const Value& v, const Value& scope, bool plan, std::string* err) {
  if (v.is_string()) return render(v.as_string(), scope, {RenderMode::text, plan}, err);
  if (v.is_array()) {
    Value out = Value::array();
    for (const auto& e : v.as_array()) {
      auto r = render_tree(e, scope, plan, err);
      if (!r) return std::nullopt;
      out.push_back(std::move(*r));
    }
    return out;
  }
  if (v.is_table()) {
    Value out = Value::table();
    for (const auto& it : v.as_table()) {
      auto r = render_tree(it.second, scope, plan, err);
      if (!r) return std::nullopt;
      out[it.first] = std::move(*r);
    }
    return out;
  }
  return v;
}

namespace {

// sh's quoting state while a command is read left to right: quotes, backslash
// escapes, and comments (a `#` that begins a word, up to the newline: quotes
// in a comment quote nothing). A `#` begins a word only after an unquoted,
// unescaped blank or operator byte, so `\ #` and `a#` are no comments.
struct QuoteState {
  enum { none, single, dbl, comment } s = none;
  bool word_start = true;  // the next unquoted byte begins a word
  bool quoted() const { return s == single || s == dbl; }
  bool in_comment() const { return s == comment; }
  // Reads cmd[i]; returns how many bytes it took (2 for a backslash escape).
  size_t step(const std::string& cmd, size_t i) {
    char c = cmd[i];
    if (s == comment) {
      if (c == '\n') s = none, word_start = true;
      return 1;
    }
    if (s == single) {
      if (c == '\'') s = none;
      return 1;
    }
    if (c == '\\') {  // \" \\ \$ stay inside double quotes; outside, any byte (\ newline joins lines)
      word_start = false;
      return 2;
    }
    if (s == dbl) {
      if (c == '"') s = none;
      return 1;
    }
    if (c == '#' && word_start) {
      s = comment;
      return 1;
    }
    if (c == '\'') s = single;
    else if (c == '"') s = dbl;
    word_start = c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' ||
                 c == ')' || c == '<' || c == '>';
    return 1;
  }
};

}  // namespace

long heredoc_template_offset(const std::string& cmd) {
  QuoteState q;
  for (size_t i = 0; i < cmd.size(); i += q.step(cmd, i)) {
    if (q.s == QuoteState::none && cmd.compare(i, 2, "<<") == 0 && cmd.compare(i, 3, "<<<") != 0) {
      // A here-document: its body starts on the next line.
      size_t body = cmd.find('\n', i);
      if (body == std::string::npos) return -1;
      size_t t = cmd.find("{{", body);
      return t == std::string::npos ? -1 : static_cast<long>(t);
    }
  }
  return -1;
}

long unsafe_template_offset(const std::string& cmd, std::string* why) {
  QuoteState q;
  bool backquote = false;
  for (size_t i = 0; i < cmd.size();) {
    char c = cmd[i];
    if (q.in_comment()) {
      if (cmd.compare(i, 2, "{{") == 0) {
        *why = "inside a shell comment (after #): a newline in the value would run as a command";
        return static_cast<long>(i);
      }
      i += q.step(cmd, i);
      continue;
    }
    if (!q.quoted()) {
      if (c == '\\' && cmd.compare(i + 1, 2, "{{") == 0) {
        *why = "right after a backslash, which escapes the value's opening quote";
        return static_cast<long>(i + 1);
      }
      if (cmd.compare(i, 2, "{{") == 0) {
        if (backquote) {
          *why = "inside backquotes, where the shell reads quotes twice; use $(...)";
          return static_cast<long>(i);
        }
        if (i > 0 && cmd[i - 1] == '$') {
          *why = "right after `$` (bash reads ${{ x }} as $'...', which interprets backslash escapes)";
          return static_cast<long>(i);
        }
        size_t close = cmd.find("}}", i + 2);
        if (close == std::string::npos) return -1;
        i = close + 2;
        q.word_start = false;
        continue;
      }
      if (c == '`') backquote = !backquote;
    }
    i += q.step(cmd, i);
  }
  return -1;
}

long quoted_template_offset(const std::string& cmd) {
  QuoteState q;
  for (size_t i = 0; i < cmd.size();) {
    if (cmd.compare(i, 2, "{{") == 0) {
      if (q.quoted()) return static_cast<long>(i);
      // An unquoted template (or one in a comment: unsafe_template_offset's
      // case): skip it whole (a literal '{{' inside is no quote).
      size_t close = cmd.find("}}", i + 2);
      if (close == std::string::npos) return -1;
      i = close + 2;
      if (!q.in_comment()) q.word_start = false;
      continue;
    }
    i += q.step(cmd, i);
  }
  return -1;
}

}  // namespace ratchet::playbook
