#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "util/shell.h"

using ratchet::util::shell_join;
using ratchet::util::shell_quote;

// Runs `printf %s WORD` through /bin/sh and returns what sh printed: the round
// trip proves the quoted word reaches the program unchanged and inert.
static std::string through_sh(const std::string& word) {
  std::string cmd = "printf %s " + shell_quote(word);
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[256];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

TEST_CASE("plain words stay readable", "[util]") {
  CHECK(shell_quote("/dev/nvidia0") == "/dev/nvidia0");
  CHECK(shell_quote("inference.service") == "inference.service");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
}

TEST_CASE("hostile values stay inert through sh", "[util]") {
  for (std::string v : {"$(touch /tmp/ratchet-pwned)", "a; rm -rf /nonexistent", "it's \"q\"",
                        "line1\nline2", "`id`", "ünïcødé ✓", "*", "~", "$HOME", "a\\b", "-n"}) {
    CAPTURE(v);
    CHECK(through_sh(v) == v);
  }
}

TEST_CASE("words join with single spaces", "[util]") {
  CHECK(shell_join({"kill", "-TERM", "42"}) == "kill -TERM 42");
  CHECK(shell_join({"a b", "c"}) == "'a b' c");
}
