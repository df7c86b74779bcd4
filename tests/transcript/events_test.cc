// transcript::events: one table of every event; the writer refuses what does
// not fit it, the reader reads what it knows, docs/transcript.md documents it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "support/local_proc.h"
#include "transcript/events.h"
#include "transcript/reader.h"
#include "transcript/render.h"
#include "transcript/sign.h"
#include "transcript/writer.h"

using namespace ratchet::transcript;
using nlohmann::json;

namespace {

const json kExit = {{"host", "h"}, {"step", "s"}, {"rung", 0}, {"code", 0}, {"ms", 3}, {"timed_out", false}};

json with(json base, const char* key, json value) {
  base[key] = std::move(value);
  return base;
}

json without(json base, const char* key) {
  base.erase(key);
  return base;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string type_word(events::Type t) {
  switch (t) {
    case events::Type::string: return "string";
    case events::Type::integer: return "integer";
    case events::Type::boolean: return "boolean";
    case events::Type::array: return "array";
    case events::Type::object: return "object";
  }
  return "?";
}

std::string presence_word(events::Presence p) {
  switch (p) {
    case events::Presence::required: return "required";
    case events::Presence::optional: return "optional";
    case events::Presence::schema1: return "schema 1";
  }
  return "?";
}

/// The cells of a Markdown table row "| a | b |" (trimmed), or none.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  if (line.rfind("| ", 0) != 0) return out;
  size_t from = 1;
  for (size_t bar; (bar = line.find(" |", from)) != std::string::npos; from = bar + 2) {
    std::string c = line.substr(from, bar - from);
    size_t b = c.find_first_not_of(' '), e = c.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : c.substr(b, e - b + 1));
  }
  return out;
}

}  // namespace

TEST_CASE("events: the table names each kind once, and each field once per kind", "[transcript]") {
  std::set<std::string_view> kinds;
  for (const auto& e : events::all()) {
    INFO(e.name);
    CHECK(kinds.insert(e.name).second);
    CHECK_FALSE(e.meaning.empty());
    CHECK(events::find(e.name) == &e);
    std::set<std::string_view> fields;
    for (const auto& f : e.fields) {
      INFO(f.name);
      CHECK(fields.insert(f.name).second);
      for (const auto& c : events::common()) CHECK(f.name != c.name);  // every kind's, not its own
    }
  }
  CHECK(kinds.size() == 19);
  CHECK(events::all().front().name == events::kRunStart);
  // run_end ends the run; a signature of its head (transcript/sign.h) can only follow it
  CHECK(events::all()[events::all().size() - 2].name == events::kRunEnd);
  CHECK(events::all().back().name == events::kSignature);
  CHECK(events::find("no_such_event") == nullptr);
}

TEST_CASE("check_event names the first problem of an event that does not fit its row", "[transcript]") {
  CHECK(events::check_event(events::kExit, kExit) == "");
  CHECK(events::check_event(events::kExit, with(kExit, "t", "2026-11-30T00:00:00.000Z")) == "");
  CHECK(events::check_event(events::kExit, with(kExit, "code", "0")) ==
        "event `exit`: field `code` must be an integer");
  CHECK(events::check_event(events::kExit, with(kExit, "code", 1.5)) ==
        "event `exit`: field `code` must be an integer");
  CHECK(events::check_event(events::kExit, with(kExit, "timed_out", 0)) ==
        "event `exit`: field `timed_out` must be true or false");
  CHECK(events::check_event(events::kExit, with(kExit, "foo", 1)) == "event `exit`: unknown field `foo`");
  CHECK(events::check_event(events::kExit, without(kExit, "host")) == "event `exit`: missing `host`");
  CHECK(events::check_event(events::kExit, without(kExit, "code")) ==
        "event `exit`: needs one of `code`, `signal`, `error`");
  CHECK(events::check_event(events::kExit, with(without(kExit, "code"), "signal", "TERM")) == "");
  CHECK(events::check_event("exits", kExit) == "unknown event `exits`");
  CHECK(events::check_event(events::kExit, json::array()) == "event `exit`: its fields must be an object");
  // A schema 1 field is read, never written.
  json v1 = {{"schema", 1}, {"ratchet_version", "0.1.0"}, {"targets", {"a"}},
             {"host_library", {{"sha256", "x"}, {"text", "y"}}}};
  CHECK(events::check_event(events::kRunStart, v1) ==
        "event `run_start`: field `host_library` is schema 1's, not written since");
  CHECK(events::check_event(events::kRunStart, v1, events::Check::read) == "");
}

