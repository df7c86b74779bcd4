#pragma once
// Loads and validates playbooks and inventories (design.md §2–3). Only this
// module includes toml++. Nothing connects before these return success.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "playbook/model.h"

namespace ratchet::playbook {

/// One problem found while loading. Every error names a position.
struct LoadError {
  SourcePos pos;
  std::string message;      ///< "unknown key `pidfile` in step `kill_server`"
  std::string hint;         ///< "did you mean `pid_file`?" ("" = none)
  std::string source_line;  ///< the offending line of the file, for the caret
};

/// "file:line:col: error: message (hint)" then the source line and a caret
/// under the column, as ninja prints parse errors.
std::string format_error(const LoadError& e);

struct LoadOptions {
  /// -e key=value, in command-line order; the value is read as a TOML value
  /// (42, true, ["a","b"]), else taken as a string. Last wins; beats all vars.
  std::vector<std::pair<std::string, std::string>> extra_vars;
  /// --secret NAME: the -e NAME=VALUE of that name is a secret, not a var. Its
  /// raw text (never read as TOML) becomes Playbook::extra_secrets[NAME] with
  /// source "-e", usable and masked like a [secrets] entry. A name with no -e is
  /// a load error.
  std::vector<std::string> secret_vars;
};

/// Reads, parses and validates a playbook. On failure returns nullopt and
/// appends every error found (not only the first) to *errors.
std::optional<Playbook> load_playbook(const std::string& path, const LoadOptions& opt,
                                      std::vector<LoadError>* errors);

/// Reads and validates an inventory file (design.md §3).
std::optional<Inventory> load_inventory(const std::string& path, std::vector<LoadError>* errors);

/// Checks every template reference of `pb` against its vars, secrets, built-ins,
/// earlier step ids / register names, and the vars of the hosts in `inv` (a var
/// defined only for some hosts passes here and fails at render for the others).
void check_references(const Playbook& pb, const Inventory* inv, std::vector<LoadError>* errors);

}  // namespace ratchet::playbook
