// transcript::read_transcript: cut-off, hostile and odd lines are noted, never fatal.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "support/local_proc.h"
#include "transcript/reader.h"

using namespace ratchet::transcript;

// A fresh path in its own temp directory (support/local_proc.h).
static std::string temp_path(const char* name) { return ratchet::testing::temp_dir("ratchet-transcript") + "/" + name; }

TEST_CASE("a cut-off last line is reported, earlier events kept", "[transcript]") {
  std::string p = temp_path("cut.jsonl");
  std::string l1 = R"({"event":"run_start","t":"2026-11-30T00:00:00.000Z"})";
  std::string l2 = R"({"event":"step_start","t":"2026-11-30T00:00:01.000Z","host":"h","step":"a"})";
  {
    std::ofstream out(p);
    out << l1 << "\n" << l2 << "\n" << R"({"event":"exit","t":"2026-11-30T00:00:02.000Z","ho)";
  }
  REQUIRE(l1.size() + l2.size() + 2 == 129);
  auto r = read_transcript(p);
  CHECK(r.events.size() == 2);
  CHECK(r.cut_off);
  CHECK(r.note == "transcript ends mid-line at line 3 (byte 129): the run was cut off there");
}

TEST_CASE("a last event whose \"event\" is not a string is read, and the run is not ended by it",
          "[transcript]") {
  // Found by transcript_reader_fuzz in CI: value("event", "") threw type_error here.
  for (const char* last : {R"({"event":1})", R"({"event":null})", R"({"event":["run_end"]})"}) {
    std::string p = temp_path("odd-event.jsonl");
    {
      std::ofstream out(p);
      out << R"({"event":"run_start","t":"2026-11-30T00:00:00.000Z"})" << "\n" << last << "\n";
    }
    auto r = read_transcript(p);
    CHECK(r.error.empty());
    CHECK(r.events.size() == 2);
    CHECK(r.note == "transcript has no run_end after 2 events: the run did not finish");
  }
}

TEST_CASE("a line nested thousands deep is skipped, not a crash", "[transcript]") {
  std::string p = temp_path("deep.jsonl");
  {
    std::ofstream out(p);
    out << R"({"event":"run_start","t":"2026-11-30T00:00:00.000Z"})" << "\n";
    out << std::string(100000, '[') << std::string(100000, ']') << "\n";
  }
  auto r = read_transcript(p);
  CHECK(r.events.size() == 1);
  CHECK(r.note.find("line 2 (byte 53) is not a JSON object; skipped") != std::string::npos);
}

TEST_CASE("a directory or a missing file is an error that names it, not an empty transcript", "[transcript]") {
  std::string p = temp_path("x.jsonl");
  auto missing = read_transcript(p);
  CHECK(missing.error == "cannot read transcript " + p + ": No such file or directory");
  std::string dir = p.substr(0, p.rfind('/'));
  auto d = read_transcript(dir);
  CHECK(d.error == "cannot read transcript " + dir + ": Is a directory");
  CHECK(d.events.empty());
}
