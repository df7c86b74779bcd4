// report::esc: the one place page text is escaped.
#include "report/html.h"

#include <catch2/catch.hpp>

using ratchet::report::esc;
using ratchet::report::esc_capped;

TEST_CASE("esc turns markup into text: script tags and attribute quotes", "[report]") {
  CHECK(esc("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;");
  CHECK(esc(R"(a"b'c&d)") == "a&quot;b&#39;c&amp;d");
  CHECK(esc("&amp;") == "&amp;amp;");  // an entity from a host stays the text it was
  CHECK(esc("caf\xc3\xa9 \xe2\x9c\x93") == "caf\xc3\xa9 \xe2\x9c\x93");  // valid UTF-8 kept
}

TEST_CASE("esc shows control bytes and invalid UTF-8 as visible escapes", "[report]") {
  CHECK(esc(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(esc("\x1b[31mred") == "\\x1b[31mred");
  CHECK(esc("tab\tnl\ncr\r") == "tab\tnl\ncr\r");
  CHECK(esc("caf\xe9") == "caf\\xe9");
  CHECK(esc("\xc2\x85") == "\\xc2\\x85");           // a C1 control (NEL)
  CHECK(esc("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate is not UTF-8
}

TEST_CASE("esc_capped cuts on a character boundary and says so", "[report]") {
  bool cut = false;
  CHECK(esc_capped("abc", 10, &cut) == "abc");
  CHECK_FALSE(cut);
  CHECK(esc_capped("ab\xc3\xa9", 3, &cut) == "ab");
  CHECK(cut);
  CHECK(esc_capped("<<<<", 2, &cut) == "&lt;&lt;");
  CHECK(cut);
}
