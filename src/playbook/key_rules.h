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
/// As read_paths, each absolute (fetch's `src`: paths or globs on the host).
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
/// An absolute path naming a file, not "/" (write's `path`, kill's `pid_file`).
bool read_abs_path(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p);
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
/// A signal: "TERM", "SIGTERM", "term" or its number (util::signals()).
bool read_signal(std::string_view key, const Value& v, bool rendered, util::SignalSpec* out, KeyProblem* p);
/// A service `state`: started, stopped, restarted or reloaded.
bool read_state(std::string_view key, const Value& v, bool rendered, ServiceState* out, KeyProblem* p);
/// A file mode such as "0644" (util::mode_problem).
bool read_mode(std::string_view key, const Value& v, bool rendered, FileMode* out, KeyProblem* p);

/// Longest regex accepted (bytes).
inline constexpr size_t kMaxRegex = 4096;

/// "started", "stopped", "restarted", "reloaded".
std::string_view name(ServiceState s);

}  // namespace ratchet::playbook
