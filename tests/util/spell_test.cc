#include <catch2/catch.hpp>

#include "util/spell.h"

using ratchet::util::nearest;

TEST_CASE("nearest finds the likely key", "[util]") {
  std::vector<std::string> keys = {"pid", "pid_file", "pattern", "holders_of", "tree", "signal"};
  CHECK(nearest("pidfile", keys) == "pid_file");
  CHECK(nearest("singal", keys) == "signal");
  CHECK(nearest("holder_of", keys) == "holders_of");
  CHECK(nearest("completely_unrelated", keys) == "");
  CHECK(nearest("wbe", {"b", "web"}) == "web");  // a transposition is one edit
}
