// transcript::render (ratchet show): per host and step, terminal-safe, any field type.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "transcript/events.h"
#include "transcript/render.h"
#include "transcript/sign.h"

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

namespace {

/// A sample event of `kind`: each field the table requires (and the first of its
/// one_of), with a value of its type: "S", 1, true, ["S"], {"S": 1}.
nlohmann::json sample_event(const events::Event& kind) {
  using nlohmann::json;
  json e = {{"event", kind.name}, {"t", "T"}};
  std::string_view first_of = kind.one_of.substr(0, kind.one_of.find(' '));
  for (const auto& f : kind.fields) {
    if (f.presence != events::Presence::required && f.name != first_of) continue;
    switch (f.type) {
      case events::Type::string: e[std::string(f.name)] = "S"; break;
      case events::Type::integer: e[std::string(f.name)] = 1; break;
      case events::Type::boolean: e[std::string(f.name)] = true; break;
      case events::Type::array: e[std::string(f.name)] = json::array({"S"}); break;
      case events::Type::object: e[std::string(f.name)] = {{"S", 1}}; break;
    }
  }
  return e;
}

}  // namespace

TEST_CASE("show renders a sample event of every kind of the table, each in a line of its own", "[transcript]") {
  // What show's line for each kind holds, for the sample above. A kind added to
  // events.h fails here until show renders it and this table says how.
  const std::map<std::string, std::string> shown = {
      {events::kRunStart, "run  of  (), playbook sha256 , ratchet S\nstarted T\n"},
      {events::kHostLibrary, "host library sha256 S, 1 bytes\n"},
      {events::kBatchStart, "batch 1/1: S\n"},
      {events::kConnect, "  connected S@S:1 host key S (S, 1ms)\n"},
      {events::kUnreachable, "  UNREACHABLE (S): S\n"},
      {events::kRebootWait, "      waiting for the reboot, attempt 1: S\n"},
      {events::kReconnect, "      reconnected (attempt 1, after 1ms)\n"},
      {events::kStepStart, "  - S [S] S\n"},
      {events::kCommand, "      rung 1 S      $ S  → no exit recorded: the run stopped here\n"},
      {events::kOutput, "          | S\n"},
      {events::kExit, "  → exit 1, timed out (1ms)\n"},
      {events::kEvidence, "          evidence\n"},
      {events::kFetch, "      fetched S\n"},
      {events::kStepEnd, "    S in 1ms\n"},
      {events::kLock, "  lock S take: S\n"},
      {events::kHostEnd, "  host S: 1 S\n"},
      {events::kAudit, "  audit line appended to S (digest S)\n"},
      {events::kRunEnd, "run S (exit 1) at T\n"},
      {events::kSignature, "signed: final head S by key S (S; not checked here: show --verify --allowed-signers "
                           "FILE)\n"},
  };
  for (const auto& kind : events::all()) {
    INFO(kind.name);
    auto e = sample_event(kind);
    CHECK(events::check_event(kind.name, e) == "");  // the sample is one the writer would write
    REQUIRE(shown.count(std::string(kind.name)) == 1);
    std::string text = render({e}, RenderOptions{});
    const std::string head = e.contains("host") ? "host S\n" : "";
    CHECK(text == head + shown.at(std::string(kind.name)));
    CHECK(text.find("unknown event") == std::string::npos);
  }
  CHECK(shown.size() == events::all().size());
}

TEST_CASE("show: a kind the table does not know is shown as unknown event NAME, never dropped", "[transcript]") {
  using nlohmann::json;
  std::vector<json> ev = {
      {{"event", "step_start"}, {"host", "h"}, {"step", "s"}, {"kind", "run"}, {"name", "n"}},
      {{"event", "plan_digest"}, {"t", "T"}, {"host", "h"}, {"step", "s"}, {"sha256", "x"}},
      {{"event", "chain"}, {"t", "T"}},
      {{"event", 7}},
      {{"t", "T"}},
  };
  CHECK(render(ev, RenderOptions{}) ==
        "host h\n"
        "  - s [run] n\n"
        "  unknown event plan_digest (host, sha256, step)\n"
        "  unknown event chain\n"
        "  unknown event 7\n"
        "  unknown event (no name)\n");
}

TEST_CASE("show renders what evidence holds: holders, signalled, a reboot, a bare verdict", "[transcript]") {
  using nlohmann::json;
  json h = {{"pid", 42}, {"user", "root"}, {"started", "05:00"}, {"cmdline", "worker --gpu"}};
  json base = {{"event", "evidence"}, {"host", "h"}, {"step", "s"}, {"rung", 0}};
  auto ev = [&](json extra) {
    json e = base;
    e.update(extra);
    return e;
  };
  std::vector<json> evs = {
      ev({{"role", "check"}, {"holds", false}, {"holders", {h}}}),
      ev({{"role", "action"}, {"ok", true}, {"signalled", {h}}}),
      ev({{"boot_id_before", "b1"}, {"boot_id_after", "b2"}, {"back_ms", 31000}, {"attempts", 4}}),
      ev({{"role", "check"}, {"holds", true}}),
      ev({{"role", "action"}, {"ok", false}, {"note", "kill: no such process"}}),
  };
  CHECK(render(evs, RenderOptions{}) ==
        "host h\n"
        "          holder PID 42 user root started 05:00 cmd: worker --gpu\n"
        "          signalled PID 42 user root started 05:00 cmd: worker --gpu\n"
        "          rebooted: boot id b1 → b2 (4 attempts, back after 31s)\n"
        "          evidence of the check: holds\n"
        "          note: kill: no such process\n");
}

