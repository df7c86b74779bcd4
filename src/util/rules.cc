#include "util/rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace ratchet::util {

const std::vector<SignalSpec>& signals() {
  // Linux numbers (x86, arm, riscv); the host library sends the name (kill -s).
  static const std::vector<SignalSpec> s = {
      {"TERM", 15}, {"KILL", 9},   {"HUP", 1},     {"INT", 2},    {"QUIT", 3},  {"USR1", 10},
      {"USR2", 12}, {"STOP", 19},  {"CONT", 18},   {"ALRM", 14},  {"ABRT", 6},  {"PIPE", 13},
      {"SEGV", 11}, {"ILL", 4},    {"TRAP", 5},    {"BUS", 7},    {"FPE", 8},   {"TSTP", 20},
      {"TTIN", 21}, {"TTOU", 22},  {"URG", 23},    {"XCPU", 24},  {"XFSZ", 25}, {"PROF", 27},
      {"WINCH", 28}, {"IO", 29},   {"PWR", 30},    {"SYS", 31},   {"VTALRM", 26}};
  return s;
}

std::vector<std::string> signal_names() {
  std::vector<std::string> out;
  for (const auto& s : signals()) out.push_back(s.name);
  return out;
}

std::string signal_name(std::string_view s) {
  std::string u;
  for (char c : s) u += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (u.rfind("SIG", 0) == 0) u.erase(0, 3);
  for (const auto& sig : signals())
    if (u == sig.name || u == std::to_string(sig.number)) return sig.name;
  return "";
}

std::string mode_problem(std::string_view mode) {
  bool ok = !mode.empty() && mode.size() <= 4 &&
            std::all_of(mode.begin(), mode.end(), [](char c) { return c >= '0' && c <= '7'; });
  return ok ? "" : "must be 1 to 4 octal digits such as \"0644\"";
}

const std::vector<IntRange>& int_ranges() {
  static const std::vector<IntRange> r = {
      {"retries", 0, 1'000'000, ""},
      {"capture", 1, 1LL << 30, "bytes"},       // kept in memory per stream and command
      {"pid", 1, 4'194'304, ""},                 // Linux's largest pid_max
      {"expect_exit", 0, 255, ""},
      {"port", 1, 65535, ""},
      {"port_free", 1, 65535, ""},
      {"port_open", 1, 65535, ""},
      {"max_memory_used", 0, 1LL << 24, "MiB"},  // verify gpus_idle: 16 TiB
      {"max_size", 1, 1LL << 40, "bytes"},       // fetch: per file
      {"serial", 1, 1'000'000, "hosts"},
      {"max_fail", 0, 1'000'000, "hosts"},
      {"forks", 1, 1000, "hosts at once"},
  };
  return r;
}

const IntRange* int_range(std::string_view key) {
  for (const auto& r : int_ranges())
    if (key == r.key) return &r;
  return nullptr;
}

std::string range_problem(std::string_view key, long long value) {
  const IntRange* r = int_range(key);
  if (!r || (value >= r->min && value <= r->max)) return "";
  return fmt::format("`{}` {} is outside {}..{}{}{}", key, value, r->min, r->max, *r->what ? " " : "",
                     r->what);
}

}  // namespace ratchet::util
