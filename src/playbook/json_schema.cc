// The JSON Schema of playbooks and inventories, from the loader's tables (json_schema.h).
#include "playbook/json_schema.h"

#include <fmt/format.h>

#include <cctype>

#include "playbook/schema.h"
#include "util/rules.h"

namespace ratchet::playbook {
namespace {

using json = nlohmann::json;
using T = FieldType;
using VR = ValueRule;

// What util::parse_duration reads: numbers each with a unit, "1m30s".
constexpr const char* kDuration = "^([0-9]+(ms|s|m|h))+$";
constexpr const char* kNotBlank = "[^ \\t\\n\\r]";  // read_word: not empty, not blank
constexpr const char* kAbsPath = "^/[\\s\\S]*[^/]";  // read_abs_path: from /, naming a file
// guards.cc path_problem: absolute, printable, not ending with / (but "/").
constexpr const char* kGuardPath = "^/([^\\x00-\\x1f\\x7f]*[^\\x00-\\x1f\\x7f/])?$";

json ref(const std::string& def) { return {{"$ref", "#/definitions/" + def}}; }

json str(const char* pattern = nullptr) {
  json j = {{"type", "string"}};
  if (pattern) j["pattern"] = pattern;
  return j;
}

// An integer in util::int_range(key), when the key has one.
json integer(const std::string& key) {
  json j = {{"type", "integer"}};
  if (const util::IntRange* r = util::int_range(key)) {
    j["minimum"] = r->min;
    j["maximum"] = r->max;
  }
  return j;
}

// Each letter either case: "[Tt][Ee][Rr][Mm]".
std::string any_case(std::string_view word) {
  std::string out;
  for (char c : word)
    if (std::isalpha(static_cast<unsigned char>(c)))
      out += fmt::format("[{}{}]", static_cast<char>(std::toupper(c)), static_cast<char>(std::tolower(c)));
    else
      out += c;
  return out;
}

// util::signal_name: a name or number of util::signals(), any case, "SIG" optional.
std::string signal_pattern() {
  std::string alt;
  for (const auto& s : util::signals())
    alt += (alt.empty() ? "" : "|") + any_case(s.name) + "|" + std::to_string(s.number);
  return "^(" + any_case("sig") + ")?(" + alt + ")$";
}

// One value (an item of an array-valued key): the type's JSON type and the rule's bounds.
json item(const FieldSpec& f) {
  json j;
  switch (f.type) {
    case T::string: case T::strings: j = str(); break;
    case T::boolean: j = {{"type", "boolean"}}; break;
    case T::integer: case T::ints: j = integer(f.name); break;
    case T::duration: j = str(kDuration); break;
    case T::table: j = {{"type", "object"}}; break;
    case T::tables: j = {{"type", "object"}}; break;
  }
  switch (f.rule) {
    case VR::word: case VR::units: case VR::regex:
      j["pattern"] = kNotBlank;
      if (f.rule == VR::regex) j["maxLength"] = kMaxRegex;
      break;
    case VR::names: case VR::users: j["pattern"] = "^[^,]*[^ \\t\\n\\r,][^,]*$"; break;
    case VR::paths: j["minLength"] = 1; break;
    case VR::regexes: j["minLength"] = 1, j["maxLength"] = kMaxRegex; break;
    case VR::abs_path: j["pattern"] = kAbsPath; break;
    case VR::abs_paths: j["pattern"] = "^/"; break;  // read_abs_paths: each from /
    case VR::true_only: j = {{"const", true}}; break;
    case VR::pid: j["not"] = {{"const", 1}}; break;  // init
    case VR::signal: j["pattern"] = signal_pattern(); break;
    case VR::mode: j["pattern"] = "^[0-7]{1,4}$"; break;  // util::mode_problem
    case VR::gpus: j["pattern"] = "^([0-9]{1,4}|(GPU|MIG)-[0-9A-Fa-f/-]+)$"; break;
    case VR::guard_path: j["pattern"] = kGuardPath; break;
    case VR::ident: j["pattern"] = "^[a-z0-9_]+$"; break;
    case VR::when_expr: j["pattern"] = "^(not +)?[A-Za-z_-][A-Za-z0-9_-]*(\\.[A-Za-z0-9_-]+)*$"; break;
    case VR::choice: case VR::state: case VR::scope:
      j["enum"] = f.values;
      if (f.rule == VR::state)
        for (auto s : service_states()) j["enum"].push_back(std::string(name(s)));
      if (f.rule == VR::scope)
        for (auto s : service_scopes()) j["enum"].push_back(std::string(name(s)));
      break;
    case VR::user_name: j["pattern"] = kUserNamePattern; break;
    case VR::program: j["pattern"] = "^(/.*[^/].*|[^/]*[^ \\t\\n\\r/][^/]*)$"; break;  // read_program: a name, or from /
    default: break;
  }
  return j;
}

// The whole value of a key; `templates`: a kind key, whose value may be "{{ ... }}".
json value(const FieldSpec& f, bool templates) {
  json one = item(f);
  if (templates && f.type != T::string && f.type != T::strings) one = {{"anyOf", {one, ref("template")}}};
  else if (templates && one.contains("pattern")) one = {{"anyOf", {one, ref("template")}}};
  json j = one;
  if (f.type == T::strings || f.type == T::ints) {
    json arr = {{"type", "array"}, {"items", one}};
    if (f.rule == VR::paths || f.rule == VR::abs_paths || f.rule == VR::users || f.rule == VR::units ||
        f.rule == VR::regexes || f.rule == VR::ints || f.rule == VR::gpus)
      arr["minItems"] = 1;
    if (f.rule == VR::gpus) arr["uniqueItems"] = true;
    j = {{"anyOf", {one, arr}}};
    if (f.rule == VR::gpus) j["anyOf"].push_back({{"const", "all"}}), j["anyOf"].push_back({{"const", {"all"}}});
  }
  if (f.type == T::tables) j = {{"type", "array"}, {"items", item(f)}};
  switch (f.rule) {
    case VR::count: {  // loader.cc read_count: hosts, or a percentage from the range's minimum to 100
      const util::IntRange& r = *util::int_range(f.name);
      std::string pct = r.min == 0 ? "^([0-9]|[1-9][0-9]|100)%$" : "^([1-9]|[1-9][0-9]|100)%$";
      j = {{"anyOf", {integer(f.name), str(pct.c_str())}}};
      break;
    }
    case VR::path_or_false: j = {{"anyOf", {str(kGuardPath), {{"const", false}}}}}; break;
    case VR::vars: j["propertyNames"] = {{"not", {{"enum", reserved_names()}}}}; break;
    case VR::secrets:
      j["propertyNames"] = {{"not", {{"enum", reserved_names()}}}};
      j["additionalProperties"] = str("^(env|file):.");
      break;
    case VR::address:  // inventory_loader.cc address_problem: a name or address, no port
      j["pattern"] = "^[A-Za-z0-9._%:][A-Za-z0-9._%:-]*$";
      j["not"] = {{"pattern", "^[^:]*:[^:]*$"}};
      break;
    default: break;
  }
  if (f.name == "timeout") j["not"] = {{"pattern", "^(0+(ms|s|m|h))+$"}};  // type_error: no zero deadline
  return j;
}

// Neither a string holding "{{" nor an array with one (`pattern` alone passes
// every non-string, so `not` of it alone would refuse every array).
json no_template() {
  json t = {{"type", "string"}, {"pattern", "\\{\\{"}};
  json j;
  j["not"]["anyOf"] = json::array({t, {{"type", "array"}, {"contains", t}}});
  return j;
}

// A step's or rung's common key: read once, when the playbook loads, so no template (but `name`).
json common(const FieldSpec& f) {
  json j = value(f, false);
  if (f.name == "tags") {  // schema_rules.cc: each tag matches [a-z0-9_-]+
    json tag = {{"type", "string"}, {"pattern", "^[a-z0-9_-]+$"}};
    j = {{"anyOf", {tag, {{"type", "array"}, {"items", tag}}}}};
  }
  if ((f.type == T::string || f.type == T::strings) && f.name != "name")
    j = {{"allOf", json::array({j, no_template()})}};
  return j;
}

json keys_of(const std::vector<std::string>& keys) {
  json req = json::array();
  for (const auto& k : keys) req.push_back({{"required", {k}}});
  return req;
}

// A step or rung: `kind` first, then per kind (if/then) its keys, rules and nothing else.
json table_schema(TableRole role) {
  const auto& base = role == TableRole::step ? common_step_fields() : rung_fields();
  json kinds = json::array();
  for (const auto& k : step_kinds())
    if (role == TableRole::step || k.rung) kinds.push_back(k.name);
  json j = {{"type", "object"}, {"required", {"kind"}}, {"properties", json::object()}};
  for (const auto& f : base) j["properties"][f.name] = common(f);
  j["properties"]["kind"] = {{"enum", kinds}};
  if (role == TableRole::step) j["properties"]["escalate"] = {{"type", "array"}, {"items", ref("rung")}};
  j["allOf"] = json::array();
  for (const auto& k : step_kinds()) {
    if (role == TableRole::rung && !k.rung) continue;
    json then = {{"properties", json::object()}, {"additionalProperties", false}};
    for (const auto& f : base) then["properties"][f.name] = true;
    for (const auto& f : k.fields) then["properties"][f.name] = value(f, true);
    const KindRules& r = kind_rules(k.kind);
    if (!r.required.empty()) then["required"] = r.required;
    if (!r.one_of.empty()) then["oneOf"] = keys_of(r.one_of);
    if (!r.any_of.empty()) then["anyOf"] = keys_of(r.any_of);
    for (const auto& n : r.needs) then["dependencies"][n.key] = {{"anyOf", keys_of(n.one_of)}};
    if (k.kind == Kind::service)  // key_rules.h keys_disagree: scope = "user" and `user` go together
      then["allOf"] = {
          {{"if", {{"properties", {{"scope", {{"const", "user"}}}}}, {"required", {"scope"}}}},
           {"then", {{"required", {"user"}}}}},
          {{"if", {{"required", {"user"}}}},
           {"then", {{"required", {"scope"}},
                     {"properties", {{"scope", {{"anyOf", {{{"const", "user"}}, ref("template")}}}}}}}}}};
    j["allOf"].push_back({{"if", {{"properties", {{"kind", {{"const", k.name}}}}}, {"required", {"kind"}}}},
                          {"then", then}});
  }
  return j;
}

json object_of(const std::vector<FieldSpec>& fields) {
  json j = {{"type", "object"}, {"additionalProperties", false}, {"properties", json::object()}};
  for (const auto& f : fields) j["properties"][f.name] = value(f, false);
  return j;
}

json inventory_schema() {
  json j = object_of(inventory_fields());
  // inventory_loader.cc: a host is no `all`, no control character; a group lists hosts and groups.
  json name = {{"minLength", 1}, {"pattern", "^[^\\x00-\\x1f\\x7f]*$"}, {"not", {{"const", "all"}}}};
  j["properties"]["hosts"] = {{"type", "object"}, {"propertyNames", name}, {"additionalProperties", ref("host")}};
  j["properties"]["groups"] = {{"type", "object"},
                               {"propertyNames", {{"not", {{"const", "all"}}}}},
                               {"additionalProperties", value(plain_field("members", T::strings), false)}};
  j["properties"]["group_vars"] = {{"type", "object"}, {"additionalProperties", {{"type", "object"}}}};
  j["properties"]["defaults"] = object_of(inventory_defaults_fields());
  return j;
}

// A [[step]] entry: an include entry when it has `include` (include.cc), else a step of a kind.
json step_entry_schema() {
  json entry = object_of(include_entry_fields());
  entry["required"] = {"id", "include"};
  return {{"if", {{"required", {"include"}}}}, {"then", entry}, {"else", table_schema(TableRole::step)}};
}

json definitions() {
  return {{"template", {{"type", "string"}, {"pattern", "\\{\\{"}, {"description", "a template, rendered for each host"}}},
          {"step", step_entry_schema()},
          {"rung", table_schema(TableRole::rung)},
          {"defaults", object_of(defaults_fields())},
          {"inventory", inventory_schema()},
          {"host", object_of(host_fields())}};
}

}  // namespace

json playbook_json_schema() {
  json j = object_of(top_fields());
  j["properties"]["targets"]["anyOf"][1]["minItems"] = 1;  // loader.cc: `targets` is empty
  j["properties"]["defaults"] = ref("defaults");
  j["properties"]["inventory"] = ref("inventory");
  j["properties"]["step"] = {{"type", "array"}, {"items", ref("step")}};
  j["required"] = {"name", "step"};
  j["dependencies"] = {{"max_fail", {"serial"}}};  // loader.cc: max_fail is checked between batches
  j["definitions"] = definitions();
  j["$schema"] = "http://json-schema.org/draft-07/schema#";
  j["title"] = "ratchet playbook";
  return j;
}

json piece_json_schema() {
  json j = object_of(piece_fields());
  j["properties"]["step"] = {{"type", "array"}, {"items", ref("step")}};
  j["required"] = {"step"};
  j["definitions"] = definitions();
  j["$schema"] = "http://json-schema.org/draft-07/schema#";
  j["title"] = "ratchet playbook piece (included)";
  return j;
}

json inventory_json_schema() {
  json j = inventory_schema();
  j["definitions"] = definitions();
  j["$schema"] = "http://json-schema.org/draft-07/schema#";
  j["title"] = "ratchet inventory";
  return j;
}

}  // namespace ratchet::playbook
