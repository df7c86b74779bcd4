// transcript::LineTail (`show --follow`): a file that does not exist yet, grows,
// and ends inside a line for a while.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>

#include "support/local_proc.h"
#include "transcript/tail.h"

using ratchet::transcript::LineTail;
using Lines = std::vector<std::string>;

TEST_CASE("LineTail waits for the file and for a half-written line's newline", "[transcript]") {
  const std::string p = ratchet::testing::temp_dir("ratchet-tail") + "/t.jsonl";
  LineTail tail(p);
  std::string err;
  CHECK(tail.poll(&err).empty());  // not there yet
  CHECK(err == "");
  std::ofstream out(p, std::ios::binary);
  out << "{\"a\":1}\n{\"b\":" << std::flush;
  CHECK(tail.poll(&err) == Lines{"{\"a\":1}"});
  CHECK(tail.poll(&err).empty());  // the second line has no newline yet
  out << "2}\n\n{\"c\"" << std::flush;
  CHECK(tail.poll(&err) == Lines{"{\"b\":2}", ""});
  out << ":3}\n" << std::flush;
  CHECK(tail.poll(&err) == Lines{"{\"c\":3}"});
  CHECK(tail.lines_read() == 4);
  CHECK(err == "");
  REQUIRE(::truncate(p.c_str(), 3) == 0);  // cut below what was read
  CHECK(tail.poll(&err).empty());
  CHECK(err.find("shrank to 3 bytes after 25 were read: it was cut or replaced") != std::string::npos);
}

TEST_CASE("LineTail names a directory it cannot follow", "[transcript]") {
  LineTail tail(ratchet::testing::temp_dir("ratchet-tail"));
  std::string err;
  CHECK(tail.poll(&err).empty());
  CHECK(err.find("Is a directory") != std::string::npos);
}
