#include "util/value.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "transcript/value_json.h"

using ratchet::util::Value;

TEST_CASE("value: a brace list of key and value pairs is a table and any other list an array", "[util]") {
  Value t = {{"pid", 42}, {"files", {"/dev/a", "/dev/b"}}};
  REQUIRE(t.is_table());
  CHECK(t["pid"].as_int() == 42);
  CHECK(t["files"].is_array());
  CHECK(t["files"][size_t{1}].as_string() == "/dev/b");
  CHECK(Value{"x"}.is_array());  // braces: a list; Value("x") is the string
  CHECK(Value("x").is_string());
  CHECK(Value::array({{{"a", 1}}}).as_array()[0].is_table());
  CHECK(Value::array({{"a", 1}}).as_array()[0].is_array());  // one pair alone is a list of two
  const Value& c = t;
  CHECK(c["missing"].is_null());
  CHECK(c["files"][size_t{9}].is_null());
  CHECK_FALSE(c.contains("missing"));
}

TEST_CASE("value: the wrong type is a logic error never a silent default", "[util]") {
  Value s("text");
  CHECK_THROWS_AS(s.as_int(), std::logic_error);
  CHECK_THROWS_AS(s.as_table(), std::logic_error);
  CHECK_THROWS_AS(s["k"], std::logic_error);
  CHECK_THROWS_AS(s.push_back(1), std::logic_error);
  Value n;
  n["k"] = 1;  // null becomes a table
  CHECK(n.is_table());
  Value a;
  a.push_back("x");  // and an array
  CHECK(a.size() == 1);
  CHECK_THROWS_AS(a[size_t{3}], std::logic_error);
  CHECK(Value(3).as_float() == 3.0);
}

TEST_CASE("value: merge sets each key and toml_text writes values as TOML does", "[util]") {
  Value v = {{"a", 1}, {"b", "x"}};
  v.merge(Value::table({{"b", "y"}, {"c", true}}));
  CHECK(v == Value({{"a", 1}, {"b", "y"}, {"c", true}}));
  CHECK(ratchet::util::toml_text(v) == "{ a = 1, b = \"y\", c = true }");
  CHECK(ratchet::util::toml_text(Value::array({"a\"b", 2.0, -1})) == "[\"a\\\"b\", 2.0, -1]");
  CHECK(ratchet::util::toml_text(Value::table({{"odd key", 1}})) == "{ \"odd key\" = 1 }");
  CHECK(ratchet::util::toml_text(Value()) == "nothing");
}

TEST_CASE("value: JSON round trip keeps every type and a huge unsigned becomes a float", "[util]") {
  Value v = {{"i", -7}, {"f", 1.5}, {"s", "é"}, {"b", false}, {"a", Value::array({1, "x"})}, {"n", Value()}};
  CHECK(ratchet::transcript::from_json(ratchet::transcript::to_json(v)) == v);
  CHECK(ratchet::transcript::from_json(nlohmann::json(18446744073709551615ULL)).is_float());
  CHECK(ratchet::transcript::from_json(nlohmann::json(42U)).as_int() == 42);
}

// The rule: JSON is the transcript's, the plan file's and the JSON
// Schema's format, not a type other modules pass around.
TEST_CASE("layout: only transcript/ and the plan codec and the JSON Schema expose nlohmann::json in a header",
          "[util]") {
  namespace fs = std::filesystem;
  std::vector<std::string> leaks;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(RATCHET_SOURCE_DIR) / "src")) {
    if (e.path().extension() != ".h") continue;
    const std::string rel = fs::relative(e.path(), fs::path(RATCHET_SOURCE_DIR) / "src").string();
    if (rel.rfind("transcript/", 0) == 0 || rel == "plan/codec.h" || rel == "playbook/json_schema.h") continue;
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find("nlohmann") != std::string::npos) leaks.push_back(rel);
  }
  CHECK(leaks == std::vector<std::string>{});
}
