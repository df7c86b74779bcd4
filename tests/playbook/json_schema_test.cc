// `ratchet schema`'s JSON Schema against the loader: the keys each table takes
// are the same in both, and the patterns written for a rule agree with the rule.
#include "playbook/json_schema.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>

#include "playbook/loader.h"
#include "playbook/schema.h"
#include "support/scratch_dir.h"
#include "util/duration.h"
#include "util/rules.h"

using namespace ratchet::playbook;
using json = nlohmann::json;

namespace {

std::set<std::string> keys(const json& properties) {
  std::set<std::string> out;
  for (const auto& it : properties.items()) out.insert(it.key());
  return out;
}

// The `then` of the step's or rung's if/then for `kind`, or null.
json then_of(const json& table, const std::string& kind) {
  for (const auto& c : table["allOf"])
    if (c["if"]["properties"]["kind"]["const"] == kind) return c["then"];
  return nullptr;
}

// Every key any table of the loader knows (the candidates for "not accepted here").
std::set<std::string> every_key() {
  std::set<std::string> out;
  for (const auto* t : {&top_fields(), &defaults_fields(), &common_step_fields(), &rung_fields(),
                        &inventory_fields(), &inventory_defaults_fields(), &host_fields(), &include_entry_fields(),
                        &piece_fields()})
    for (const auto& f : *t) out.insert(f.name);
  for (const auto& k : step_kinds())
    for (const auto& f : k.fields) out.insert(f.name);
  out.insert("bogus_key");
  return out;
}

const std::string& scratch() {
  static const ratchet::testing::ScratchDir dir("ratchet-json-schema");
  return dir.path;
}

// The loader's errors for `text` as a file, joined.
std::string load_errors(const std::string& text, bool inventory) {
  std::string path = scratch() + (inventory ? "/inv.toml" : "/pb.toml");
  std::ofstream(path, std::ios::binary) << text;
  std::vector<LoadError> errors;
  if (inventory) load_inventory(path, &errors);
  else load_playbook(path, {}, &errors);
  std::string out;
  for (const auto& e : errors) out += e.message + "\n";
  return out;
}

bool matches(const json& schema_pattern, const std::string& s) {
  return std::regex_search(s, std::regex(schema_pattern.get<std::string>()));
}

}  // namespace

TEST_CASE("schema: each kind's keys are the ones check_table takes", "[playbook][schema]") {
  json pb = playbook_json_schema();
  CHECK(pb["$schema"] == "http://json-schema.org/draft-07/schema#");
  for (TableRole role : {TableRole::step, TableRole::rung}) {
    // A [[step]] entry with `include` is an include entry; any other is a step of a kind.
    const json& table = role == TableRole::step ? pb["definitions"]["step"]["else"] : pb["definitions"]["rung"];
    std::set<std::string> kinds;
    for (const auto& k : table["properties"]["kind"]["enum"]) kinds.insert(k.get<std::string>());
    for (const auto& k : step_kinds()) {
      INFO(k.name << (role == TableRole::step ? " step" : " rung"));
      CHECK(kinds.contains(k.name) == (role == TableRole::step || k.rung));
      json then = then_of(table, k.name);
      if (!kinds.contains(k.name)) {
        CHECK(then.is_null());
        continue;
      }
      REQUIRE(then.is_object());
      CHECK(then["additionalProperties"] == false);
      std::set<std::string> in_schema = keys(then["properties"]);
      auto allowed = allowed_keys(role, k.kind);
      CHECK(in_schema == std::set<std::string>(allowed.begin(), allowed.end()));
      // The loader itself: each key of the schema is known; every other key is not.
      for (const auto& key : every_key()) {
        if (key == "kind") continue;
        Value t = Value::table({{"kind", k.name}, {key, Value("x")}});
        bool unknown = false;
        for (const auto& p : check_table(role, t)) unknown |= p.unknown_key && p.key == key;
        INFO(key);
        CHECK(unknown == !in_schema.contains(key));
      }
    }
  }
}

TEST_CASE("schema: an include entry and a piece take the keys include.cc takes", "[playbook][schema]") {
  json pb = playbook_json_schema();
  const json& step = pb["definitions"]["step"];
  CHECK(step["if"] == json({{"required", {"include"}}}));
  CHECK(step["then"]["additionalProperties"] == false);
  CHECK(step["then"]["required"] == json({"id", "include"}));
  std::set<std::string> entry;
  for (const auto& f : include_entry_fields()) entry.insert(f.name);
  CHECK(keys(step["then"]["properties"]) == entry);
  // The loader refuses any other key in an include entry, naming it.
  std::ofstream(scratch() + "/piece.toml") << "[[step]]\nid = \"s\"\nkind = \"run\"\ncommand = \"true\"\n";
  for (const auto& key : every_key()) {
    if (entry.contains(key)) continue;
    INFO(key);
    std::string err = load_errors("name = \"n\"\n[[step]]\nid = \"p\"\ninclude = \"piece.toml\"\n" + key + " = 1\n", false);
    CHECK(err.find("an include entry takes `id`, `include`, `vars` and `tags` only, not `" + key + "`") !=
          std::string::npos);
  }
  json piece = piece_json_schema();
  CHECK(piece["additionalProperties"] == false);
  std::set<std::string> top;
  for (const auto& f : piece_fields()) top.insert(f.name);
  CHECK(keys(piece["properties"]) == top);
}

