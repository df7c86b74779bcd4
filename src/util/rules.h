#pragma once
// The value rules that the playbook loader and the command builders share, in
// one place: signal names, file modes, and the range of every integer key. The
// loader checks literal values with them (file:line:col); the builders check
// the same rules again on values that templates filled in. A value cannot pass
// one and fail the other.
#include <string>
#include <string_view>
#include <vector>

namespace ratchet::util {

/// One signal `kill` may send: its name without "SIG" and its Linux number.
struct SignalSpec {
  const char* name;
  int number;
};

/// Every signal a `kill` step or rung may send, the common ones first (a
/// "did you mean" prefers earlier names on a tie).
const std::vector<SignalSpec>& signals();

/// The names of signals(), in that order.
std::vector<std::string> signal_names();

/// Normalises a signal: "TERM", "term", "SIGTERM", "15" -> "TERM"; "" when
/// it is none of signals().
std::string signal_name(std::string_view s);

/// Why `mode` is not a file mode ("" = it is one): 1 to 4 octal digits, such as
/// "0644", "644", "4755" or "0600" (what chmod(1) takes as an octal mode).
std::string mode_problem(std::string_view mode);

/// The values an integer key may take.
struct IntRange {
  const char* key;
  long long min;
  long long max;
  const char* what;  ///< the unit, for messages: "bytes", "hosts", ... ("" = none)
};

/// The range of every integer key of playbooks, inventories and the command
/// line: retries, capture, pid, expect_exit, port, port_free, port_open,
/// max_memory_used, max_size, serial, max_fail, forks.
const std::vector<IntRange>& int_ranges();

/// The range of `key`, or nullptr when the key has none.
const IntRange* int_range(std::string_view key);

/// "" when `value` fits the range of `key` (or the key has none), else the
/// reason: "`retries` 4294967297 is outside 0..1000000".
std::string range_problem(std::string_view key, long long value);

}  // namespace ratchet::util
