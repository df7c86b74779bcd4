#pragma once
// Usage errors, in one style for every command: "ratchet: error: ..." and one
// hint line ("see 'ratchet run --help'"), exit 2 (cli/exit_codes.h).
#include <string>
#include <string_view>

namespace ratchet::cli {

/// The two lines of a usage error of `command` ("run", ...; "" = none):
/// "ratchet: error: MESSAGE\nsee 'ratchet COMMAND --help'\n", terminal-safe.
std::string usage_text(std::string_view command, std::string_view message);

/// Prints usage_text() to stderr; returns kExitUsage.
int usage_error(std::string_view command, std::string_view message);

}  // namespace ratchet::cli
