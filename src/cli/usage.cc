#include "cli/usage.h"

#include <fmt/format.h>

#include <iostream>

#include "cli/exit_codes.h"
#include "util/text.h"

namespace ratchet::cli {

std::string usage_text(std::string_view command, std::string_view message) {
  std::string help = command.empty() ? "ratchet --help" : fmt::format("ratchet {} --help", command);
  return util::terminal_line(fmt::format("ratchet: error: {}", message)) + "\n" +
         util::terminal_line(fmt::format("see '{}'", help)) + "\n";
}

int usage_error(std::string_view command, std::string_view message) {
  std::cerr << usage_text(command, message);
  return kExitUsage;
}

}  // namespace ratchet::cli
