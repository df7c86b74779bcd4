#include <fmt/format.h>

#include <regex.h>

#include <algorithm>
#include <cctype>

#include "steps/kinds.h"
#include "util/rules.h"

namespace ratchet::steps {

bool field_string(const Json& f, const char* key, std::string* out, std::string* err) {
  if (!f.contains(key)) return true;
  const Json& v = f[key];
  if (v.is_string()) *out = v.get<std::string>();
  else if (v.is_number_integer()) *out = std::to_string(v.get<long long>());
  else {
    *err = fmt::format("`{}` must be a string, got {}", key, v.dump());
    return false;
  }
  return true;
}

bool field_strings(const Json& f, const char* key, std::vector<std::string>* out,
                   std::string* err) {
  if (!f.contains(key)) return true;
  const Json& v = f[key];
  auto one = [&](const Json& x) {
    if (x.is_string()) out->push_back(x.get<std::string>());
    else if (x.is_number_integer()) out->push_back(std::to_string(x.get<long long>()));
    else {
      *err = fmt::format("`{}` must be a string or an array of strings, got {}", key, v.dump());
      return false;
    }
    return true;
  };
  if (v.is_array()) {
    for (const auto& x : v)
      if (!one(x)) return false;
    return true;
  }
  return one(v);
}

bool field_bool(const Json& f, const char* key, bool* out, std::string* err) {
  if (!f.contains(key)) return true;
  const Json& v = f[key];
  if (v.is_boolean()) *out = v.get<bool>();
  else if (v.is_string() && (v == "true" || v == "false")) *out = v == "true";
  else {
    *err = fmt::format("`{}` must be true or false, got {}", key, v.dump());
    return false;
  }
  return true;
}

bool field_int(const Json& f, const char* key, long long* out, std::string* err) {
  if (!f.contains(key)) return true;
  const Json& v = f[key];
  long long n = 0;
  bool ok = false;
  if (v.is_number_integer()) {
    n = v.get<long long>();
    ok = true;
  } else if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (!s.empty() && s.size() <= 18 &&
        std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); })) {
      n = std::stoll(s);
      ok = true;
    }
  }
  if (!ok) {
    *err = fmt::format("`{}` must be an integer, got {}", key, v.dump());
    return false;
  }
  // The loader's range for this key (util/rules.h), for values a template filled in.
  if (std::string why = util::range_problem(key, n); !why.empty()) {
    *err = why;
    return false;
  }
  *out = n;
  return true;
}

bool field_duration(const Json& f, const char* key, util::Millis* out, std::string* err) {
  if (!f.contains(key)) return true;
  const Json& v = f[key];
  if (!v.is_string()) {
    *err = fmt::format("`{}` must be a duration such as \"5s\", got {}", key, v.dump());
    return false;
  }
  std::string why;
  auto d = util::parse_duration(v.get<std::string>(), &why);
  if (!d) {
    *err = fmt::format("`{}`: {}", key, why);
    return false;
  }
  *out = *d;
  return true;
}

bool check_regex(const char* key, const std::string& re, std::string* err) {
  if (re.size() > kMaxRegex) {
    *err = fmt::format("`{}`: a regex of {} bytes is too long (at most {})", key, re.size(), kMaxRegex);
    return false;
  }
  regex_t r;
  int rc = regcomp(&r, re.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char msg[256];
    regerror(rc, &r, msg, sizeof msg);
    *err = fmt::format("`{}`: \"{}\" is not a valid extended regex ({})", key, re, msg);
    return false;
  }
  regfree(&r);
  return true;
}

// The loader's table (util/rules.h): a signal passes both or neither.
std::string signal_name(const std::string& s) { return util::signal_name(s); }

Command check_command(std::string text, util::Millis timeout, Judge judge, Json expect) {
  Command c;
  c.role = Role::check;
  c.text = std::move(text);
  c.timeout = timeout;
  c.judge = judge;
  c.expect = std::move(expect);
  return c;
}

Command action_command(std::string text, util::Millis timeout, std::string input) {
  Command c;
  c.role = Role::action;
  c.text = std::move(text);
  c.stdin_data = std::move(input);
  c.timeout = timeout;
  c.judge = Judge::exit;
  c.expect = Json::array({0});
  return c;
}

bool build_rung(playbook::Kind kind, const Json& f, const BuildContext& ctx, Rung* out,
                std::string* err) {
  out->kind = kind;
  switch (kind) {  // no default: a kind added to the enum must have a builder here
    case playbook::Kind::run: return build_run(f, ctx, out, err);
    case playbook::Kind::service: return build_service(f, ctx, out, err);
    case playbook::Kind::kill: return build_kill(f, ctx, out, err);
    case playbook::Kind::verify: return build_verify(f, ctx, out, err);
    case playbook::Kind::write: return build_write(f, ctx, out, err);
    case playbook::Kind::reboot: return build_reboot(f, ctx, out, err);
  }
  *err = "unknown kind";  // not reached
  return false;
}

}  // namespace ratchet::steps
