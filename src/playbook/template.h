#pragma once
// {{ name }} templates (docs/playbook.md, "Templates"). Pure functions: no I/O.
// A literal "{{" is written {{ '{{' }}: a quoted string inside the braces is
// literal text. There is no other escape.
#include <optional>
#include <string>
#include <vector>

#include "playbook/model.h"

namespace ratchet::playbook {

/// How substituted values are written. `text`: as text (no quoting). `shell`:
/// each value shell-quoted, arrays expand to quoted words separated by spaces.
enum class RenderMode { text, shell };

struct RenderOptions {
  RenderMode mode = RenderMode::text;
  /// Dry run: a reference under `steps.` or `run.` that the scope lacks renders as
  /// the placeholder "<steps.x.stdout>" instead of failing.
  bool plan = false;
};

/// Renders `tmpl` against `scope` (a JSON object: vars at top level, plus `host`,
/// `run`, `playbook`, `ratchet`, `steps` objects; dotted names walk into them).
/// In text mode a template that is exactly one "{{ ref }}" returns the value with
/// its own type (an array stays an array); otherwise a string. Returns nullopt and
/// sets *err ("undefined variable `x`", "unclosed {{") on failure.
std::optional<Value> render(const std::string& tmpl, const Value& scope, const RenderOptions& opt,
                            std::string* err);

/// Renders every string inside `v` (arrays and tables recursively) in text mode.
std::optional<Value> render_tree(const Value& v, const Value& scope, bool plan, std::string* err);

/// The references a template uses, in order ("unit", "steps.stop.status").
/// Returns nullopt and sets *err on a syntax error (unclosed "{{", empty name).
std::optional<std::vector<std::string>> template_refs(const std::string& tmpl, std::string* err);

/// One "{{ ref }}" in a template: the reference and the byte span of the whole
/// "{{ ... }}" in the template text. A literal "{{ '{{' }}" is not a reference.
struct TemplateRef {
  std::string name;
  size_t offset = 0;
  size_t length = 0;
};

/// Like template_refs, with spans. On a syntax error returns nullopt, sets *err
/// and, when given, *err_offset (byte offset of the offending "{{").
std::optional<std::vector<TemplateRef>> template_ref_spans(const std::string& tmpl,
                                                           std::string* err,
                                                           size_t* err_offset = nullptr);

/// Text form of a value: strings as they are, numbers and booleans as TOML writes
/// them, a table as JSON; arrays of holders (objects with "pid") one holder a line ("PID 42 user
/// root started T cmd: ... files: a, b"), other arrays joined with ", ".
std::string to_text(const Value& v);

/// In a shell command field, a template inside '...' or "..." is an error
/// (values are quoted for you). Returns the 0-based offset of the first such
/// "{{", or -1 when there is none.
long quoted_template_offset(const std::string& command);

/// In a shell command field, a template in the body of a here-document
/// (`<<EOF`) is an error: the shell does not parse quotes there, so a quoted
/// value would run (unquoted delimiter) or keep its quotes (quoted one).
/// Returns the 0-based offset of the first such "{{", or -1.
long heredoc_template_offset(const std::string& command);

/// In a shell command field, an unquoted template where the shell would not
/// take the value's quotes as quotes: in a comment (`# {{ x }}`: a newline in
/// the value starts a command), right after a backslash (`\{{ x }}` escapes
/// the opening quote), right after `$` (`${{ x }}` is bash's $'...', which
/// reads backslash escapes), or inside backquotes (the shell reads them twice;
/// use $(...)). Returns the 0-based offset of the first such "{{" and sets
/// *why (a phrase: "inside a shell comment ..."), or -1.
long unsafe_template_offset(const std::string& command, std::string* why);

}  // namespace ratchet::playbook
