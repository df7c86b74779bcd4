#pragma once
// What a probe reads of a command's words: the paths, units and PID files it
// names, so a step that checks what an earlier would-act step changes is
// marked `depends on` (docs/plan.md#probe). Word-level, not a shell parser.
#include <set>
#include <string>
#include <vector>

#include "steps/action.h"

namespace ratchet::engine {

/// The words of a command as sh would split them (quotes removed), with
/// `$(`, `)`, backquotes and redirections as separators too; enough for the
/// quoting util::shell_quote writes and for the paths a command names.
std::vector<std::string> command_words(const std::string& s);

/// What a command names that another step could change: path-like words
/// (a '/' or a '.'), every word after `--`, and a service check's unit.
std::set<std::string> resources(const steps::Command& c);

/// Whether two resources overlap: equal, one a glob matching the other, or one a directory of the other.
bool overlap(const std::string& a, const std::string& b);

}  // namespace ratchet::engine
