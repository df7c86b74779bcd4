// ratchet(1)'s text: packaging/man-help.sh, which help2man reads as `ratchet --help`
// (cmake/Packaging.cmake). No build path in it, the NAME line's text once (help2man
// writes NAME from --name), every step kind of the kind table, every command.
#include <catch2/catch.hpp>

#include <sstream>

#include "playbook/kind.h"
#include "support/local_proc.h"

using namespace ratchet::testing;

TEST_CASE("man page text: usage lines say ratchet, not the build path, and every kind and command is listed",
          "[cli]") {
  auto r = run_sh(std::string("RATCHET=") + RATCHET_BINARY + " sh " + RATCHET_SOURCE_DIR +
                  "/packaging/man-help.sh --help");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string& text = r.out;
  // The binary's one-line description is help2man's NAME: not again in DESCRIPTION.
  CHECK(text.find("runbooks over SSH") == std::string::npos);
  CHECK(text.rfind("Usage: ratchet [OPTIONS] SUBCOMMAND\n", 0) == 0);
  CHECK(text.find(RATCHET_BINARY) == std::string::npos);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (auto at = line.find("Usage: "); at != std::string::npos) {
      INFO(line);
      CHECK(line.compare(at, 15, "Usage: ratchet ") == 0);
    }
  std::string kinds;
  for (auto k : ratchet::playbook::kKinds) kinds += (kinds.empty() ? "" : ", ") + std::string(ratchet::playbook::name(k));
  CHECK(kinds == "run, service, kill, verify, write, copy, fetch, reboot");
  CHECK(text.find("\nStep kinds: " + kinds + " (docs/playbook.md).\n") != std::string::npos);
  for (const char* cmd : {"run", "plan", "apply", "validate", "hosts", "show", "report", "exec", "schema"}) {
    INFO(cmd);
    // Each command: its heading, its description and its usage, each a paragraph.
    CHECK(text.find(std::string("\nCommand ") + cmd + ":\n  ") != std::string::npos);
    CHECK(text.find(std::string("\n\n  Usage: ratchet ") + cmd + " ") != std::string::npos);
  }
}
