#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ratchet/version.h"

namespace ratchet::cli {

int main(int argc, char** argv) {
  CLI::App app{"ratchet: runbooks over SSH that check, act, escalate and record"};
  app.set_version_flag("--version", RATCHET_VERSION);
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}

}  // namespace ratchet::cli
