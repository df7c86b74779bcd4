// transcript::Writer: one JSON object per line, mode 0600, secrets masked, non-UTF-8 output as base64.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "support/local_proc.h"
#include "transcript/reader.h"
#include "transcript/writer.h"

using namespace ratchet::transcript;

// A fresh path in its own temp directory (support/local_proc.h).
static std::string temp_path(const char* name) { return ratchet::testing::temp_dir("ratchet-transcript") + "/" + name; }

TEST_CASE("transcript lines are JSON objects, mode 0600, in order", "[transcript]") {
  std::string p = temp_path("t.jsonl");
  {
    Writer w(p);
    w.emit("run_start", {{"schema", kSchemaVersion}});
    w.emit("step_start", {{"host", "h1"}, {"step", "stop"}, {"kind", "service"}});
    w.emit("run_end", {{"status", "ok"}, {"exit_code", 0}});
  }
  struct stat st{};
  REQUIRE(stat(p.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto r = read_transcript(p);
  REQUIRE(r.events.size() == 3);
  CHECK(r.events[0]["event"] == "run_start");
  CHECK(r.events[1]["step"] == "stop");
  CHECK(r.events[2]["exit_code"] == 0);
  CHECK(r.note.empty());
  CHECK_FALSE(r.cut_off);
  std::string t = r.events[0]["t"];
  CHECK(t.size() == 24);
  CHECK(t.back() == 'Z');
}

TEST_CASE("transcript masks secrets everywhere", "[transcript]") {
  std::string p = temp_path("s.jsonl");
  {
    Writer w(p);
    w.add_secret("hunter2");
    w.emit("output", {{"data", "password is hunter2!"}, {"nested", {"x", "hunter2"}}});
  }
  std::ifstream in(p);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  CHECK(all.find("hunter2") == std::string::npos);
  auto r = read_transcript(p);
  CHECK(r.events[0]["data"] == "password is ***!");
}

TEST_CASE("output that is not UTF-8 goes base64", "[transcript]") {
  auto f = output_fields("stdout", std::string("\xff\xfe ok", 5), 5, 0);
  CHECK_FALSE(f.contains("data"));
  CHECK(f["data_b64"] == "//4gb2s=");
  auto g = output_fields("stderr", "héllo", 6, 2);
  CHECK(g["data"] == "héllo");
  CHECK(g["dropped"] == 2);
}

TEST_CASE("every line begins with its event and time, so a cut first line still says run_start", "[transcript]") {
  std::string p = temp_path("order.jsonl");
  {
    Writer w(p);
    w.emit("run_start", {{"argv", {"ratchet"}}, {"schema", kSchemaVersion}, {"event", "forged"}, {"t", "x"}});
    w.emit("run_end");
  }
  std::ifstream in(p);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  CHECK(first.rfind(R"({"event":"run_start","t":")", 0) == 0);
  CHECK(first.size() > 51);
  CHECK(first.substr(51) == R"(,"argv":["ratchet"],"schema":2})");  // the fields can't override event or t
  CHECK(second.rfind(R"({"event":"run_end","t":")", 0) == 0);
  CHECK(second.back() == '}');
  CHECK(second.size() == 50);  // {"event":"run_end","t":"2026-11-30T00:00:00.000Z"}
  auto r = read_transcript(p);
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[0]["event"] == "run_start");
}
