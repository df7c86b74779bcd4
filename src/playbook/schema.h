#pragma once
// The keys each step kind takes, their types and the kind's rules (docs/playbook.md, "Kinds").
// Pure data and checks on a table already read into a Value; no TOML, no I/O.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "playbook/key_rules.h"
#include "playbook/model.h"

namespace ratchet::playbook {

/// The type a key's value must have.
enum class FieldType {
  string,
  boolean,
  integer,
  duration,  ///< a string with a unit: "250ms", "10s", "5m", "1h"
  strings,   ///< a string or an array of strings
  ints,      ///< an integer or an array of integers
  table,
  tables,  ///< an array of tables (`escalate`)
};

/// Reads a kind key's value (literal, or `rendered` from a template) into its
/// Field of `keys` (which holds that key's kind); false with *p (key_rules.h).
using KeyReader = bool (*)(std::string_view key, const Value& v, bool rendered, ActionKeys& keys, KeyProblem* p);

/// The Field of `keys` that a kind key fills (`keys` holds that key's kind).
using KeyField = FieldBase& (*)(ActionKeys& keys);

/// One key a step, rung or [defaults] table may hold.
struct FieldSpec {
  std::string name;
  FieldType type;
  bool shell = false;      ///< a shell command: a template must not sit inside quotes
  bool secret_ok = false;  ///< may reference secrets (`stdin`, `content`)
  KeyReader read = nullptr;  ///< kind keys: the key's one rule; common keys: none
  KeyField field = nullptr;  ///< kind keys: where the value goes
  ValueRule rule = ValueRule::plain;  ///< kind keys: rule_of<the reader>; others: what the loader holds it to
  std::vector<std::string> values = {};  ///< ValueRule::choice: the words it may be
};

/// A FieldSpec of a key no kind owns: its name, type and what the loader holds it to.
FieldSpec plain_field(std::string name, FieldType type, ValueRule rule = ValueRule::plain,
                      std::vector<std::string> values = {});

/// A step kind and its own keys (beyond the common step fields).
struct KindSpec {
  Kind kind;
  std::vector<FieldSpec> fields;
  bool rung = false;  ///< may be an escalation rung
  std::string name = std::string(playbook::name(kind));  ///< as written: "run", ...
};

/// What a kind's table must hold beyond each key's own rule: check_table
/// enforces it (its messages name `label`) and `ratchet schema` writes it.
struct KindRules {
  Kind kind;
  std::vector<std::string> required;  ///< each must be there
  std::vector<std::string> one_of;    ///< exactly one of these ("kill needs one selector: ...")
  std::string one_of_label;           ///< "selector", or "" to list the keys alone
  std::vector<std::string> any_of;    ///< at least one of these ("verify needs a condition: ...")
  std::string any_of_label;           ///< "condition", or ""
  struct Needs {
    std::string key;                  ///< given, it needs
    std::vector<std::string> one_of;  ///< one of these beside it
    std::string why = "";             ///< the message, or "" for "`k` goes with `a` or `b`, which this step lacks"
  };
  std::vector<Needs> needs;
};

/// The rules of kind `k` (none beyond its keys' own: an empty KindRules).
const KindRules& kind_rules(Kind k);

/// The step kinds, in the order docs/playbook.md lists them (kKinds): run, service,
/// kill, verify, write, copy, fetch, reboot.
const std::vector<KindSpec>& step_kinds();

/// The kind named `name` (parse_kind), or nullptr.
const KindSpec* find_kind(std::string_view name);

/// The spec of kind `k`.
const KindSpec& kind_spec(Kind k);

/// Keys every step takes: id, name, kind, timeout, settle, retries, delay, become,
/// become_user, when, on_failure, register, escalate, capture, probe, tags.
const std::vector<FieldSpec>& common_step_fields();

/// Keys every rung takes besides its kind's: kind, timeout, settle, retries, delay.
const std::vector<FieldSpec>& rung_fields();

/// Keys [defaults] takes: timeout, settle, retries, delay, capture, become, become_user.
const std::vector<FieldSpec>& defaults_fields();

/// Keys a playbook's top level takes (loader.cc): name, description, targets, strategy,
/// serial, max_fail, vars, defaults, secrets, inventory, step, lock, lock_path, audit_log.
const std::vector<FieldSpec>& top_fields();

/// Keys an include entry (a [[step]] with `include`, include.cc) takes: id, include, vars, tags.
const std::vector<FieldSpec>& include_entry_fields();

/// Keys an included file (a piece) holds at its top level: vars, step.
const std::vector<FieldSpec>& piece_fields();

/// Keys an inventory takes (a file's top level, or a playbook's [inventory]): hosts, groups, group_vars, defaults.
const std::vector<FieldSpec>& inventory_fields();

/// Keys an inventory's [defaults] takes, run defaults for `run` and `apply`: sign.
const std::vector<FieldSpec>& inventory_defaults_fields();

/// Keys an inventory host takes (inventory_loader.cc): address, port, user, ... .
const std::vector<FieldSpec>& host_fields();

/// Scope roots that templates reach without a var (template.h): no var or secret may be named so.
const std::vector<std::string>& reserved_names();

/// Whether a table is a step or one of its rungs.
enum class TableRole { step, rung };

/// The spec of `key` in a `kind` step or rung, or nullptr when the key does not belong.
/// No kind (nullopt): only the keys every step or rung takes.
const FieldSpec* find_field(TableRole role, std::optional<Kind> kind, std::string_view key);
/// As above, the kind by name ("" or a name that is none: no kind).
const FieldSpec* find_field(TableRole role, std::string_view kind, std::string_view key);

/// Every key a `kind` step or rung may hold, common keys first (nullopt or "": the common keys).
std::vector<std::string> allowed_keys(TableRole role, std::optional<Kind> kind);
std::vector<std::string> allowed_keys(TableRole role, std::string_view kind);

/// "a string", "an array of integers", ... for messages.
std::string type_name(FieldType t);

/// The TOML type name of a value for messages: "a string", "an integer", "a table".
std::string value_type_name(const Value& v);

/// "" when `v` fits `type`, else the reason ("`retries` must be an integer, not a
/// string"). With `templates_ok` a string holding "{{" fits any type but table(s).
std::string type_error(std::string_view key, const Value& v, FieldType type, bool templates_ok);

/// A problem in one table. `key` "" means the table itself; `unknown_key` marks
/// unknown-key problems (the caller adds where: "in step `x`").
struct SchemaProblem {
  std::string key;
  std::string message;
  std::string hint;  ///< "did you mean `pid_file`?" or ""
  bool at_key = false;
  bool unknown_key = false;
};

/// Checks a step or rung table: `kind` present and known, unknown keys (with
/// "did you mean"), types, and the kind's rules (one kill selector, verify
/// conditions, required keys); with `keys`, reads each kind key into it by the
/// key's rule (a template is kept as written, for each host to render). A key
/// whose rule refuses it is a problem. `escalate` rung tables are not looked
/// into (check each with role rung).
std::vector<SchemaProblem> check_table(TableRole role, const Value& table, ActionKeys* keys = nullptr);

/// Whether `v` holds a template: a string with "{{", or an array holding one.
bool has_template(const Value& v);

/// Calls fn for each key of `a`'s kind that the table gave, in the schema's order.
void each_key(const Action& a, const std::function<void(const FieldSpec&, const FieldBase&)>& fn);

/// The default step id for a name: lowercase ASCII letters and digits, each run
/// of other characters one "_", none at either end ("" when nothing is left).
std::string slug(std::string_view name);

/// Normalises a signal name ("SIGTERM", "term", "15" -> "TERM"); "" when unknown
/// (util::signal_name: the table the kill builder uses too).
std::string normalize_signal(std::string_view name);

}  // namespace ratchet::playbook
