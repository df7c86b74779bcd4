// util/rules.h: the one table of signals, file modes and integer ranges that
// the loader (playbook/schema_rules.cc) and the builders (steps/) both read.
#include <catch2/catch.hpp>

#include "playbook/schema.h"
#include "util/duration.h"
#include "util/rules.h"

using namespace ratchet;

TEST_CASE("rules: one signal table for the loader and the kill builder", "[util]") {
  CHECK(util::signal_name("TERM") == "TERM");
  CHECK(util::signal_name("sigkill") == "KILL");
  CHECK(util::signal_name("15") == "TERM");
  CHECK(util::signal_name("TREM").empty());
  CHECK(util::signal_name("0").empty());
  // Every name, SIG name and number: loader and builder agree (were two lists:
  // WINCH passed the loader and failed the builder, "15" the other way round).
  for (const auto& s : util::signals()) {
    for (std::string spelled : {std::string(s.name), "SIG" + std::string(s.name), std::to_string(s.number)}) {
      INFO(spelled);
      CHECK(playbook::normalize_signal(spelled) == s.name);
      util::SignalSpec read{};
      playbook::KeyProblem p;
      CHECK(playbook::read_signal("signal", spelled, false, &read, &p));
      CHECK(read.number == s.number);
    }
  }
}

TEST_CASE("rules: file modes are 1 to 4 octal digits, as the write builder takes them", "[util]") {
  for (const char* ok : {"0644", "644", "4755", "0600", "7"}) {
    INFO(ok);
    CHECK(util::mode_problem(ok).empty());
  }
  for (const char* bad : {"04755", "0999", "", "rw-r--r--", "12345"}) {
    INFO(bad);
    CHECK(util::mode_problem(bad) == "must be 1 to 4 octal digits such as \"0644\"");
  }
}

TEST_CASE("rules: every integer key has a range, a value outside it is named, never wrapped", "[util]") {
  CHECK(util::range_problem("retries", 4294967297LL) == "`retries` 4294967297 is outside 0..1000000");
  CHECK(util::range_problem("retries", 3).empty());
  CHECK(util::range_problem("capture", 0) == "`capture` 0 is outside 1..1073741824 bytes");
  CHECK(util::range_problem("port", 65536) == "`port` 65536 is outside 1..65535");
  CHECK(util::range_problem("forks", 0) == "`forks` 0 is outside 1..1000 hosts at once");
  CHECK(util::range_problem("pid", 4194305) == "`pid` 4194305 is outside 1..4194304");
  CHECK(util::range_problem("no_such_key", -5).empty());
  for (const char* k : {"retries", "capture", "pid", "expect_exit", "port", "port_free", "port_open", "serial",
                        "max_fail", "forks"})
    CHECK(util::int_range(k) != nullptr);
  // The key rules read the same ranges for values a template filled in.
  std::vector<int> ports;
  long long pid = 0;
  playbook::KeyProblem p;
  CHECK_FALSE(playbook::read_ints("port_free", "70000", true, &ports, &p));
  CHECK(p.message == "`port_free` 70000 is outside 1..65535");
  CHECK_FALSE(playbook::read_pid("pid", 5000000, false, &pid, &p));
  CHECK(p.message == "`pid` 5000000 is outside 1..4194304");
}

TEST_CASE("rules: a duration over 10000h is refused, not wrapped", "[util]") {
  std::string err;
  CHECK(util::parse_duration("10000h", &err) == util::kMaxDuration);
  CHECK_FALSE(util::parse_duration("10001h", &err));
  CHECK(err == "\"10001h\" is too long (at most 10000h)");
  CHECK_FALSE(util::parse_duration("9999999999999999999h", &err));
  CHECK(err == "\"9999999999999999999h\" is too long (at most 10000h)");
  CHECK_FALSE(util::parse_duration("9000h9000h", &err));
  CHECK(err == "\"9000h9000h\" is too long (at most 10000h)");
}
