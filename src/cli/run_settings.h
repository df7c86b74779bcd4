#pragma once
// The run options of the command line, typed for src/run/ (run/request.h).
#include <string>
#include <vector>

#include "cli/options.h"
#include "plan/plan.h"
#include "run/request.h"

namespace ratchet::cli {

/// The settings `o` gives every kind of run: argv, forks, the endpoint of a
/// host (-F, --known-hosts, ...), the -e values of --secret names, the become
/// password's source (-K, --become-password-file/-env), --lock, --break-lock,
/// --artifacts. Durations and the transcript are the caller's to set.
run::Settings settings_of(const Options& o, const std::vector<std::string>& argv);

/// `run`/`apply`: --reconnect-timeout and --lock-wait into s, and whether a
/// lock is there for --lock-wait/--break-lock to act on. false after printing the usage error.
bool parse_run_options(const Options& o, const plan::Plan& P, run::Settings* s);

/// `run`/`apply`: "" when the transcript and --report files may be written
/// (neither is one of P's sources or `plan_file`; the report can be made),
/// else the usage error's message.
std::string outputs_problem(const Options& o, const plan::Plan& P, const std::string& transcript,
                            const std::string& plan_file);

}  // namespace ratchet::cli
