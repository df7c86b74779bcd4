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
  // One escape style: \xNN for each control byte (was '?', which hid which byte it was).
  CHECK(text.find("\\x1b]0;PWNED-TITLE\\x07\\x1b[?1049h\\x1b[2Jvisible line") != std::string::npos);
  CHECK(text.find("failed (rung 0) in 1ms: \\x1b[31mred\\x1b[0m") != std::string::npos);
}

TEST_CASE("show: one bad byte never hides a stream and a backslash is never an escape", "[transcript]") {
  // "caf\xe9" (Latin-1) is not UTF-8: the writer stores it as data_b64. show
  // printed "<binary, base64 in transcript>" for the whole stream.
  std::vector<nlohmann::json> ev = {
      {{"event", "step_start"}, {"host", "h"}, {"step", "s"}, {"kind", "run"}, {"name", "n"}},
      {{"event", "command"}, {"host", "h"}, {"step", "s"}, {"rung", 0}, {"role", "action"}, {"command", "cat menu"}},
      {{"event", "output"}, {"host", "h"}, {"step", "s"}, {"rung", 0}, {"stream", "stdout"},
       {"data_b64", "Y2Fm6SBvcGVuCm5leHQgbGluZQo="}},  // "caf\xe9 open\nnext line\n"
      {{"event", "output"}, {"host", "h"}, {"step", "s"}, {"rung", 0}, {"stream", "stderr"},
       {"data", std::string("literal caf\\xe9 and NUL\0\n", 25)}},
      {{"event", "exit"}, {"host", "h"}, {"step", "s"}, {"rung", 0}, {"code", 0}, {"ms", 1}},
  };
  CHECK(render(ev, RenderOptions{}) ==
        "host h\n"
        "  - s [run] n\n"
        "      action $ cat menu  \u2192 exit 0 (1ms)\n"
        "          | caf\\xe9 open\n"
        "          | next line\n"
        "          ! literal caf\\\\xe9 and NUL\\x00\n");
}

TEST_CASE("show renders every kind of event the writer emits", "[transcript]") {
  using nlohmann::json;
  std::vector<json> ev = {
      {{"event", "run_start"}, {"t", "T0"}, {"run_id", "R"}, {"playbook", "p"}, {"playbook_path", "p.toml"},
       {"playbook_sha256", "0123456789abcdef"}, {"ratchet_version", "0.1.0"}, {"schema", 2}},
      {{"event", "host_library"}, {"sha256", "fedcba9876543210"}, {"text", "abc\n"}},
      {{"event", "batch_start"}, {"batch", 1}, {"batches", 2}, {"hosts", {"a", "b"}}},
      {{"event", "connect"}, {"host", "a"}, {"user", "root"}, {"address", "10.0.0.1"}, {"port", 22},
       {"fingerprint", "SHA256:x"}, {"auth_method", "publickey"}, {"ms", 5}, {"via", {"ops@b:22"}}},
      {{"event", "step_start"}, {"host", "a"}, {"step", "boot"}, {"kind", "reboot"}, {"name", "Reboot"}},
      {{"event", "reboot_wait"}, {"host", "a"}, {"step", "boot"}, {"attempt", 1}, {"cause", "refused"},
       {"message", "connection refused"}},
      {{"event", "reboot_wait"}, {"host", "a"}, {"step", "boot"}, {"attempt", 2},
       {"message", "still the old boot"}},
      {{"event", "connect"}, {"host", "a"}, {"user", "root"}, {"address", "10.0.0.1"}, {"port", 22},
       {"fingerprint", "SHA256:x"}, {"auth_method", "publickey"}, {"ms", 7}, {"after_reboot", true}},
      {{"event", "step_end"}, {"host", "a"}, {"step", "boot"}, {"status", "failed"}, {"rung", 0}, {"ms", 9000},
       {"reason", "exit 1"}},
      {{"event", "step_start"}, {"host", "a"}, {"step", "after"}, {"kind", "run"}, {"name", "After"}},
      {{"event", "step_end"}, {"host", "a"}, {"step", "after"}, {"status", "skipped"}, {"rung", 0}, {"ms", 0},
       {"reason", "host stopped at boot"}, {"stopped_at", "boot"}},
      {{"event", "host_end"}, {"host", "a"}, {"status", "failed"}, {"counts", {{"failed", 1}, {"skipped", 1}}},
       {"reason", "exit 1"}, {"stopped_at", "boot"}},
      {{"event", "run_end"}, {"t", "T1"}, {"status", "failed"}, {"exit_code", 1}},
  };
  CHECK(render(ev, RenderOptions{}) ==
        "run R of p (p.toml), playbook sha256 0123456789ab, ratchet 0.1.0\n"
        "started T0\n"
        "host library sha256 fedcba987654, 4 bytes\n"
        "batch 1/2: a, b\n"
        "host a\n"
        "  connected root@10.0.0.1:22 via ops@b:22 host key SHA256:x (publickey, 5ms)\n"
        "  - boot [reboot] Reboot\n"
        "      waiting for the reboot, attempt 1: refused: connection refused\n"
        "      waiting for the reboot, attempt 2: still the old boot\n"
        "  connected after reboot root@10.0.0.1:22 host key SHA256:x (publickey, 7ms)\n"
        "    failed (rung 0) in 9s: exit 1\n"
        "  - after [run] After\n"
        "    skipped: host stopped at boot\n"
        "  host failed (stopped at boot): 1 failed, 1 skipped: exit 1\n"
        "run failed (exit 1) at T1\n");
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
