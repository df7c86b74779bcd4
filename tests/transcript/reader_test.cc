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

TEST_CASE("a file is a transcript only when its first bytes begin a run_start event", "[transcript]") {
  auto read = [](const std::string& text) {
    std::string p = temp_path("first.jsonl");
    std::ofstream(p, std::ios::binary) << text;
    return read_transcript(p);
  };
  const std::string start = R"({"event":"run_start","t":"2026-11-30T00:00:00.000Z","schema":2})";
  CHECK(read(start + "\n").not_transcript == "");
  CHECK(read("").not_transcript == "");  // empty: a transcript cut before its first byte
  // Cut anywhere inside the first line, even after one byte: still a transcript.
  for (size_t n : {size_t(1), size_t(5), size_t(19), size_t(30), start.size() - 1}) {
    INFO(n);
    auto r = read(start.substr(0, n));
    CHECK(r.not_transcript == "");
    CHECK(r.events.empty());
    CHECK(r.cut_off);
    CHECK(r.note == "transcript ends mid-line at line 1 (byte 0): the run was cut off there");
  }
  // As writers before schema 2 ordered it (keys by name: argv first).
  CHECK(read(R"({"argv":["ratchet","ru)").not_transcript == "");
  CHECK(read(R"({"argv":["ratchet"],"event":"run_start"})" "\n").not_transcript == "");
  // Anything else is not one.
  for (const char* other : {"hello\n", "[1,2]\n", R"({"event":"step_start","host":"h"})" "\n",
                            R"({"event":"run_end"})" "\n", "\n" R"({"event":"run_start"})" "\n", "{\"evil\":1}\n", "{\"event\":\"run_"  "end"}) {
    INFO(other);
    CHECK(read(other).not_transcript ==
          "its first bytes are not the start of a run_start event (a transcript begins {\"event\":\"run_start\", ...)");
  }
}
