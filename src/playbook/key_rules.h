#pragma once
// The rule for each kind key's value, in one place: its type and what it may
// hold (ranges, signals, modes, regexes, absolute paths). The loader reads a
// literal with it (file:line:col); steps::resolve reads a template's rendered
// value with the same function. A value cannot pass one and fail the other.
#include <string>
#include <string_view>
#include <vector>

#include "playbook/actions.h"
#include "playbook/value.h"

namespace ratchet::playbook {

/// Why a value was refused: a message naming the key, and a fix ("" = none).
struct KeyProblem {
  std::string message;
  std::string hint;
};

/// Each reader takes the key's name, the value, and whether it came from a
/// template (`rendered`: text forms such as "42" or "true" are then read as the
/// number or boolean a template writes). True with *out set, or false with *p.
/// `text`: a string (a rendered integer as its digits); no NUL byte in any.
bool read_text(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p);
/// write's `content`: a string; rendered, any value as its text (to_text: a
/// holders or GPU evidence array becomes its lines or its table).
bool read_content(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p);
/// A string that must not be empty or blank (`command`, `pid_file`, `unit`, ...).
bool read_word(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p);
/// A string or an array of strings.
bool read_texts(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out, KeyProblem* p);
/// As read_texts, at least one, none empty (`holders_of`, `no_holders`).
bool read_paths(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out, KeyProblem* p);
/// As read_paths, each absolute: every path or glob expanded on the host
/// (`holders_of`, `no_holders`, `gpu_devices`, `file_exists`, `creates`, fetch's `src`).
bool read_abs_paths(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out, KeyProblem* p);
/// As read_texts, no name empty or holding a comma (`exclude`: the library joins them with ",").
bool read_names(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out, KeyProblem* p);
/// `user` of kill and verify: as read_names, at least one (no user would be no filter).
bool read_users(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out, KeyProblem* p);
/// systemd unit names (`service_active`): at least one, none empty.
bool read_units(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out, KeyProblem* p);
/// A POSIX extended regex (regcomp(3), as grep -E and pgrep -f read it), at most kMaxRegex bytes.
bool read_regex(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p);
/// A string or an array of such regexes (`absent`).
bool read_regexes(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out, KeyProblem* p);
/// An absolute path naming a file, not "/" (write's `path`, copy's `dest`, kill's `pid_file`).
bool read_abs_path(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p);
/// A program on the host: a name without `/` (looked up on PATH) or an absolute path (`nvidia_smi`).
bool read_program(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p);
bool read_bool(std::string_view key, const Value& v, bool rendered, bool* out, KeyProblem* p);
/// `true`: a condition that is on when given (verify's `gpus_idle`).
bool read_true(std::string_view key, const Value& v, bool rendered, bool* out, KeyProblem* p);
/// An integer in util::int_range(key) (`max_memory_used`: MiB).
bool read_int(std::string_view key, const Value& v, bool rendered, long long* out, KeyProblem* p);
/// verify's `gpus`: "all" alone, or GPU indexes (digits) and UUIDs ("GPU-...", "MIG-..."), each once.
bool read_gpus(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out, KeyProblem* p);
/// A process ID in util::int_range("pid"), never 1 (init).
bool read_pid(std::string_view key, const Value& v, bool rendered, long long* out, KeyProblem* p);
/// An integer or an array of them, each in util::int_range(key), at least one
/// (`expect_exit`: exit codes; `port_free`, `port_open`: ports).
bool read_ints(std::string_view key, const Value& v, bool rendered, std::vector<int>* out, KeyProblem* p);
/// A duration such as "10s" (util::parse_duration).
bool read_duration(std::string_view key, const Value& v, bool rendered, util::Millis* out, KeyProblem* p);
/// A duration of at least 5 s (reboot's `reboot_timeout`: a host needs time to go down and come back).
bool read_reboot_timeout(std::string_view key, const Value& v, bool rendered, util::Millis* out, KeyProblem* p);
/// A duration from 1 s to 10 min (verify gpus_idle's `smi_timeout`: the bound on each nvidia-smi call).
bool read_smi_timeout(std::string_view key, const Value& v, bool rendered, util::Millis* out, KeyProblem* p);
/// A signal: "TERM", "SIGTERM", "term" or its number (util::signals()).
bool read_signal(std::string_view key, const Value& v, bool rendered, util::SignalSpec* out, KeyProblem* p);
/// A service `state`: started, stopped, restarted or reloaded.
bool read_state(std::string_view key, const Value& v, bool rendered, ServiceState* out, KeyProblem* p);
/// A service `scope`: system or user.
bool read_scope(std::string_view key, const Value& v, bool rendered, ServiceScope* out, KeyProblem* p);
/// A user name on the host (service `user`): letters, digits, `.`, `_`, `-`
/// (and a trailing `$`), not starting with `-`; or a numeric UID.
bool read_user_name(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p);
/// What the keys of one action say together that each alone cannot: a
/// service's `scope = "user"` without `user`, or `user` without it. The key at
/// fault goes to *key; false when they agree. The loader asks it of literal
/// keys, steps::resolve of rendered ones.
bool keys_disagree(const ActionKeys& keys, std::string* key, KeyProblem* p);
/// A file mode such as "0644" (util::mode_problem).
bool read_mode(std::string_view key, const Value& v, bool rendered, FileMode* out, KeyProblem* p);

/// Which reader a key has, for `ratchet schema` (json_schema.h writes each as
/// JSON Schema): rule_of<&read_word> is ValueRule::word, and so on; a reader
/// without one here gets `plain` (its FieldType alone).
enum class ValueRule {
  plain, text, content, word, texts, paths, abs_paths, names, users, units, regex, regexes, abs_path,
  boolean, true_only, integer, gpus, pid, ints, duration, reboot_timeout, smi_timeout, signal, state, mode,
  scope, user_name, program,
  count,          ///< `serial`, `max_fail`: hosts, or "N%" (loader.cc read_count)
  guard_path,     ///< `lock_path`: an absolute path (guards.h)
  path_or_false,  ///< `audit_log`: an absolute path, or false (guards.h)
  ident,          ///< `id`, `register`: [a-z0-9_]+ (schema_rules.cc)
  when_expr,      ///< `when`: NAME or `not NAME`
  choice,         ///< one of FieldSpec::values (`on_failure`, `strategy`)
  vars,           ///< a table of vars, none named as reserved_names()
  secrets,        ///< a table of sources, "env:NAME" or "file:PATH"
  address,        ///< an inventory host's `address` (inventory_loader.cc)
};
template <auto R>
inline constexpr ValueRule rule_of = ValueRule::plain;
template <> inline constexpr ValueRule rule_of<&read_text> = ValueRule::text;
template <> inline constexpr ValueRule rule_of<&read_content> = ValueRule::content;
template <> inline constexpr ValueRule rule_of<&read_word> = ValueRule::word;
template <> inline constexpr ValueRule rule_of<&read_texts> = ValueRule::texts;
template <> inline constexpr ValueRule rule_of<&read_paths> = ValueRule::paths;
template <> inline constexpr ValueRule rule_of<&read_names> = ValueRule::names;
template <> inline constexpr ValueRule rule_of<&read_users> = ValueRule::users;
template <> inline constexpr ValueRule rule_of<&read_units> = ValueRule::units;
template <> inline constexpr ValueRule rule_of<&read_regex> = ValueRule::regex;
template <> inline constexpr ValueRule rule_of<&read_regexes> = ValueRule::regexes;
template <> inline constexpr ValueRule rule_of<&read_abs_path> = ValueRule::abs_path;
template <> inline constexpr ValueRule rule_of<&read_abs_paths> = ValueRule::abs_paths;
template <> inline constexpr ValueRule rule_of<&read_bool> = ValueRule::boolean;
template <> inline constexpr ValueRule rule_of<&read_true> = ValueRule::true_only;
template <> inline constexpr ValueRule rule_of<&read_int> = ValueRule::integer;
template <> inline constexpr ValueRule rule_of<&read_gpus> = ValueRule::gpus;
template <> inline constexpr ValueRule rule_of<&read_pid> = ValueRule::pid;
template <> inline constexpr ValueRule rule_of<&read_ints> = ValueRule::ints;
template <> inline constexpr ValueRule rule_of<&read_duration> = ValueRule::duration;
template <> inline constexpr ValueRule rule_of<&read_reboot_timeout> = ValueRule::reboot_timeout;
template <> inline constexpr ValueRule rule_of<&read_smi_timeout> = ValueRule::smi_timeout;
template <> inline constexpr ValueRule rule_of<&read_signal> = ValueRule::signal;
template <> inline constexpr ValueRule rule_of<&read_state> = ValueRule::state;
template <> inline constexpr ValueRule rule_of<&read_mode> = ValueRule::mode;
template <> inline constexpr ValueRule rule_of<&read_scope> = ValueRule::scope;
template <> inline constexpr ValueRule rule_of<&read_user_name> = ValueRule::user_name;
template <> inline constexpr ValueRule rule_of<&read_program> = ValueRule::program;

/// The service states read_state takes, in order: started, stopped, restarted, reloaded.
const std::vector<ServiceState>& service_states();

/// Longest regex accepted (bytes).
inline constexpr size_t kMaxRegex = 4096;

/// "started", "stopped", "restarted", "reloaded".
std::string_view name(ServiceState s);

/// The service scopes read_scope takes, in order: system, user.
const std::vector<ServiceScope>& service_scopes();

/// "system", "user".
std::string_view name(ServiceScope s);

/// The pattern read_user_name holds a name to (also `ratchet schema`'s).
inline constexpr const char* kUserNamePattern = "^[A-Za-z0-9_.][A-Za-z0-9_.-]*[$]?$";

}  // namespace ratchet::playbook
