#pragma once
// Loads and validates playbooks and inventories (docs/playbook.md). Only this
// module reads TOML with toml++ (util/value.cc quotes strings with it too).
// Nothing connects before these return success.
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
/// appends every error found (not only the first) to *errors. With `partial`,
/// *partial receives the playbook as far as it could be read even when it had
/// errors (left as is when the file is unreadable or not TOML), so that later
/// checks (check_references, check_extra_vars) can report theirs in the same pass.
std::optional<Playbook> load_playbook(const std::string& path, const LoadOptions& opt,
                                      std::vector<LoadError>* errors, Playbook* partial = nullptr);

/// Reads and validates an inventory file (docs/playbook.md, "Inventory").
std::optional<Inventory> load_inventory(const std::string& path, std::vector<LoadError>* errors);

/// Checks every template reference of `pb` against its vars, secrets, built-ins,
/// earlier step ids / register names, and the vars of the hosts in `inv` (a var
/// defined only for some hosts passes here and fails at render for the others).
/// With `unchecked` and no inventory at all (neither `inv` nor the playbook's
/// own), a variable that no playbook var, secret or -e defines may still be a
/// host or group var: its name goes to *unchecked (once, in order) instead of
/// being an error.
void check_references(const Playbook& pb, const Inventory* inv, std::vector<LoadError>* errors,
                      std::vector<std::string>* unchecked = nullptr);

/// -e NAME=VALUE for a NAME that nothing defines or uses is an error at "-e",
/// with a "did you mean": no playbook var (in the file), host or group var of
/// `inv` (or the playbook's own inventory), secret or --secret has that name,
/// and no template (step fields, `when`, a write step's template file) uses it.
void check_extra_vars(const Playbook& pb, const Inventory* inv, const LoadOptions& opt,
                      std::vector<LoadError>* errors);

/// Orders errors for reading: those in `file` first, by line and column, then
/// the rest (the inventory's, -e) in the order found.
void order_errors(std::vector<LoadError>* errors, const std::string& file);

}  // namespace ratchet::playbook
