#include "transport/remote_process.h"

#include <catch2/catch.hpp>

using namespace ratchet::transport;

namespace {

constexpr std::string_view kId = "0123456789abcdef";

/// Feeds `input` in pieces of `step` bytes; returns what passed through.
std::string filtered(PidMarkerFilter& f, const std::string& input, size_t step) {
  std::string out;
  for (size_t at = 0; at < input.size(); at += step)
    f.feed(input.data() + at, std::min(step, input.size() - at), &out);
  f.finish(&out);
  return out;
}

}  // namespace

TEST_CASE("parse_remote_process takes three decimal numbers, then ' watch' when the wrapper's watchdog runs",
          "[transport]") {
  RemoteProcess p;
  REQUIRE(parse_remote_process("123 120 9876543210", &p));
  CHECK(p.pid == 123);
  CHECK(p.pgid == 120);
  CHECK(p.start_ticks == 9876543210ULL);
  CHECK(p.known());
  CHECK_FALSE(p.watched);
  REQUIRE(parse_remote_process("123 120 9876543210 watch", &p));
  CHECK(p.pid == 123);
  CHECK(p.start_ticks == 9876543210ULL);
  CHECK(p.watched);
  for (const char* bad : {"", "1 2", "1 2 3 4", "1  2 3", "-1 2 3", "0 2 3", "1 0 3", "1 5 3", "5 1 3", "a 2 3",
                          "1 2 3x", "1 2 ", " 1 2 3", "99999999999999999999999 1 1", "watch", " watch",
                          "12 12 3 watch watch", "12 12 3  watch", "12 12 3 watched", "12 12 watch"})
    CHECK_FALSE(parse_remote_process(bad, &p));
}

TEST_CASE("the pid line is taken out of stderr, whatever the chunking", "[transport]") {
  const std::string input = "login noise\n[ratchet-pid 0123456789abcdef] 4242 4240 777\nreal error\n";
  for (size_t step : {1, 2, 3, 7, 13, 64, 4096}) {
    PidMarkerFilter f(kId);
    CHECK(filtered(f, input, step) == "login noise\nreal error\n");
    CHECK(f.process().pid == 4242);
    CHECK(f.process().pgid == 4240);
    CHECK(f.process().start_ticks == 777);
  }
}

TEST_CASE("only the first pid line is ratchet's, a later one is the command's output", "[transport]") {
  PidMarkerFilter f(kId);
  const std::string input = "[ratchet-pid 0123456789abcdef] 10 10 5\n[ratchet-pid 0123456789abcdef] 66 66 6\n";
  CHECK(filtered(f, input, 5) == "[ratchet-pid 0123456789abcdef] 66 66 6\n");
  CHECK(f.process().pid == 10);
}

TEST_CASE("a malformed look-alike stays output and the search goes on", "[transport]") {
  PidMarkerFilter f(kId);
  CHECK(filtered(f, "[ratchet-pid 0123456789abcdef] x y z\n[ratchet-pid 0123456789abcdef] 7 7 1\ntail", 4) ==
        "[ratchet-pid 0123456789abcdef] x y z\ntail");
  CHECK(f.process().pid == 7);
}

TEST_CASE("without a pid line every byte passes, NULs and a cut-off prefix included", "[transport]") {
  PidMarkerFilter f(kId);
  std::string input("a\0b\n[ratchet-p", 15);
  CHECK(filtered(f, input, 3) == input);
  CHECK_FALSE(f.process().known());
}

TEST_CASE("the marker is searched for in the first 64 KiB only", "[transport]") {
  PidMarkerFilter f(kId);
  std::string noise(PidMarkerFilter::kWindow + 10, 'n');
  std::string input = noise + "[ratchet-pid 0123456789abcdef] 7 7 1\n";
  CHECK(filtered(f, input, 1000) == input);
  CHECK_FALSE(f.process().known());
}

TEST_CASE("an endless line after the prefix is output, not held", "[transport]") {
  PidMarkerFilter f(kId);
  std::string input = "[ratchet-pid 0123456789abcdef] " + std::string(1000, '1');
  std::string out;
  f.feed(input.data(), input.size(), &out);
  CHECK(out.size() >= input.size() - 300);  // released long before the line ends
  f.finish(&out);
  CHECK(out == input);
}

TEST_CASE("a marker line without the command's run id is output, however well formed", "[transport]") {
  // A login shell's rc file prints before the wrapper: a forged line with
  // another id (or none) points the watchdog nowhere.
  PidMarkerFilter f(kId);
  const std::string input =
      "[ratchet-pid] 1 1 1\n[ratchet-pid ffffffffffffffff] 50 50 9\n[ratchet-pid 0123456789abcdef] 77 77 3\nrest\n";
  CHECK(filtered(f, input, 7) == "[ratchet-pid] 1 1 1\n[ratchet-pid ffffffffffffffff] 50 50 9\nrest\n");
  CHECK(f.process().pid == 77);
}

TEST_CASE("a marker line with the run id that names PID or group 1 is output, and the search goes on",
          "[transport]") {
  PidMarkerFilter f(kId);
  const std::string input = "[ratchet-pid 0123456789abcdef] 1 1 1\n[ratchet-pid 0123456789abcdef] 88 88 4\n";
  CHECK(filtered(f, input, 3) == "[ratchet-pid 0123456789abcdef] 1 1 1\n");
  CHECK(f.process().pid == 88);
}

TEST_CASE("a filter with no run id passes everything", "[transport]") {
  PidMarkerFilter f("");
  const std::string input = "[ratchet-pid 0123456789abcdef] 88 88 4\n";
  CHECK(filtered(f, input, 3) == input);
  CHECK_FALSE(f.process().known());
}
