// transcript::render (ratchet show): per host and step, terminal-safe, any field type.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "transcript/render.h"

using namespace ratchet::transcript;

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
