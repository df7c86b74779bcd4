#pragma once
// The command line: `ratchet run|plan|validate|show|exec` (README.md, "Exit codes").

namespace ratchet::cli {

/// Parses argv, runs the command and returns the process exit code
/// (0 ok, 1 step failed, 2 usage/playbook error, 3 unreachable, 4 host key, 130 interrupted).
int main(int argc, char** argv);

}  // namespace ratchet::cli