TEST_CASE("check_event: the fields of every kind are event and t and the chain's prev", "[transcript]") {
  std::vector<std::string_view> names;
  for (const auto& c : events::common()) names.push_back(c.name);
  CHECK(names == std::vector<std::string_view>{"event", "t", "prev"});
  CHECK(events::check_event(events::kExit, with(kExit, "prev", std::string(64, 'a'))) == "");
  CHECK(events::check_event(events::kExit, with(kExit, "prev", 7)) == "event `exit`: field `prev` must be a string");
  CHECK(events::check_event(events::kExit, with(kExit, "t", 7), events::Check::read) ==
        "event `exit`: field `t` must be a string");
}

TEST_CASE("docs/transcript.md documents the fields every event has as events::common() says", "[transcript]") {
  const std::string doc = read_file(std::string(RATCHET_SOURCE_DIR) + "/docs/transcript.md");
  size_t from = doc.find("\nEvery event has");
  REQUIRE(from != std::string::npos);
  const std::string section = doc.substr(from, doc.find("\n## ", from) - from);
  std::map<std::string, std::pair<std::string, std::string>> documented;
  std::istringstream lines(section);
  for (std::string line; std::getline(lines, line);) {
    auto c = cells(line);
    if (c.size() == 4 && c[0].size() > 2 && c[0].front() == '`') documented[c[0].substr(1, c[0].size() - 2)] = {c[1], c[2]};
  }
  CHECK(documented.size() == events::common().size());
  for (const auto& f : events::common()) {
    INFO(f.name);
    REQUIRE(documented.count(std::string(f.name)) == 1);
    CHECK(documented[std::string(f.name)].first == type_word(f.type));
    CHECK(documented[std::string(f.name)].second == presence_word(f.presence));
  }
}

TEST_CASE("check_event for reading: only the types of the fields and kinds it knows", "[transcript]") {
  const auto read = events::Check::read;
  CHECK(events::check_event(events::kExit, without(kExit, "host"), read) == "");  // older writers left fields out
  CHECK(events::check_event(events::kExit, with(kExit, "new_field", 1), read) == "");  // a newer writer's field
  CHECK(events::check_event("new_kind", json::object(), read) == "");  // show names it as unknown
  CHECK(events::check_event(events::kExit, with(kExit, "ms", "10"), read) ==
        "event `exit`: field `ms` must be an integer");
}

TEST_CASE("the writer throws std::logic_error on an event that does not fit the table", "[transcript]") {
  if (!Writer::checks_events()) SUCCEED("a build without asserts writes what it is given");
  else {
    std::string p = ratchet::testing::temp_dir("ratchet-events") + "/t.jsonl";
    Writer w(p);
    REQUIRE_NOTHROW(w.emit(events::kExit, kExit));
    CHECK_THROWS_MATCHES(w.emit(events::kExit, with(kExit, "code", "0")), std::logic_error,
                         Catch::Matchers::Message("event `exit`: field `code` must be an integer"));
    CHECK_THROWS_AS(w.emit("exits", kExit), std::logic_error);
    CHECK_THROWS_AS(w.emit(events::kRunEnd), std::logic_error);  // missing `status`
    Writer none;  // records nothing, checks all the same
    CHECK_THROWS_AS(none.emit(events::kExit, without(kExit, "ms")), std::logic_error);
    auto r = read_transcript(p);
    CHECK(r.events.size() == 1);  // nothing of a refused event was written
    CHECK_FALSE(w.failed());
  }
}