TEST_CASE("follow's stream renders show's lines event by event with a host line whenever the host changes",
          "[transcript]") {
  using nlohmann::json;
  std::vector<json> ev = {
      {{"event", "run_start"}, {"t", "T0"}, {"run_id", "R"}, {"playbook", "p"}, {"playbook_path", "p.toml"},
       {"playbook_sha256", "0123456789abcdef"}, {"ratchet_version", "0.1.0"}, {"schema", 2}},
      {{"event", "step_start"}, {"host", "a"}, {"step", "s"}, {"kind", "run"}, {"name", "S"}},
      {{"event", "step_start"}, {"host", "b"}, {"step", "s"}, {"kind", "run"}, {"name", "S"}},
      {{"event", "command"}, {"host", "a"}, {"step", "s"}, {"rung", 0}, {"role", "action"}, {"command", "echo \x1b]0;x"}},
      {{"event", "output"}, {"host", "a"}, {"step", "s"}, {"rung", 0}, {"stream", "stdout"}, {"bytes", 3}, {"data", "hi\n"}},
      {{"event", "exit"}, {"host", "a"}, {"step", "s"}, {"rung", 0}, {"code", 0}, {"ms", 4}},
      {{"event", "step_end"}, {"host", "a"}, {"step", "s"}, {"status", "changed"}, {"rung", 0}, {"ms", 5}},
      {{"event", "run_end"}, {"t", "T1"}, {"status", "ok"}, {"exit_code", 0}},
  };
  Stream s(RenderOptions{});
  std::vector<std::string> out;
  for (const auto& e : ev) out.push_back(s.add(e));
  CHECK(out == std::vector<std::string>{
                   "run R of p (p.toml), playbook sha256 0123456789ab, ratchet 0.1.0\nstarted T0\n",
                   "host a\n  - s [run] S\n",
                   "host b\n  - s [run] S\n",
                   "",  // a command's line waits for its exit
                   "",
                   "host a\n      action $ echo \\x1b]0;x  → exit 0 (4ms)\n          | hi\n",
                   "    changed in 5ms\n",
                   "run ok (exit 0) at T1\n",
               });
  RenderOptions only_b;
  only_b.host = "b";
  Stream b(only_b);
  std::string all;
  for (const auto& e : ev) all += b.add(e);
  CHECK(all == render(ev, only_b));
}

TEST_CASE("show heads each run of a file on its own per host: a probed apply's probe, then its run",
          "[transcript]") {
  using nlohmann::json;
  auto run = [](const char* id, const char* mode, const char* status) {
    json start = {{"event", "run_start"}, {"t", "T0"}, {"run_id", id}, {"playbook", "p"}, {"playbook_path", "p.toml"},
                  {"playbook_sha256", "0123456789abcdef"}, {"ratchet_version", "0.1.0"}, {"schema", 2}};
    if (*mode) start["mode"] = mode;
    return std::vector<json>{
        start,
        {{"event", "step_start"}, {"host", "lab1"}, {"step", "s"}, {"kind", "verify"}, {"name", "S"}},
        {{"event", "step_end"}, {"host", "lab1"}, {"step", "s"}, {"status", status}, {"rung", 0}, {"ms", 5}},
        {{"event", "run_end"}, {"t", "T1"}, {"status", "ok"}, {"exit_code", 0}},
    };
  };
  std::vector<json> ev = run("P", "probe", "ok");
  for (const auto& e : run("R", "", "changed")) ev.push_back(e);
  const std::string want =
      "probe P of p (p.toml), playbook sha256 0123456789ab, ratchet 0.1.0\n"
      "read-only: each step's check sent once, no action or rung (plan --probe)\n"
      "started T0\n"
      "probe P on host lab1 (read-only)\n"
      "  - s [verify] S\n"
      "    ok in 5ms\n"
      "probe ok (exit 0) at T1\n"
      "run R of p (p.toml), playbook sha256 0123456789ab, ratchet 0.1.0\n"
      "started T0\n"
      "run R on host lab1\n"
      "  - s [verify] S\n"
      "    changed in 5ms\n"
      "run ok (exit 0) at T1\n";
  CHECK(render(ev, RenderOptions{}) == want);
  // follow's stream says the same, event by event.
  Stream s(RenderOptions{});
  std::string streamed;
  for (const auto& e : ev) streamed += s.add(e);
  CHECK(streamed == want);
  // A file of one run keeps its plain "host NAME" heading.
  CHECK(render(run("R", "", "ok"), RenderOptions{}).find("\nhost lab1\n  - s [verify] S\n") != std::string::npos);
}
