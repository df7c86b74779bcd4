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

namespace {
// A line holds a secret when it holds "NEW-" (what a writer's mask would know).
const ratchet::util::SecretLine kSecret = [](const std::string& line) { return line.find("NEW-") != std::string::npos; };
}  // namespace

TEST_CASE("unified_diff_masked: a changed secret line shows as *** on both sides", "[util][diff]") {
  using ratchet::util::unified_diff_masked;
  std::string d = unified_diff_masked("user=app\npassword=OLD-1234\nport=5432\n", "user=app\npassword=NEW-9876\nport=5432\n",
                                      "now", "new", kSecret);
  CHECK(d == "--- now\n+++ new\n@@ -1,3 +1,3 @@\n user=app\n-***\n+***\n port=5432\n");
  // Two lines replaced by two: the n-th by the n-th, so the other pair stays readable.
  d = unified_diff_masked("user=app\nsecret OLD-1\nport=1\n", "user=app\nsecret NEW-2\nport=2\n", "now", "new", kSecret);
  CHECK(d == "--- now\n+++ new\n@@ -1,3 +1,3 @@\n user=app\n-***\n-port=1\n+***\n+port=2\n");
  // The same secret, unchanged: a context line, masked too.
  d = unified_diff_masked("password=NEW-9876\nport=1\n", "password=NEW-9876\nport=2\n", "now", "new", kSecret);
  CHECK(d == "--- now\n+++ new\n@@ -1,2 +1,2 @@\n ***\n-port=1\n+port=2\n");
}

TEST_CASE("unified_diff_masked: an added secret line hides the removed line at its place", "[util][diff]") {
  using ratchet::util::unified_diff_masked;
  // A secret added where the host's file had another line: that old line may hold the old secret.
  std::string d = unified_diff_masked("a\ntoken OLD-1\nc\n", "a\nsecret NEW-2\nextra\nc\n", "now", "new", kSecret);
  CHECK(d == "--- now\n+++ new\n@@ -1,3 +1,4 @@\n a\n-***\n+***\n+extra\n c\n");
  // Added where nothing was removed: only the new line is hidden.
  d = unified_diff_masked("a\nc\n", "a\npw=NEW-2\nc\n", "now", "new", kSecret);
  CHECK(d == "--- now\n+++ new\n@@ -1,2 +1,3 @@\n a\n+***\n c\n");
  CHECK(d.find("NEW-") == std::string::npos);
}

TEST_CASE("unified_diff_masked: a removed line at the secret's place or with its key is hidden", "[util][diff]") {
  using ratchet::util::unified_diff_masked;
  // The host's password line is removed here and the new one added two lines on: the same key.
  std::string d = unified_diff_masked("x\npassword=OLD-1\ny\nz\n", "x\ny\npassword=NEW-2\nz\n", "now", "new", kSecret);
  INFO(d);
  CHECK(d.find("OLD-") == std::string::npos);
  CHECK(d.find("NEW-") == std::string::npos);
  CHECK(d.find("-***\n") != std::string::npos);
  CHECK(d.find("+***\n") != std::string::npos);
  // The same key far from the new secret's line (another change): hidden by its key.
  std::string a = "password = OLD-1\n", b;
  for (int i = 0; i < 12; ++i) a += "l" + std::to_string(i) + "\n";
  b = a.substr(a.find('\n') + 1) + "password = NEW-2\n";
  d = unified_diff_masked(a, b, "now", "new", kSecret);
  INFO(d);
  CHECK(d.find("OLD-") == std::string::npos);
  CHECK(d.find("-***\n") != std::string::npos);
  // A removed line elsewhere with another key stays readable.
  d = unified_diff_masked("keep=1\nx\ny\nz\nw\nv\nu\nt\npw=OLD\n", "x\ny\nz\nw\nv\nu\nt\npw=NEW-2\n", "now", "new", kSecret);
  CHECK(d.find("-keep=1\n") != std::string::npos);
  CHECK(d.find("OLD") == std::string::npos);
  // A line the test itself holds (a known secret on the host's side) is hidden wherever it is.
  d = unified_diff_masked("NEW-3\nq\n", "q\n", "now", "new", kSecret);
  CHECK(d == "--- now\n+++ new\n@@ -1,2 +1,1 @@\n-***\n q\n");
  // Without a secret the diff is unified_diff's.
  CHECK(unified_diff_masked("a\nb\n", "a\nc\n", "f", "g", kSecret) == unified_diff("a\nb\n", "a\nc\n", "f", "g"));
}

TEST_CASE("unified_diff_masked keeps the no-newline mark of a hidden last line", "[util][diff]") {
  std::string d = ratchet::util::unified_diff_masked("pw=OLD\n", "pw=NEW-1", "f", "g", kSecret);
  CHECK(d == "--- f\n+++ g\n@@ -1,1 +1,1 @@\n-***\n+***\n\\ No newline at end of file\n");
}

TEST_CASE("unified_diff_masked: a credential moved far away or under a renamed key is hidden", "[util][diff]") {
  using ratchet::util::unified_diff_masked;
  std::string a = "db_password = OLD-1\n", b;
  for (int i = 0; i < 12; ++i) a += "l" + std::to_string(i) + "\n";
  // Renamed key (db_password -> password), far from the new secret's line.
  b = a.substr(a.find('\n') + 1) + "password = NEW-2\n";
  std::string d = unified_diff_masked(a, b, "now", "new", kSecret);
  INFO(d);
  CHECK(d.find("OLD-") == std::string::npos);
  CHECK(d.find("-***\n") != std::string::npos);
  // An API token line removed while another secret is added: hidden, in any case of the key.
  d = unified_diff_masked("API_TOKEN: OLD-7\nx\ny\nz\nw\nv\nu\n", "x\ny\nz\nw\nv\nu\nsecret NEW-1\n", "now", "new", kSecret);
  INFO(d);
  CHECK(d.find("OLD-") == std::string::npos);
  // With no secret in the new content, a removed credential-named line is the host's own text: shown.
  d = unified_diff_masked("api_token: plain\nx\n", "x\n", "now", "new", kSecret);
  CHECK(d.find("-api_token: plain\n") != std::string::npos);
}
