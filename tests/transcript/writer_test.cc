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
    w.emit(events::kRunStart, {{"schema", kSchemaVersion}, {"ratchet_version", "v"}, {"targets", {"h1"}}});
    w.emit(events::kStepStart, {{"host", "h1"}, {"step", "stop"}, {"kind", "service"}, {"name", "Stop"}});
    w.emit(events::kRunEnd, {{"status", "ok"}, {"exit_code", 0}, {"hosts", {{"ok", 1}}}});
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
    w.emit(events::kOutput, {{"host", "h"}, {"step", "s"}, {"rung", 0}, {"stream", "stdout"}, {"bytes", 20},
                             {"data", "password is hunter2!"}});
    w.emit(events::kEvidence, {{"host", "h"}, {"step", "s"}, {"rung", 0},
                               {"holders", {{{"pid", 7}, {"cmdline", "app --pw hunter2"}}}}});
  }
  std::ifstream in(p);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  CHECK(all.find("hunter2") == std::string::npos);
  auto r = read_transcript(p);
  CHECK(r.events[0]["data"] == "password is ***!");
  CHECK(r.events[1]["holders"][0]["cmdline"] == "app --pw ***");
}

TEST_CASE("a secret as short as one letter never masks an event's name", "[transcript]") {
  std::string p = temp_path("short.jsonl");
  {
    Writer w(p);
    w.add_secret("e");
    w.emit(events::kStepStart, {{"host", "h"}, {"step", "s"}, {"kind", "run"}, {"name", "echo e"}});
  }
  auto r = read_transcript(p);
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0]["event"] == "step_start");
  CHECK(r.events[0]["name"] == "***cho ***");  // values are still masked
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
    w.emit(events::kRunStart, {{"argv", {"ratchet"}}, {"schema", kSchemaVersion}, {"ratchet_version", "v"},
                               {"targets", nlohmann::json::array()}, {"event", "forged"}, {"t", "x"}});
    w.emit(events::kRunEnd, {{"status", "ok"}, {"exit_code", 0}, {"hosts", nlohmann::json::object()}});
  }
  std::ifstream in(p);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  CHECK(first.rfind(R"({"event":"run_start","t":")", 0) == 0);
  CHECK(first.size() > 51);
  // the fields can't override event or t
  CHECK(first.substr(51) == R"(,"argv":["ratchet"],"ratchet_version":"v","schema":2,"targets":[]})");
  CHECK(second.rfind(R"({"event":"run_end","t":")", 0) == 0);
  // {"event":"run_end","t":"2026-11-30T00:00:00.000Z", the chain's prev, then the fields in name order
  CHECK(second.substr(49, 9) == R"(,"prev":")");
  CHECK(second.substr(49 + 9 + 64) == R"(","exit_code":0,"hosts":{},"status":"ok"})");
  auto r = read_transcript(p);
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[0]["event"] == "run_start");
}
