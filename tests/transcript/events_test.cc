// transcript::events: one table of every event; the writer refuses what does
// not fit it, the reader reads what it knows.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "support/local_proc.h"
#include "transcript/events.h"
#include "transcript/reader.h"
#include "transcript/render.h"
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
      CHECK(f.name != "event");
      CHECK(f.name != "t");
    }
  }
  CHECK(kinds.size() == 15);
  CHECK(events::all().front().name == events::kRunStart);
  CHECK(events::all().back().name == events::kRunEnd);
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
