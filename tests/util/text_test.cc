#include <catch2/catch.hpp>

#include "util/text.h"

using namespace ratchet::util;

TEST_CASE("UTF-8 validation follows RFC 3629", "[util]") {
  CHECK(valid_utf8("plain ascii"));
  CHECK(valid_utf8("ünïcødé ✓ 🚀"));
  CHECK_FALSE(valid_utf8(std::string("\xff", 1)));
  CHECK_FALSE(valid_utf8(std::string("\xc0\xaf", 2)));        // overlong '/'
  CHECK_FALSE(valid_utf8(std::string("\xed\xa0\x80", 3)));    // surrogate
  CHECK_FALSE(valid_utf8(std::string("\xe2\x9c", 2)));        // cut short
}

TEST_CASE("quoted_name: a plain name as it is, one with a control byte, a quote or edge blanks quoted and escaped",
          "[util]") {
  CHECK(quoted_name("/dev/nvidia0") == "/dev/nvidia0");
  CHECK(quoted_name("/x/a b") == "/x/a b");
  CHECK(quoted_name("/x/a\nb (deleted)") == "\"/x/a\\nb (deleted)\"");
  CHECK(quoted_name("/x/t\tq\"") == "\"/x/t\\tq\\\"\"");
  CHECK(quoted_name("/x/e\x1b[2J") == "\"/x/e\\x1b[2J\"");
  CHECK(quoted_name("/x/end ") == "\"/x/end \"");
  CHECK(quoted_name("") == "\"\"");
}

TEST_CASE("base64 matches RFC 4648 vectors", "[util]") {
  CHECK(base64("") == "");
  CHECK(base64("f") == "Zg==");
  CHECK(base64("fo") == "Zm8=");
  CHECK(base64("foobar") == "Zm9vYmFy");
}

TEST_CASE("trim_lines keeps the first lines and says how many were dropped", "[util]") {
  CHECK(trim_lines("a\nb\nc\nd\n", 2, 80) == "a\nb\n… (2 more lines)\n");
  CHECK(trim_lines("abcdef", 1, 3) == "abc…\n");
  CHECK(trim_lines("", 3, 10) == "");
}

TEST_CASE("indent_lines prefixes every line", "[util]") {
  CHECK(indent_lines("a\nb", "  | ") == "  | a\n  | b\n");
  CHECK(indent_lines("", "x") == "");
}

TEST_CASE("terminal_line: no escape or control byte reaches the terminal, cut by columns", "[util]") {
  using ratchet::util::terminal_line;
  CHECK(terminal_line("ok") == "ok");
  CHECK(terminal_line("a\x1b[2Jb") == "a?[2Jb");           // ESC
  CHECK(terminal_line("a\nb\tc\rd") == "a b c d");
  CHECK(terminal_line(std::string("nul\0x", 5)) == "nul?x");
  CHECK(terminal_line("c1\xc2\x9b" "31m") == "c1?31m");      // CSI as a C1 control
  CHECK(terminal_line("bad\xff utf8") == "bad? utf8");
  CHECK(terminal_line("h\xc3\xa9llo w\xc3\xb6rld", 5) == "h\xc3\xa9ll\u2026");
  CHECK(terminal_line("short", 5) == "short");
  CHECK(ratchet::util::columns("h\xc3\xa9llo") == 5);
}

TEST_CASE("terminal_text: every line made safe, the newlines kept", "[util]") {
  using ratchet::util::terminal_text;
  CHECK(terminal_text("plan: esc\x1b]0;T\x07name\nhost ev\x1b[31mil\n") == "plan: esc?]0;T?name\nhost ev?[31mil\n");
  CHECK(terminal_text("touch x #\r echo hi") == "touch x #  echo hi");  // CR cannot overdraw the line
  CHECK(terminal_text("a\tb\n\nc\xc2\x9b") == "a b\n\nc?");                 // tab a blank, C1 CSI '?'
  CHECK(terminal_text("") == "");
  CHECK(terminal_text("\n") == "\n");
}

TEST_CASE("escape_bytes: one escape style for host bytes, a backslash doubled", "[util]") {
  CHECK(escape_bytes("caf\xe9") == "caf\\xe9");                 // invalid UTF-8 (Latin-1 é)
  CHECK(escape_bytes("caf\\xe9") == "caf\\\\xe9");              // a literal backslash: never the same
  CHECK(escape_bytes(std::string("a\0b", 3)) == "a\\x00b");     // NUL
  CHECK(escape_bytes("\x1b[2J\x07\r\x7f") == "\\x1b[2J\\x07\\x0d\\x7f");
  CHECK(escape_bytes("c1\xc2\x9b" "31m") == "c1\\xc2\\x9b31m");  // CSI as a C1 control
  CHECK(escape_bytes("tab\there\nnext") == "tab\there\nnext");  // tab and newline kept
  CHECK(escape_bytes("h\xc3\xa9llo \xe2\x9c\x93") == "h\xc3\xa9llo \xe2\x9c\x93");
  CHECK(escape_bytes("\xff\xfe") == "\\xff\\xfe");
}

TEST_CASE("escaped_line: one line, cut by columns, never inside an escape", "[util]") {
  CHECK(escaped_line("a\nb\tc") == "a b c");
  CHECK(escaped_line("a\rb") == "a\\x0db");
  CHECK(escaped_line("abc\x1b" "def", 6) == "abc\u2026");           // \x1b would pass column 5
  CHECK(escaped_line("abc\x1b" "def", 8) == "abc\\x1b\u2026");
  CHECK(escaped_line("short", 5) == "short");
  CHECK(escaped_line("h\xc3\xa9llo w\xc3\xb6rld", 5) == "h\xc3\xa9ll\u2026");
}

TEST_CASE("unbase64 inverts base64 and refuses what is not base64", "[util]") {
  std::string out;
  for (std::string s : {std::string(""), std::string("f"), std::string("fo"), std::string("foo"),
                        std::string("\xff\x00\x01", 3)}) {
    CHECK(unbase64(base64(s), &out));
    CHECK(out == s);
  }
  CHECK_FALSE(unbase64("Zg=", &out));
  CHECK_FALSE(unbase64("Z!==", &out));
  CHECK_FALSE(unbase64("Zg==Zg==", &out));
}
