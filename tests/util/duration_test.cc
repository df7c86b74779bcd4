#include <catch2/catch.hpp>

#include "util/duration.h"

using ratchet::util::format_duration;
using ratchet::util::Millis;
using ratchet::util::parse_duration;

TEST_CASE("durations parse with units", "[util]") {
  std::string err;
  CHECK(parse_duration("250ms", &err) == Millis(250));
  CHECK(parse_duration("10s", &err) == Millis(10'000));
  CHECK(parse_duration("5m", &err) == Millis(300'000));
  CHECK(parse_duration("1h", &err) == Millis(3'600'000));
  CHECK(parse_duration("1m30s", &err) == Millis(90'000));
  CHECK(parse_duration("0s", &err) == Millis(0));
}

TEST_CASE("durations without a unit or with a bad unit are rejected", "[util]") {
  std::string err;
  CHECK_FALSE(parse_duration("10", &err));
  CHECK(err == "\"10\" has no unit (write \"10s\" or \"10ms\")");
  CHECK_FALSE(parse_duration("10 s", &err));
  CHECK(err == "unexpected \" \" in \"10 s\" (durations look like \"250ms\", \"10s\", \"5m\", \"1h\")");
  CHECK_FALSE(parse_duration("5min", &err));
  CHECK(err == "unknown unit \"min\" (write \"m\")");
  CHECK_FALSE(parse_duration("3d", &err));
  CHECK(err == "unknown unit \"d\" (use ms, s, m or h)");
  CHECK_FALSE(parse_duration("", &err));
  CHECK_FALSE(parse_duration("s", &err));
}

TEST_CASE("durations format for people", "[util]") {
  CHECK(format_duration(Millis(250)) == "250ms");
  CHECK(format_duration(Millis(10'000)) == "10s");
  CHECK(format_duration(Millis(1'500)) == "1.5s");
  CHECK(format_duration(Millis(90'000)) == "1m30s");
  CHECK(format_duration(Millis(120'000)) == "2m");
}
