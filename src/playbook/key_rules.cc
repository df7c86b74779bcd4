// The rule for each kind key's value (key_rules.h): literal and rendered alike.
#include "playbook/key_rules.h"

#include <fmt/format.h>
#include <regex.h>

#include <algorithm>
#include <cctype>

#include "playbook/schema.h"
#include "playbook/template.h"
#include "util/spell.h"

namespace ratchet::playbook {
namespace {

bool fail(KeyProblem* p, std::string message, std::string hint = "") {
  *p = {std::move(message), std::move(hint)};
  return false;
}

// The value does not have `type`: the loader's words for a literal, the value itself for a rendered one.
bool wrong_type(std::string_view key, const Value& v, FieldType type, bool rendered, KeyProblem* p) {
  if (!rendered) return fail(p, type_error(key, v, type, false));
  return fail(p, fmt::format("`{}` must be {}, got {}", key, type_name(type), util::toml_text(v)));
}

bool digits(const std::string& s) {
  return !s.empty() && s.size() <= 18 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// One string of a strings key: a string, or (rendered) an integer's digits.
bool one_text(const Value& v, bool rendered, std::string* out) {
  if (v.is_string()) *out = v.as_string();
  else if (rendered && v.is_int()) *out = std::to_string(v.as_int());
  else return false;
  return true;
}

// No byte of a value may be NUL: no command line, path or regex can hold one.
bool no_nul(std::string_view key, const std::string& s, KeyProblem* p) {
  return s.find('\0') == std::string::npos ||
         fail(p, fmt::format("`{}` holds a NUL byte (at byte {})", key, s.find('\0')), "no command, path or name can hold one");
}

bool blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

// One integer: an integer, or (rendered) a string of digits.
bool one_int(const Value& v, bool rendered, long long* out) {
  if (v.is_int()) *out = v.as_int();
  else if (rendered && v.is_string() && digits(v.as_string())) *out = std::stoll(v.as_string());
  else return false;
  return true;
}

bool regex_ok(std::string_view key, const std::string& re, KeyProblem* p) {
  if (re.size() > kMaxRegex)
    return fail(p, fmt::format("`{}`: a regex of {} bytes is too long (at most {})", key, re.size(), kMaxRegex));
  regex_t r;
  int rc = regcomp(&r, re.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char msg[256];
    regerror(rc, &r, msg, sizeof msg);
    return fail(p, fmt::format("`{}`: \"{}\" is not a valid extended regex ({})", key, re, msg));
  }
  regfree(&r);
  return true;
}

// The fix for a relative path: the host would expand it from the login's
// working directory (its home), which nobody means; a glob there matches
// nothing, and nothing matched must never read as "free".
std::string relative_fix(const std::string& s) {
  const char* why = "a relative path is expanded from the login's working directory on the host";
  if (s.rfind('~', 0) == 0) return fmt::format("write the full path from /: `~` is not expanded, and {}", why);
  std::string from_root = s;
  while (from_root.rfind("./", 0) == 0) from_root.erase(0, 2);
  if (from_root.empty() || from_root.rfind("..", 0) == 0) return fmt::format("write the full path from /: {}", why);
  return fmt::format("write the full path from /, such as \"/{}\": {}", from_root, why);
}

}  // namespace

std::string FileMode::bare() const {
  std::string m = octal;
  while (m.size() > 1 && m[0] == '0') m.erase(0, 1);
  return m;
}

std::string_view name(ServiceState s) {
  switch (s) {
    case ServiceState::started: return "started";
    case ServiceState::stopped: return "stopped";
    case ServiceState::restarted: return "restarted";
    case ServiceState::reloaded: return "reloaded";
  }
  return "";
}

const std::vector<ServiceState>& service_states() {
  static const std::vector<ServiceState> all = {ServiceState::started, ServiceState::stopped,
                                                ServiceState::restarted, ServiceState::reloaded};
  return all;
}

std::string_view name(ServiceScope s) {
  switch (s) {
    case ServiceScope::system: return "system";
    case ServiceScope::user: return "user";
  }
  return "";
}

const std::vector<ServiceScope>& service_scopes() {
  static const std::vector<ServiceScope> all = {ServiceScope::system, ServiceScope::user};
  return all;
}

bool read_text(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p) {
  if (!one_text(v, rendered, out)) return wrong_type(key, v, FieldType::string, rendered, p);
  return no_nul(key, *out, p);
}

bool read_content(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p) {
  if (!rendered) return read_text(key, v, rendered, out, p);
  *out = to_text(v);
  return true;
}

bool read_word(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p) {
  if (!read_text(key, v, rendered, out, p)) return false;
  if (out->empty()) return fail(p, fmt::format("`{}` is empty", key));
  return !blank(*out) || fail(p, fmt::format("`{}` is blank", key));
}

bool read_texts(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out,
                KeyProblem* p) {
  out->clear();
  for (const auto& e : v.as_list()) {
    std::string s;
    if (!one_text(e, rendered, &s)) return wrong_type(key, v, FieldType::strings, rendered, p);
    if (!no_nul(key, s, p)) return false;
    out->push_back(std::move(s));
  }
  return true;
}

bool read_paths(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out,
                KeyProblem* p) {
  if (!read_texts(key, v, rendered, out, p)) return false;
  if (out->empty()) return fail(p, fmt::format("`{}` names no path", key), "name at least one file or glob");
  for (const auto& s : *out)
    if (s.empty()) return fail(p, fmt::format("`{}` holds an empty path", key));
  return true;
}

bool read_abs_paths(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out,
                    KeyProblem* p) {
  if (!read_paths(key, v, rendered, out, p)) return false;
  for (const auto& s : *out)
    if (s[0] != '/') return fail(p, fmt::format("`{}` must hold absolute paths, got \"{}\"", key, s), relative_fix(s));
  return true;
}

bool read_names(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out,
                KeyProblem* p) {
  if (!read_texts(key, v, rendered, out, p)) return false;
  for (const auto& s : *out)
    if (s.empty() || blank(s))
      return fail(p, fmt::format("`{}` holds an empty name", key), "an empty name would select or spare nobody: leave it out");
  for (const auto& s : *out)
    if (s.find(',') != std::string::npos)
      return fail(p, fmt::format("`{}`: name \"{}\" contains a comma", key, s), "write each name as its own array item");
  return true;
}

bool read_users(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out,
                KeyProblem* p) {
  if (!read_names(key, v, rendered, out, p)) return false;
  // No user would be no filter: every user's processes. Refused, never widened.
  return !out->empty() || fail(p, fmt::format("`{}` names no user", key), "leave `user` out to select processes of any user");
}

bool read_units(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out, KeyProblem* p) {
  if (!read_texts(key, v, rendered, out, p)) return false;
  if (out->empty()) return fail(p, fmt::format("`{}` names no unit", key));
  for (const auto& s : *out)
    if (s.empty() || blank(s)) return fail(p, fmt::format("`{}` holds an empty unit name", key));
  return true;
}

bool read_regex(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p) {
  return read_word(key, v, rendered, out, p) && regex_ok(key, *out, p);
}

bool read_regexes(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out,
                  KeyProblem* p) {
  if (!read_texts(key, v, rendered, out, p)) return false;
  if (out->empty()) return fail(p, fmt::format("`{}` names no regex", key));
  for (const auto& re : *out) {
    if (re.empty()) return fail(p, fmt::format("`{}` holds an empty regex", key));
    if (!regex_ok(key, re, p)) return false;
  }
  return true;
}

bool read_program(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p) {
  if (!read_word(key, v, rendered, out, p)) return false;
  if (out->find_first_not_of('/') == std::string::npos) return fail(p, fmt::format("`{}` must name a program, not /", key));
  if (out->find('/') == std::string::npos || (*out)[0] == '/') return true;
  return fail(p, fmt::format("`{}` must be a program name (looked up on the login's PATH) or an absolute path, got \"{}\"",
                             key, *out),
              relative_fix(*out));
}

bool read_abs_path(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p) {
  if (!read_text(key, v, rendered, out, p)) return false;
  if (out->empty() || (*out)[0] != '/') return fail(p, fmt::format("`{}` must be absolute, got \"{}\"", key, *out), relative_fix(*out));
  if (out->find_first_not_of('/') == std::string::npos) return fail(p, fmt::format("`{}` must name a file, not /", key));
  return true;
}

bool read_bool(std::string_view key, const Value& v, bool rendered, bool* out, KeyProblem* p) {
  if (v.is_bool()) *out = v.as_bool();
  else if (rendered && v.is_string() && (v == "true" || v == "false")) *out = v == "true";
  else return wrong_type(key, v, FieldType::boolean, rendered, p);
  return true;
}

bool read_true(std::string_view key, const Value& v, bool rendered, bool* out, KeyProblem* p) {
  if (!read_bool(key, v, rendered, out, p)) return false;
  return *out || fail(p, fmt::format("`{}` must be true (leave it out for no GPU condition)", key));
}

bool read_int(std::string_view key, const Value& v, bool rendered, long long* out, KeyProblem* p) {
  if (!one_int(v, rendered, out)) return wrong_type(key, v, FieldType::integer, rendered, p);
  if (std::string why = util::range_problem(key, *out); !why.empty()) return fail(p, why);
  return true;
}

bool read_gpus(std::string_view key, const Value& v, bool rendered, std::vector<std::string>* out, KeyProblem* p) {
  if (!read_texts(key, v, rendered, out, p)) return false;
  // "all" alone; else each an index (digits) or a UUID as nvidia-smi prints it (GPU-..., MIG-...), once.
  auto gpu = [](const std::string& g) {
    bool index = !g.empty() && g.size() <= 4 && std::all_of(g.begin(), g.end(), [](unsigned char c) { return std::isdigit(c); });
    bool uuid = (g.rfind("GPU-", 0) == 0 || g.rfind("MIG-", 0) == 0) && g.size() > 4 &&
                std::all_of(g.begin() + 4, g.end(), [](unsigned char c) { return std::isxdigit(c) || c == '-' || c == '/'; });
    return index || uuid;
  };
  bool bad = out->empty();
  for (size_t i = 0; i < out->size(); ++i) {
    const std::string& g = (*out)[i];
    bad |= !(g == "all" && out->size() == 1) && !gpu(g);
    bad |= std::find(out->begin(), out->begin() + static_cast<long>(i), g) != out->begin() + static_cast<long>(i);
  }
  if (bad)
    return fail(p, fmt::format("`{}` must be \"all\" or a list of GPU indexes or UUIDs, such as [\"0\", \"3\"]", key));
  return true;
}

bool read_pid(std::string_view key, const Value& v, bool rendered, long long* out, KeyProblem* p) {
  if (!one_int(v, rendered, out)) return wrong_type(key, v, FieldType::integer, rendered, p);
  if (*out == 1) return fail(p, fmt::format("`{}` 1 is init: ratchet never signals it", key));
  if (std::string why = util::range_problem(key, *out); !why.empty()) return fail(p, why);
  return true;
}

bool read_ints(std::string_view key, const Value& v, bool rendered, std::vector<int>* out, KeyProblem* p) {
  out->clear();
  for (const auto& e : v.as_list()) {
    long long n = 0;
    if (!one_int(e, rendered, &n)) return wrong_type(key, v, FieldType::ints, rendered, p);
    if (std::string why = util::range_problem(key, n); !why.empty()) return fail(p, why);
    out->push_back(static_cast<int>(n));
  }
  if (out->empty()) return fail(p, fmt::format("`{}` is an empty array", key), "give at least one number");
  return true;
}

bool read_duration(std::string_view key, const Value& v, bool rendered, util::Millis* out, KeyProblem* p) {
  if (!v.is_string()) return wrong_type(key, v, FieldType::duration, rendered, p);
  std::string why;
  auto d = util::parse_duration(v.as_string(), &why);
  if (!d) return fail(p, fmt::format("`{}`: {}", key, why));
  *out = *d;
  return true;
}

bool read_reboot_timeout(std::string_view key, const Value& v, bool rendered, util::Millis* out, KeyProblem* p) {
  if (!read_duration(key, v, rendered, out, p)) return false;
  if (*out < util::Millis(5'000))
    return fail(p, fmt::format("`{}` must be at least 5s", key), "a host needs time to go down and come back");
  return true;
}

bool read_smi_timeout(std::string_view key, const Value& v, bool rendered, util::Millis* out, KeyProblem* p) {
  if (!read_duration(key, v, rendered, out, p)) return false;
  if (*out < util::Millis(1'000) || *out > util::Millis(600'000))
    return fail(p, fmt::format("`{}` must be from 1s to 10m", key),
                "the bound on each nvidia-smi call: a healthy driver answers in well under a second");
  return true;
}

bool read_signal(std::string_view key, const Value& v, bool rendered, util::SignalSpec* out, KeyProblem* p) {
  std::string s;
  if (!rendered && v.is_int()) {  // signal = 9: a TOML integer, where the signal is a string
    std::string named;
    for (const auto& sig : util::signals())
      if (sig.number == v.as_int()) named = sig.name;
    wrong_type(key, v, FieldType::string, rendered, p);
    p->hint = named.empty() ? fmt::format("write a signal as a string: \"TERM\", \"KILL\" or its number in quotes")
                            : fmt::format("write signal = \"{}\" or \"{}\"", v.as_int(), named);
    return false;
  }
  if (!one_text(v, rendered, &s)) return wrong_type(key, v, FieldType::string, rendered, p);
  if (s.empty() || s == "SIG" || s == "sig") return fail(p, fmt::format("`{}` is empty", key), "write a signal such as \"TERM\" or \"KILL\"");
  std::string n = util::signal_name(s);
  for (const auto& sig : util::signals())
    if (sig.name == n) {
      *out = sig;
      return true;
    }
  std::string up = s;
  for (auto& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (up.rfind("SIG", 0) == 0) up.erase(0, 3);
  // A word gets its nearest name; a number, or a word near none, the list.
  const bool numeric = !up.empty() && std::all_of(up.begin(), up.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  std::string near = numeric ? "" : util::nearest(up, util::signal_names());
  return fail(p, fmt::format("unknown signal `{}`", s),
              near.empty() ? fmt::format("signals: {}, or their numbers", fmt::join(util::signal_names(), " "))
                           : fmt::format("did you mean `{}`?", near));
}

bool read_state(std::string_view key, const Value& v, bool rendered, ServiceState* out, KeyProblem* p) {
  std::string s;
  if (!read_text(key, v, rendered, &s, p)) return false;
  std::vector<std::string> names;
  for (auto st : service_states()) {
    if (s == name(st)) {
      *out = st;
      return true;
    }
    names.emplace_back(name(st));
  }
  std::string near = util::nearest(s, names);
  return fail(p, fmt::format("`{}` must be `started`, `stopped`, `restarted` or `reloaded`, not `{}`", key, s),
              near.empty() ? "" : fmt::format("did you mean `{}`?", near));
}

bool read_scope(std::string_view key, const Value& v, bool rendered, ServiceScope* out, KeyProblem* p) {
  std::string s;
  if (!read_text(key, v, rendered, &s, p)) return false;
  std::vector<std::string> names;
  for (auto sc : service_scopes()) {
    if (s == name(sc)) {
      *out = sc;
      return true;
    }
    names.emplace_back(name(sc));
  }
  std::string near = util::nearest(s, names);
  return fail(p, fmt::format("`{}` must be `system` or `user`, not `{}`", key, s),
              near.empty() ? "`user` reaches a user's own systemd manager (systemctl --user)"
                           : fmt::format("did you mean `{}`?", near));
}

bool read_user_name(std::string_view key, const Value& v, bool rendered, std::string* out, KeyProblem* p) {
  if (!read_word(key, v, rendered, out, p)) return false;
  // kUserNamePattern, without a regex: it reaches the host as an argument of id(1) and setpriv(1).
  const std::string& s = *out;
  auto ok = [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '.' || c == '-'; };
  size_t n = s.size() - (s.back() == '$' ? 1 : 0);
  bool good = n > 0 && s[0] != '-' && s.size() <= 256;
  for (size_t i = 0; good && i < n; ++i) good = ok(static_cast<unsigned char>(s[i])) && static_cast<unsigned char>(s[i]) < 0x80;
  return good || fail(p, fmt::format("`{}`: \"{}\" is not a user name", key, s),
                      "a user name holds letters, digits, `.`, `_` and `-` and does not start with `-`");
}

bool keys_disagree(const ActionKeys& keys, std::string* key, KeyProblem* p) {
  const auto* s = std::get_if<ServiceAction>(&keys);
  if (!s) return false;
  // unit_file is installed under its own file name: that is the unit systemd
  // then runs, so it must be `unit` ("inference" is "inference.service").
  if (s->unit.given && s->unit.value && s->unit_file.given && s->unit_file.value) {
    std::string unit = *s->unit, file = *s->unit_file;
    if (unit.find('.') == std::string::npos) unit += ".service";
    if (auto slash = file.rfind('/'); slash != std::string::npos) file.erase(0, slash + 1);
    if (file != unit) {
      *key = "unit_file";
      return !fail(p, fmt::format("`unit_file` is installed as {} (its file name), but the step's `unit` is {}", file, unit),
                   fmt::format("rename the file to {}, or set unit = \"{}\"", unit, file));
    }
  }
  // A key still a template, or refused by its own rule, is judged once it has a value.
  if ((s->scope.given && !s->scope.value) || (s->user.given && !s->user.value)) return false;
  const bool user_scope = s->scope.given && *s->scope == ServiceScope::user;
  if (user_scope && !s->user.given) {
    *key = "scope";
    return !fail(p, "`scope = \"user\"` needs `user`: the user whose own systemd manager runs the unit",
                 "add user = \"NAME\", whose systemctl --user runs the unit");
  }
  if (s->user.given && !user_scope) {
    *key = "user";
    return !fail(p, fmt::format("`user` goes with scope = \"user\"; this step's scope is `{}`",
                                s->scope.given ? name(*s->scope) : "system"),
                 fmt::format("add scope = \"user\" to reach {}'s own systemd manager, or leave `user` out for a system unit",
                             *s->user));
  }
  return false;
}

bool read_mode(std::string_view key, const Value& v, bool rendered, FileMode* out, KeyProblem* p) {
  std::string m;
  if (!read_text(key, v, rendered, &m, p)) return false;
  if (std::string why = util::mode_problem(m); !why.empty())
    return fail(p, fmt::format("`{}` {}, not \"{}\"", key, why, m));
  out->octal = m;
  return true;
}

}  // namespace ratchet::playbook
