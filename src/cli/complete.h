#pragma once
// `ratchet __complete WORD...`: what the shell completions (packaging/completions/)
// offer, read from the command line's own definition (CLI11) and the files it names.
#include <CLI/CLI.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace ratchet::cli {

/// `words`: the command line after `ratchet`, the last the word being completed
/// ("" for a new one). Writes the candidates that start with it, one a line:
/// subcommands, flags of `app`'s subcommands, option values (IsMember choices;
/// host and group names of `-i FILE` or the playbook's [inventory]; step ids and
/// `tags` of the playbook on the line). A first line ":files" (any file) or
/// ":files EXT" (*.EXT and directories) asks the shell for file names too. Returns 0.
int complete(CLI::App& app, const std::vector<std::string>& words, std::ostream& out);

}  // namespace ratchet::cli
