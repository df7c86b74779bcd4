#pragma once
// One builder per step kind: rendered fields in, commands out (docs/playbook.md's
// "Kinds"). Pure: no I/O beyond what BuildContext hands in.
#include <string>

#include "steps/action.h"

namespace ratchet::steps {

/// What a builder needs besides the step's rendered fields.
struct BuildContext {
  util::Millis timeout{60'000};  ///< the step's per-command timeout
  std::string unit_file_content;  ///< service: bytes of the local unit_file ("" = none)
  std::string write_content;      ///< write: rendered content or template
};

/// Each builder fills `out` (check for rung 0, action) or returns false with *err
/// naming the field ("kill: `signal` must be a signal name, got \"TREM\"").
bool build_run(const Json& f, const BuildContext& ctx, Rung* out, std::string* err);
bool build_service(const Json& f, const BuildContext& ctx, Rung* out, std::string* err);
bool build_kill(const Json& f, const BuildContext& ctx, Rung* out, std::string* err);
bool build_verify(const Json& f, const BuildContext& ctx, Rung* out, std::string* err);
bool build_write(const Json& f, const BuildContext& ctx, Rung* out, std::string* err);
bool build_reboot(const Json& f, const BuildContext& ctx, Rung* out, std::string* err);

/// A check command judged by `judge` against `expect`.
Command check_command(std::string text, util::Millis timeout, Judge judge, Json expect = nullptr);

/// An action command that succeeds on exit 0, with `input` on stdin.
Command action_command(std::string text, util::Millis timeout, std::string input = "");

/// Dispatches on `kind` to its builder (and sets out->kind); false with *err as
/// that builder says.
bool build_rung(playbook::Kind kind, const Json& f, const BuildContext& ctx, Rung* out,
                std::string* err);

// Field readers shared by the builders: each returns false and sets *err when
// the value has the wrong type.
bool field_string(const Json& f, const char* key, std::string* out, std::string* err);
bool field_strings(const Json& f, const char* key, std::vector<std::string>* out, std::string* err);
bool field_bool(const Json& f, const char* key, bool* out, std::string* err);
bool field_int(const Json& f, const char* key, long long* out, std::string* err);
bool field_duration(const Json& f, const char* key, util::Millis* out, std::string* err);

/// Longest regex accepted (bytes).
inline constexpr size_t kMaxRegex = 4096;

/// False with *err when `re` is not a POSIX extended regex (regcomp(3), as
/// grep -E and pgrep -f read it) or is longer than kMaxRegex.
bool check_regex(const char* key, const std::string& re, std::string* err);

/// Normalises a signal name ("SIGTERM", "term", "15" → "TERM"); "" if unknown.
std::string signal_name(const std::string& s);

}  // namespace ratchet::steps
