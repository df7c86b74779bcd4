#include "playbook/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "util/duration.h"

namespace ratchet::playbook {
namespace {

using T = FieldType;

bool has_template(const Value& v) {
  return v.is_string() && v.get_ref<const std::string&>().find("{{") != std::string::npos;
}

}  // namespace

const std::vector<KindSpec>& step_kinds() {
  static const std::vector<KindSpec> kinds = {
      {Kind::run,
       {{"command", T::string, true},
        {"check", T::string, true},
        {"creates", T::strings},
        {"unless", T::string, true},
        {"expect_exit", T::ints},
        {"stdin", T::string, false, true}},
       true},
      {Kind::service,
       {{"unit", T::string},
        {"state", T::string},
        {"enabled", T::boolean},
        {"unit_file", T::string},
        {"transition_wait", T::duration}},
       true},
      {Kind::kill,
       {{"pid", T::integer},
        {"pid_file", T::string},
        {"pattern", T::string},
        {"holders_of", T::strings},
        {"user", T::strings},
        {"exclude", T::strings},
        {"tree", T::boolean},
        {"signal", T::string},
        {"wait", T::duration},
        {"missing_ok", T::boolean}},
       true},
      {Kind::verify,
       {{"no_holders", T::strings},
        {"gpus_idle", T::boolean},
        {"gpus", T::strings},
        {"max_memory_used", T::integer},
        {"gpu_devices", T::strings},
        {"nvidia_smi", T::string},
        {"user", T::strings},
        {"exclude", T::strings},
        {"missing_ok", T::boolean},
        {"absent", T::strings},
        {"port_free", T::ints},
        {"port_open", T::ints},
        {"service_active", T::strings},
        {"file_exists", T::strings},
        {"command", T::string, true},
        {"stdout_matches", T::string}},
       false},
      {Kind::write,
       {{"path", T::string},
        {"content", T::string, false, true},
        {"template", T::string},
        {"mode", T::string},
        {"owner", T::string},
        {"group", T::string},
        {"backup", T::boolean}},
       false},
      {Kind::reboot,
       {{"command", T::string, true},
        {"test_command", T::string, true},
        {"reboot_timeout", T::duration}},
       false},
  };
  return kinds;
}

const KindSpec* find_kind(std::string_view name) {
  auto k = parse_kind(name);
  return k ? &kind_spec(*k) : nullptr;
}

const KindSpec& kind_spec(Kind k) {
  for (const auto& spec : step_kinds())
    if (spec.kind == k) return spec;
  throw std::logic_error("no spec for kind " + std::string(name(k)));  // step_kinds() lists every kind
}

const std::vector<FieldSpec>& common_step_fields() {
  static const std::vector<FieldSpec> f = {
      {"id", T::string},        {"name", T::string},       {"kind", T::string},
      {"timeout", T::duration}, {"settle", T::duration},   {"retries", T::integer},
      {"delay", T::duration},   {"become", T::boolean},    {"become_user", T::string},
      {"when", T::string},      {"on_failure", T::string}, {"register", T::string},
      {"escalate", T::tables},  {"capture", T::integer}};
  return f;
}

const std::vector<FieldSpec>& rung_fields() {
  static const std::vector<FieldSpec> f = {{"kind", T::string},     {"timeout", T::duration},
                                           {"settle", T::duration}, {"retries", T::integer},
                                           {"delay", T::duration},  {"wait", T::duration}};
  return f;
}

const std::vector<FieldSpec>& defaults_fields() {
  static const std::vector<FieldSpec> f = {{"timeout", T::duration},  {"settle", T::duration},
                                           {"retries", T::integer},   {"delay", T::duration},
                                           {"capture", T::integer},   {"become", T::boolean},
                                           {"become_user", T::string}};
  return f;
}

const FieldSpec* find_field(TableRole role, std::optional<Kind> kind, std::string_view key) {
  if (kind)
    for (const auto& f : kind_spec(*kind).fields)
      if (f.name == key) return &f;
  for (const auto& f : role == TableRole::step ? common_step_fields() : rung_fields())
    if (f.name == key) return &f;
  return nullptr;
}

const FieldSpec* find_field(TableRole role, std::string_view kind, std::string_view key) {
  return find_field(role, parse_kind(kind), key);
}

std::vector<std::string> allowed_keys(TableRole role, std::optional<Kind> kind) {
  std::vector<std::string> out;
  for (const auto& f : role == TableRole::step ? common_step_fields() : rung_fields())
    out.push_back(f.name);
  if (kind)
    for (const auto& f : kind_spec(*kind).fields)
      if (std::find(out.begin(), out.end(), f.name) == out.end()) out.push_back(f.name);
  return out;
}

std::vector<std::string> allowed_keys(TableRole role, std::string_view kind) {
  return allowed_keys(role, parse_kind(kind));
}

std::string type_name(FieldType t) {
  switch (t) {
    case T::string:
      return "a string";
    case T::boolean:
      return "a boolean";
    case T::integer:
      return "an integer";
    case T::duration:
      return "a duration such as \"10s\"";
    case T::strings:
      return "a string or an array of strings";
    case T::ints:
      return "an integer or an array of integers";
    case T::table:
      return "a table";
    case T::tables:
      return "an array of tables";
  }
  return "";
}

std::string value_type_name(const Value& v) {
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer()) return "an integer";
  if (v.is_number_float()) return "a float";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "a table";
  return "nothing";
}

std::string type_error(std::string_view key, const Value& v, FieldType type, bool templates_ok) {
  if (templates_ok && has_template(v) && type != T::table && type != T::tables) return "";
  auto all = [&](auto pred) { return std::all_of(v.begin(), v.end(), pred); };
  bool ok = false;
  switch (type) {
    case T::string:
      ok = v.is_string();
      break;
    case T::boolean:
      ok = v.is_boolean();
      break;
    case T::integer:
      ok = v.is_number_integer();
      break;
    case T::duration:
      if (v.is_string()) {
        std::string err;
        if (auto d = util::parse_duration(v.get<std::string>(), &err)) {
          // A zero timeout would mean no deadline at all: never what a runbook wants.
          if (key == "timeout" && d->count() == 0) return "`timeout` must be more than 0s";
          return "";
        }
        return fmt::format("`{}`: {}", key, err);
      }
      break;
    case T::strings:
      ok = v.is_string() || (v.is_array() && all([](const Value& e) { return e.is_string(); }));
      break;
    case T::ints:
      ok = v.is_number_integer() ||
           (v.is_array() && all([](const Value& e) { return e.is_number_integer(); }));
      break;
    case T::table:
      ok = v.is_object();
      break;
    case T::tables:
      ok = v.is_array() && all([](const Value& e) { return e.is_object(); });
      break;
  }
  if (ok) return "";
  if (key == "mode" && v.is_number_integer())
    return "`mode` must be a string such as \"0644\", not an integer";
  return fmt::format("`{}` must be {}, not {}", key, type_name(type), value_type_name(v));
}

}  // namespace ratchet::playbook