TEST_CASE("docs/transcript.md documents every event and field of the table, and no other", "[transcript]") {
  const std::string doc = read_file(std::string(RATCHET_SOURCE_DIR) + "/docs/transcript.md");
  REQUIRE_FALSE(doc.empty());
  size_t from = doc.find("\n## Events");
  REQUIRE(from != std::string::npos);
  size_t to = doc.find("\n## ", from + 1);
  const std::string section = doc.substr(from, to - from);
  // "### `NAME`" then a table "| `field` | type | presence | meaning |".
  std::map<std::string, std::map<std::string, std::pair<std::string, std::string>>> documented;
  std::vector<std::string> order;
  std::string current;
  std::istringstream lines(section);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("### `", 0) == 0) {
      current = line.substr(5, line.find('`', 5) - 5);
      INFO(current);
      CHECK(documented.count(current) == 0);
      documented[current];
      order.push_back(current);
      continue;
    }
    auto c = cells(line);
    if (current.empty() || c.size() != 4 || c[0].size() < 3 || c[0].front() != '`') continue;
    std::string field = c[0].substr(1, c[0].size() - 2);
    INFO(current << "." << field);
    CHECK(documented[current].count(field) == 0);
    documented[current][field] = {c[1], c[2]};
  }
  std::vector<std::string> table_order;
  for (const auto& e : events::all()) {
    table_order.push_back(std::string(e.name));
    INFO("event " << e.name);
    REQUIRE(documented.count(std::string(e.name)) == 1);
    auto& fields = documented[std::string(e.name)];
    for (const auto& f : e.fields) {
      INFO("field " << f.name);
      REQUIRE(fields.count(std::string(f.name)) == 1);
      CHECK(fields[std::string(f.name)].first == type_word(f.type));
      CHECK(fields[std::string(f.name)].second == presence_word(f.presence));
      fields.erase(std::string(f.name));
    }
    CHECK(fields.empty());  // none the table lacks
  }
  CHECK(order == table_order);  // and no event the table lacks, in its order
  // Each field only schema 1 wrote is named in the migration section.
  size_t mig = doc.find("\n## Schema 2: migration from 1");
  REQUIRE(mig != std::string::npos);
  const std::string migration = doc.substr(mig, doc.find("\n## ", mig + 1) - mig);
  for (const auto& e : events::all())
    for (const auto& f : e.fields)
      if (f.presence == events::Presence::schema1) {
        INFO(f.name);
        CHECK(migration.find("`" + std::string(f.name) + "`") != std::string::npos);
      }
  for (const char* later : {"plan fields (issue 12)", "the transport's `sent` form (issue 14)", "hash chain (issue 15)"})
    CHECK(migration.find(later) != std::string::npos);
}

TEST_CASE("the transcripts in examples/ and the reader's fuzz corpus still read", "[transcript]") {
  namespace fs = std::filesystem;
  const fs::path src(RATCHET_SOURCE_DIR);
  std::vector<fs::path> files;
  for (const auto& dir : {src / "examples", src / "tests/fuzz/corpus/transcript_reader_fuzz"})
    for (const auto& f : fs::directory_iterator(dir))
      if (f.path().extension() == ".jsonl") files.push_back(f.path());
  REQUIRE(files.size() >= 10);
  // Hand-made to hold odd types and names: read, with their problems named.
  const std::set<std::string> odd = {"odd-types.jsonl", "event-not-string.jsonl"};
  for (const auto& f : files) {
    INFO(f);
    auto r = read_transcript(f.string());
    CHECK(r.error.empty());
    std::string text;
    REQUIRE_NOTHROW(text = render(r.events, RenderOptions{}));
    if (odd.count(f.filename().string())) continue;
    CHECK(r.problems.empty());
    CHECK(text.find("unknown event") == std::string::npos);
    if (f.parent_path().filename() == "examples") {
      CHECK(r.not_transcript.empty());
      CHECK(r.note.empty());
      CHECK_FALSE(r.events.empty());
    }
  }
  auto odd_types = read_transcript((src / "tests/fuzz/corpus/transcript_reader_fuzz/odd-types.jsonl").string());
  CHECK_FALSE(odd_types.problems.empty());
}

TEST_CASE("the reader's fuzz dictionary names every event of the table", "[transcript]") {
  const std::string dict = read_file(std::string(RATCHET_SOURCE_DIR) + "/tests/fuzz/transcript_reader_fuzz.dict");
  for (const auto& e : events::all()) {
    INFO(e.name);
    CHECK(dict.find("\"\\\"" + std::string(e.name) + "\\\"\"") != std::string::npos);
  }
}
