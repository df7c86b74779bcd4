#include <catch2/catch.hpp>

#include "util/diff.h"

using ratchet::util::unified_diff;

TEST_CASE("unified_diff of equal texts is empty", "[util][diff]") {
  CHECK(unified_diff("a\nb\n", "a\nb\n", "x", "y").empty());
}

TEST_CASE("unified_diff shows one changed line with its context", "[util][diff]") {
  std::string d = unified_diff("1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nfive\n6\n7\n8\n", "now", "new");
  CHECK(d == "--- now\n+++ new\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST_CASE("unified_diff of a new and an emptied text", "[util][diff]") {
  CHECK(unified_diff("", "a\n", "f", "g") == "--- f\n+++ g\n@@ -0,0 +1,1 @@\n+a\n");
  CHECK(unified_diff("a\n", "", "f", "g") == "--- f\n+++ g\n@@ -1,1 +0,0 @@\n-a\n");
}

TEST_CASE("unified_diff marks a last line without a newline and refuses huge texts", "[util][diff]") {
  std::string d = unified_diff("a\n", "a", "f", "g");
  CHECK(d.find("\\ No newline at end of file") != std::string::npos);
  std::string big(3000, '\n');
  CHECK(unified_diff(big, "x\n", "f", "g", 3, 2000).find("not compared line by line") != std::string::npos);
}

TEST_CASE("unified_diff keeps far apart changes in separate hunks", "[util][diff]") {
  std::string a, b;
  for (int i = 0; i < 30; ++i) {
    a += std::to_string(i) + "\n";
    b += (i == 2 || i == 25 ? "x" : std::to_string(i)) + "\n";
  }
  std::string d = unified_diff(a, b, "f", "g");
  CHECK(d.find("@@ -1,6 +1,6 @@") != std::string::npos);
  CHECK(d.find("@@ -23,7 +23,7 @@") != std::string::npos);
}