TEST_CASE("schema: top-level and [defaults] keys are the ones the loader takes", "[playbook][schema]") {
  json pb = playbook_json_schema();
  CHECK(pb["additionalProperties"] == false);
  std::set<std::string> top = keys(pb["properties"]);
  CHECK(pb["required"] == json({"name", "step"}));
  for (const auto& key : every_key()) {
    if (key == "name" || key == "step") continue;
    INFO(key);
    std::string err = load_errors(key + " = 1\nname = \"n\"\n[[step]]\nkind = \"run\"\ncommand = \"true\"\n", false);
    CHECK((err.find("unknown top-level key `" + key + "`") == std::string::npos) == top.contains(key));
  }
  std::set<std::string> defaults = keys(pb["definitions"]["defaults"]["properties"]);
  CHECK(pb["definitions"]["defaults"]["additionalProperties"] == false);
  for (const auto& key : every_key()) {
    INFO(key);
    std::string err = load_errors("name = \"n\"\n[defaults]\n" + key + " = 1\n[[step]]\nkind = \"run\"\ncommand = \"true\"\n", false);
    CHECK((err.find("unknown key `" + key + "` in [defaults]") == std::string::npos) == defaults.contains(key));
  }
}

TEST_CASE("schema: inventory and host keys are the ones the loader takes", "[playbook][schema]") {
  json inv = inventory_json_schema();
  CHECK(inv["$schema"] == "http://json-schema.org/draft-07/schema#");
  std::set<std::string> top = keys(inv["properties"]);
  std::set<std::string> host = keys(inv["definitions"]["host"]["properties"]);
  CHECK(inv["definitions"]["host"]["additionalProperties"] == false);
  for (const auto& key : every_key()) {
    INFO(key);
    std::string err = load_errors(key + " = 1\n", true);
    CHECK((err.find("unknown inventory key `" + key + "`") == std::string::npos) == top.contains(key));
    err = load_errors("[hosts.box]\n" + key + " = 1\n", true);
    CHECK((err.find("unknown key `" + key + "` in host `box`") == std::string::npos) == host.contains(key));
  }
  // A playbook's [inventory] is the same table.
  for (const char* k : {"$schema", "definitions", "title"}) inv.erase(k);
  CHECK(playbook_json_schema()["definitions"]["inventory"] == inv);
}

TEST_CASE("schema: written patterns agree with the rules they stand for", "[playbook][schema]") {
  json pb = playbook_json_schema();
  const json& step = pb["definitions"]["step"]["else"];  // a step of a kind (not an include entry)
  // Durations: util::parse_duration.
  json duration = step["properties"]["settle"]["pattern"];
  for (std::string d : {"10s", "250ms", "1m30s", "1h", "0s", "10", "10 s", "1.5s", "5min", "", "s", "10S"}) {
    INFO(d);
    std::string err;
    CHECK(matches(duration, d) == ratchet::util::parse_duration(d, &err).has_value());
  }
  // Modes: util::mode_problem.
  json mode = then_of(step, "write")["properties"]["mode"]["anyOf"][0]["pattern"];
  for (std::string m : {"0644", "644", "4755", "7", "0", "08", "06444", "", "rw", "0o644"}) {
    INFO(m);
    CHECK(matches(mode, m) == ratchet::util::mode_problem(m).empty());
  }
  // Signals: util::signal_name.
  json signal = then_of(step, "kill")["properties"]["signal"]["anyOf"][0]["pattern"];
  for (std::string s : {"TERM", "term", "SIGTERM", "sigKill", "15", "9", "SIG15", "99", "TERMX", "", "SIG", "HUP"}) {
    INFO(s);
    CHECK(matches(signal, s) == !ratchet::util::signal_name(s).empty());
  }
  // Ranges: util::int_range.
  json port = then_of(step, "verify")["properties"]["port_free"]["anyOf"][0]["anyOf"][0];
  CHECK(port["minimum"] == ratchet::util::int_range("port_free")->min);
  CHECK(port["maximum"] == ratchet::util::int_range("port_free")->max);
  // Step ids: check_table's [a-z0-9_]+.
  json id = step["properties"]["id"]["allOf"][0]["pattern"];
  for (std::string s : {"stop_it", "a1", "Stop", "a-b", "", "a b"}) {
    INFO(s);
    bool ok = true;
    for (const auto& p : check_table(TableRole::step, Value::table({{"kind", "run"}, {"command", "x"}, {"id", s}})))
      ok &= p.key != "id";
    CHECK(matches(id, s) == ok);
  }
  // A kind key may be a template; a common one may not.
  CHECK(then_of(step, "kill")["properties"]["pid"]["anyOf"][1] == json({{"$ref", "#/definitions/template"}}));
  const json tmpl = {{"type", "string"}, {"pattern", "\\{\\{"}};
  const json none = {{"not", {{"anyOf", {tmpl, {{"type", "array"}, {"contains", tmpl}}}}}}};
  CHECK(step["properties"]["become_user"]["allOf"][1] == none);
  CHECK(step["properties"]["tags"]["allOf"][1] == none);  // an array of strings, none a template
}
