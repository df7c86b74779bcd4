#include "playbook/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "util/duration.h"

namespace ratchet::playbook {
namespace {

using T = FieldType;

template <class M>
struct member;
template <class C, class F>
struct member<F C::*> {
  using owner = C;
  using field = F;
};

// The Field that member pointer M names, in the keys of its kind.
template <auto M>
FieldBase& field_at(ActionKeys& keys) {
  return std::get<typename member<decltype(M)>::owner>(keys).*M;
}

// Reads a value by rule R into the Field that M names.
template <auto M, auto R>
bool read_into(std::string_view key, const Value& v, bool rendered, ActionKeys& keys, KeyProblem* p) {
  auto& f = std::get<typename member<decltype(M)>::owner>(keys).*M;
  typename member<decltype(M)>::field::type out{};
  if (!R(key, v, rendered, &out, p)) return false;
  f.value = std::move(out);
  return true;
}

// A kind key: its name, type, member and rule.
template <auto M, auto R>
FieldSpec key(const char* name, FieldType type, bool shell = false, bool secret_ok = false) {
  return {name, type, shell, secret_ok, &read_into<M, R>, &field_at<M>, rule_of<R>};
}

}  // namespace

bool has_template(const Value& v) {
  if (v.is_string()) return v.as_string().find("{{") != std::string::npos;
  if (v.is_array()) return std::any_of(v.as_array().begin(), v.as_array().end(), [](const Value& e) { return has_template(e); });
  return false;
}

ActionKeys keys_of(Kind k) {
  switch (k) {  // no default: a kind added to the enum must get its keys here
    case Kind::run: return RunAction{};
    case Kind::service: return ServiceAction{};
    case Kind::kill: return KillAction{};
    case Kind::verify: return VerifyAction{};
    case Kind::write: return WriteAction{};
    case Kind::copy: return CopyAction{};
    case Kind::fetch: return FetchAction{};
    case Kind::reboot: return RebootAction{};
  }
  return RunAction{};
}

const std::vector<KindSpec>& step_kinds() {
  using R = RunAction;
  using S = ServiceAction;
  using K = KillAction;
  using V = VerifyAction;
  using W = WriteAction;
  using B = RebootAction;
  using C = CopyAction;
  using F = FetchAction;
  static const std::vector<KindSpec> kinds = {
      {Kind::run,
       {key<&R::command, read_word>("command", T::string, true),
        key<&R::check, read_word>("check", T::string, true),
        key<&R::creates, read_abs_paths>("creates", T::strings),
        key<&R::unless, read_word>("unless", T::string, true),
        key<&R::expect_exit, read_ints>("expect_exit", T::ints),
        key<&R::stdin_data, read_text>("stdin", T::string, false, true)},
       true},
      {Kind::service,
       {key<&S::unit, read_word>("unit", T::string),
        key<&S::state, read_state>("state", T::string),
        key<&S::enabled, read_bool>("enabled", T::boolean),
        key<&S::unit_file, read_word>("unit_file", T::string),
        key<&S::transition_wait, read_duration>("transition_wait", T::duration),
        key<&S::scope, read_scope>("scope", T::string),
        key<&S::user, read_user_name>("user", T::string)},
       true},
      {Kind::kill,
       {key<&K::pid, read_pid>("pid", T::integer),
        key<&K::pid_file, read_abs_path>("pid_file", T::string),
        key<&K::pattern, read_regex>("pattern", T::string),
        key<&K::holders_of, read_abs_paths>("holders_of", T::strings),
        key<&K::user, read_users>("user", T::strings),
        key<&K::exclude, read_names>("exclude", T::strings),
        key<&K::tree, read_bool>("tree", T::boolean),
        key<&K::signal, read_signal>("signal", T::string),
        key<&K::wait, read_duration>("wait", T::duration),
        key<&K::missing_ok, read_bool>("missing_ok", T::boolean)},
       true},
      {Kind::verify,
       {key<&V::no_holders, read_abs_paths>("no_holders", T::strings),
        key<&V::gpus_idle, read_true>("gpus_idle", T::boolean),
        key<&V::gpus, read_gpus>("gpus", T::strings),
        key<&V::max_memory_used, read_int>("max_memory_used", T::integer),
        key<&V::gpu_devices, read_abs_paths>("gpu_devices", T::strings),
        key<&V::nvidia_smi, read_program>("nvidia_smi", T::string),
        key<&V::smi_timeout, read_smi_timeout>("smi_timeout", T::duration),
        key<&V::user, read_users>("user", T::strings),
        key<&V::exclude, read_names>("exclude", T::strings),
        key<&V::missing_ok, read_bool>("missing_ok", T::boolean),
        key<&V::absent, read_regexes>("absent", T::strings),
        key<&V::port_free, read_ints>("port_free", T::ints),
        key<&V::port_open, read_ints>("port_open", T::ints),
        key<&V::service_active, read_units>("service_active", T::strings),
        key<&V::file_exists, read_abs_paths>("file_exists", T::strings),
        key<&V::command, read_word>("command", T::string, true),
        key<&V::stdout_matches, read_regex>("stdout_matches", T::string)},
       false},
      {Kind::write,
       {key<&W::path, read_abs_path>("path", T::string),
        key<&W::content, read_content>("content", T::string, false, true),
        key<&W::template_file, read_word>("template", T::string),
        key<&W::mode, read_mode>("mode", T::string),
        key<&W::owner, read_word>("owner", T::string),
        key<&W::group, read_word>("group", T::string),
        key<&W::backup, read_bool>("backup", T::boolean)},
       false},
      {Kind::copy,
       {key<&C::src, read_word>("src", T::string),
        key<&C::dest, read_abs_path>("dest", T::string),
        key<&C::mode, read_mode>("mode", T::string),
        key<&C::owner, read_word>("owner", T::string),
        key<&C::group, read_word>("group", T::string),
        key<&C::exclude, read_texts>("exclude", T::strings),
        key<&C::follow, read_bool>("follow", T::boolean)},
       false},
      {Kind::fetch,
       {key<&F::src, read_abs_paths>("src", T::strings),
        key<&F::max_size, read_int>("max_size", T::integer),
        key<&F::missing_ok, read_bool>("missing_ok", T::boolean)},
       false},
      {Kind::reboot,
       {key<&B::command, read_word>("command", T::string, true),
        key<&B::test_command, read_word>("test_command", T::string, true),
        key<&B::reboot_timeout, read_reboot_timeout>("reboot_timeout", T::duration)},
       false},
  };
  return kinds;
}

void each_key(const Action& a, const std::function<void(const FieldSpec&, const FieldBase&)>& fn) {
  if (!a.kind || keys_of(*a.kind).index() != a.keys.index()) return;  // keys of no kind (a load that failed)
  auto& keys = const_cast<ActionKeys&>(a.keys);  // the accessor only finds the member
  for (const auto& f : kind_spec(*a.kind).fields)
    if (const FieldBase& b = f.field(keys); b.given) fn(f, b);
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

FieldSpec plain_field(std::string name, FieldType type, ValueRule rule, std::vector<std::string> values) {
  FieldSpec f{std::move(name), type};
  f.rule = rule;
  f.values = std::move(values);
  return f;
}

const std::vector<FieldSpec>& common_step_fields() {
  using VR = ValueRule;
  static const std::vector<FieldSpec> f = {
      plain_field("id", T::string, VR::ident),         {"name", T::string},
      {"kind", T::string},                        {"timeout", T::duration},
      {"settle", T::duration},                    {"retries", T::integer},
      {"delay", T::duration},                     {"become", T::boolean},
      {"become_user", T::string},                 plain_field("when", T::string, VR::when_expr),
      plain_field("on_failure", T::string, VR::choice, {"stop", "continue"}),
      plain_field("register", T::string, VR::ident),   {"escalate", T::tables},
      {"capture", T::integer},                    {"probe", T::boolean},
      {"tags", T::strings}};
  return f;
}

const std::vector<FieldSpec>& rung_fields() {
  static const std::vector<FieldSpec> f = {{"kind", T::string},     {"timeout", T::duration},
                                           {"settle", T::duration}, {"retries", T::integer},
                                           {"delay", T::duration}};
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
  if (v.is_bool()) return "a boolean";
  if (v.is_int()) return "an integer";
  if (v.is_float()) return "a float";
  if (v.is_array()) return "an array";
  if (v.is_table()) return "a table";
  return "nothing";
}

std::string type_error(std::string_view key, const Value& v, FieldType type, bool templates_ok) {
  if (templates_ok && has_template(v) && type != T::table && type != T::tables) return "";
  auto all = [&](auto pred) { return v.is_array() && std::all_of(v.as_array().begin(), v.as_array().end(), pred); };
  bool ok = false;
  switch (type) {
    case T::string:
      ok = v.is_string();
      break;
    case T::boolean:
      ok = v.is_bool();
      break;
    case T::integer:
      ok = v.is_int();
      break;
    case T::duration:
      if (v.is_string()) {
        std::string err;
        if (auto d = util::parse_duration(v.as_string(), &err)) {
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
      ok = v.is_int() ||
           (v.is_array() && all([](const Value& e) { return e.is_int(); }));
      break;
    case T::table:
      ok = v.is_table();
      break;
    case T::tables:
      ok = v.is_array() && all([](const Value& e) { return e.is_table(); });
      break;
  }
  if (ok) return "";
  if (key == "mode" && v.is_int())
    return "`mode` must be a string such as \"0644\", not an integer";
  return fmt::format("`{}` must be {}, not {}", key, type_name(type), value_type_name(v));
}

}  // namespace ratchet::playbook
