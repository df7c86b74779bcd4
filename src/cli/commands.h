#pragma once
// One function per subcommand; each returns the process exit code.
#include <string>
#include <vector>

#include "cli/options.h"

namespace ratchet::cli {

/// `ratchet run`: plan every host (exit 2 on any error, nothing connected),
/// then run and record the transcript.
int cmd_run(const Options& o, const std::vector<std::string>& argv);
/// `ratchet plan`: the dry run; connects to nothing.
int cmd_plan(const Options& o);
/// `ratchet hosts`: the selected hosts with their effective address, port,
/// user, jump and identity (ssh config applied); connects to nothing.
int cmd_hosts(const Options& o, bool json);
/// `ratchet validate`: load, check references and render every step; 0 or 2.
int cmd_validate(const Options& o);

struct ShowOptions {
  std::string path, host, step;
  bool json = false;
};
/// `ratchet show`: the transcript for a person (or filtered JSON Lines).
int cmd_show(const ShowOptions& o);

struct ExecOptions {
  Options base;
  std::string host;
  std::vector<std::string> command;
  std::string timeout = "60s";
};
/// `ratchet exec HOST -- COMMAND`: one ad hoc command; its exit status is ours.
int cmd_exec(const ExecOptions& o);

}  // namespace ratchet::cli
