#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "transcript/reader.h"
#include "transcript/render.h"
#include "transcript/writer.h"

using namespace ratchet::transcript;

static std::string temp_path(const char* name) {
  char dir[] = "/tmp/ratchet-transcript-XXXXXX";
  REQUIRE(mkdtemp(dir));
  return std::string(dir) + "/" + name;
}

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

TEST_CASE("show renders per host and step", "[transcript]") {
  std::vector<nlohmann::json> ev = {
      {{"event", "step_start"}, {"host", "h1"}, {"step", "gpus_free"}, {"kind", "verify"}, {"name", "free"}},
      {{"event", "command"}, {"host", "h1"}, {"step", "gpus_free"}, {"rung", 1}, {"role", "action"},
       {"command", "ratchet_kill --signal TERM"}},
      {{"event", "exit"}, {"host", "h1"}, {"step", "gpus_free"}, {"rung", 1}, {"code", 0}, {"ms", 12}},
      {{"event", "step_end"}, {"host", "h1"}, {"step", "gpus_free"}, {"status", "escalated"}, {"rung", 1}, {"ms", 3200}},
      {{"event", "step_start"}, {"host", "h2"}, {"step", "gpus_free"}, {"kind", "verify"}, {"name", "free"}},
  };
  RenderOptions o;
  std::string text = render(ev, o);
  CHECK(text.find("host h1\n  - gpus_free [verify] free\n      rung 1 action $ ratchet_kill --signal TERM  → exit 0 (12ms)\n    escalated (rung 1) in 3.2s\n") != std::string::npos);
  o.host = "h2";
  CHECK(render(ev, o) == "host h2\n  - gpus_free [verify] free\n");
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

TEST_CASE("show never lets a host's bytes reach the terminal raw", "[transcript]") {
  std::vector<nlohmann::json> ev = {
      {{"event", "step_start"}, {"host", "h1"}, {"step", "ansi"}, {"kind", "run"}, {"name", "n"}},
      {{"event", "command"}, {"host", "h1"}, {"step", "ansi"}, {"rung", 0}, {"role", "action"},
       {"command", "printf x"}},
      {{"event", "output"}, {"host", "h1"}, {"step", "ansi"}, {"rung", 0}, {"stream", "stdout"},
       {"data", "\x1b]0;PWNED-TITLE\x07\x1b[?1049h\x1b[2Jvisible\tline\n"}},
      {{"event", "exit"}, {"host", "h1"}, {"step", "ansi"}, {"rung", 0}, {"code", 0}, {"ms", 1}},
      {{"event", "step_end"}, {"host", "h1"}, {"step", "ansi"}, {"status", "failed"}, {"rung", 0},
       {"ms", 1}, {"reason", "\x1b[31mred\x1b[0m"}},
  };
  std::string text = render(ev, RenderOptions{});
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\x07') == std::string::npos);
  CHECK(text.find("?]0;PWNED-TITLE??[?1049h?[2Jvisible line") != std::string::npos);
  CHECK(text.find("?[31mred?[0m") != std::string::npos);
}

TEST_CASE("show renders fields of the wrong type as written, never throws", "[transcript]") {
  // Found by tests/fuzz/transcript_reader_fuzz: a hand-edited or foreign transcript
  // with a string "ms", an array "counts", a string "rung" or "timed_out" made
  // `ratchet show` fail with a json type_error (exit 2, nothing shown), and
  // "ms": 1e300 was a double-to-integer conversion out of range (UB).
  using nlohmann::json;
  std::vector<json> ev = {
      {{"event", "step_start"}, {"host", "h"}, {"step", "s"}, {"kind", "run"}, {"name", "n"}},
      {{"event", "command"}, {"host", "h"}, {"step", "s"}, {"rung", "1"}, {"role", "check"},
       {"command", "true"}},
      {{"event", "exit"}, {"host", "h"}, {"step", "s"}, {"code", 0}, {"ms", 1e300}, {"timed_out", "yes"}},
      {{"event", "step_end"}, {"host", "h"}, {"step", "s"}, {"status", "ok"}, {"ms", "10"}},
      {{"event", "host_end"}, {"host", "h"}, {"status", "ok"}, {"counts", json::array({1, 2})}},
      {{"event", "host_end"}, {"host", "h"}, {"status", "ok"}, {"counts", {{"ok", "3"}, {"changed", 2}}}},
  };
  std::string text;
  REQUIRE_NOTHROW(text = render(ev, RenderOptions{}));
  CHECK(text ==
        "host h\n"
        "  - s [run] n\n"
        "      check  $ true  → exit 0 (1e+300)\n"
        "    ok in 10\n"
        "  host ok: nothing ran\n"
        "  host ok: 2 changed\n");
}
