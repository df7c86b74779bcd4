// The keys of a playbook's top level and of an inventory (schema.h): the loader
// reads by these tables, and `ratchet schema` writes them.
#include "playbook/schema.h"

namespace ratchet::playbook {

using T = FieldType;
using VR = ValueRule;

const std::vector<FieldSpec>& top_fields() {
  static const std::vector<FieldSpec> f = [] {
    std::vector<std::string> strategies;
    for (Strategy s : kStrategies) strategies.emplace_back(name(s));
    return std::vector<FieldSpec>{
        {"name", T::string},
        {"description", T::string},
        {"targets", T::strings},
        plain_field("strategy", T::string, VR::choice, strategies),
        plain_field("serial", T::integer, VR::count),
        plain_field("max_fail", T::integer, VR::count),
        plain_field("vars", T::table, VR::vars),
        {"defaults", T::table},
        plain_field("secrets", T::table, VR::secrets),
        {"inventory", T::table},
        {"step", T::tables},
        {"lock", T::boolean},
        plain_field("lock_path", T::string, VR::guard_path),
        plain_field("audit_log", T::string, VR::path_or_false),
    };
  }();
  return f;
}

const std::vector<FieldSpec>& include_entry_fields() {
  static const std::vector<FieldSpec> f = {plain_field("id", T::string, VR::ident),
                                           {"include", T::string},
                                           plain_field("vars", T::table, VR::vars),
                                           {"tags", T::strings}};
  return f;
}

const std::vector<FieldSpec>& piece_fields() {
  static const std::vector<FieldSpec> f = {plain_field("vars", T::table, VR::vars), {"step", T::tables}};
  return f;
}

const std::vector<FieldSpec>& inventory_fields() {
  static const std::vector<FieldSpec> f = {
      {"hosts", T::table}, {"groups", T::table}, {"group_vars", T::table}, {"defaults", T::table}};
  return f;
}

const std::vector<FieldSpec>& inventory_defaults_fields() {
  static const std::vector<FieldSpec> f = {{"sign", T::boolean}};
  return f;
}

const std::vector<FieldSpec>& host_fields() {
  static const std::vector<FieldSpec> f = {
      plain_field("address", T::string, VR::address),
      {"port", T::integer},
      {"user", T::string},
      {"identity", T::string},
      {"known_hosts", T::string},
      {"jump", T::string},
      {"become", T::boolean},
      {"become_user", T::string},
      {"vars", T::table},
      {"lock", T::boolean},
      plain_field("lock_path", T::string, VR::guard_path),
      plain_field("audit_log", T::string, VR::path_or_false),
  };
  return f;
}

const std::vector<std::string>& reserved_names() {
  static const std::vector<std::string> names = {"host", "run", "playbook", "ratchet", "steps"};
  return names;
}

}  // namespace ratchet::playbook
