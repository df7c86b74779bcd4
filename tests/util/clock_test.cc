#include <catch2/catch.hpp>

#include "util/clock.h"

TEST_CASE("RFC 3339 times are UTC with milliseconds", "[util]") {
  using namespace std::chrono;
  ratchet::util::WallTime t{seconds(1796000000) + milliseconds(7)};
  CHECK(ratchet::util::rfc3339_ms(t) == "2026-11-30T00:53:20.007Z");
  CHECK(ratchet::util::rfc3339(t) == "2026-11-30T00:53:20Z");
  CHECK(ratchet::util::file_stamp(t) == "20261130T005320Z");
}
