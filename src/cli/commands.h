#pragma once
// One function per subcommand; each returns the process exit code.
#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "cli/options.h"
#include "plan/plan.h"
#include "run/exit.h"

namespace ratchet::cli {

/// `ratchet run`: plan every host (exit 2 on any error, nothing connected),
/// then run and record the transcript.
int cmd_run(const Options& o, const std::vector<std::string>& argv);
/// `ratchet plan`: the dry run; connects to nothing. With --out, also saves
/// the plan (docs/plan.md) and prints its digest.
int cmd_plan(const Options& o);
/// `ratchet plan --probe`: the plan, then each host's checks run once
/// (read-only); 0 every host probed, 1 a check could not run, 3 unreachable, 4 host key.
int cmd_probe(const Options& o, const std::vector<std::string>& argv);

using run::exit_code_for;
using run::exit_name;

/// The saved plan `apply` executes, for run_start's "plan".
struct AppliedPlan {
  std::string path;
  std::string digest;
};

/// Runs plan P (made from `L`) on its hosts and records the transcript: what
/// `run` and `apply` share. `applied`: the saved plan it came from, or null.
/// Returns the exit code (README.md, "Exit codes").
int execute_plan(const Loaded& L, const plan::Plan& P, const Options& o, const std::vector<std::string>& argv,
                 const AppliedPlan* applied, std::chrono::steady_clock::time_point wall0);

struct ApplyOptions {
  Options base;             ///< --limit, -e/--secret (secrets only), -K..., --transcript, --json, --forks, ...
  std::string file;         ///< the plan file
  std::string expect_digest;  ///< the approved digest (with or without "sha256:")
  bool expect_digest_given = false;  ///< --expect-digest was given (an empty value is an error, never "unchecked")
  std::string max_age = "24h";
  /// A probed plan: run even when the probe apply makes first finds changes.
  bool yes = false;
};
/// `ratchet apply FILE`: checks the saved plan against the files it was made
/// from (exit 2 naming each difference, before connecting anywhere); a plan
/// saved with a probe's findings is probed again, and what changed since stops
/// it (exit 1, nothing run) unless --yes; then executes it as `run` would.
int cmd_apply(const ApplyOptions& a, const std::vector<std::string>& argv);
/// `ratchet hosts`: the selected hosts with their effective address, port,
/// user, jump and identity (ssh config applied); connects to nothing.
int cmd_hosts(const Options& o, bool json);
/// `ratchet validate`: load, check references and render every step; 0 or 2.
int cmd_validate(const Options& o);

struct ShowOptions {
  std::string path, host, step;
  bool json = false;
  bool follow = false;  ///< --follow: render the last run as it is written
  bool verify = false;  ///< --verify: check the hash chain
  std::string digest;   ///< --digest: with --verify, a digest kept elsewhere
  bool digest_given = false;
  std::string allowed_signers;  ///< --allowed-signers FILE: with --verify, check TRANSCRIPT.sig too
  std::string signer;           ///< --signer ID: the principal required ("" = the one the file names)
};
/// `ratchet show`: the transcript for a person (or filtered JSON Lines).
/// --verify: 0 when every run's chain is intact (and --digest is one of its
/// digests), else 1 naming the first line that does not fit. --follow: the
/// run's own exit code at its run_end, 130 on ^C.
int cmd_show(const ShowOptions& o);

struct ReportOptions {
  std::string path;    ///< the transcript
  std::string out;     ///< -o FILE
  std::string run_id;  ///< --run ID ("" = the file's last run)
  std::string allowed_signers;  ///< --allowed-signers FILE: check the run's signature (else it is only shown)
  std::string signer;           ///< --signer ID: the principal required
};
/// `ratchet report TRANSCRIPT -o FILE`: the run as one self-contained HTML file
/// (mode 0600, written atomically). 0 written (also for a cut run), 1 the file
/// holds no complete event, 2 a usage error or a file that cannot be read or written.
int cmd_report(const ReportOptions& o);
/// For `run`/`apply --report FILE` before anything runs: "" when the report can be
/// made from the transcript at `transcript`, else why not (a usage error's message).
std::string report_option_problem(const std::string& report, const std::string& transcript);
/// After the run: the report of run `run_id` of `transcript` written to `report`;
/// prints what it wrote on `human`, or the error on stderr and returns false.
bool write_run_report(const std::string& report, const std::string& transcript, const std::string& run_id,
                      std::ostream& human);

struct ExecOptions {
  Options base;            ///< -i, --target, --limit, --forks, --json, --transcript, --lock, ...
  std::string targets;     ///< TARGETS: host and group names (comma-separated) or [user@]host[:port]
  std::vector<std::string> command;
  std::string timeout = "60s";
  TargetDefaults defaults;  ///< --user, --port, --identity for ad hoc hosts
};
/// `ratchet exec TARGETS -- COMMAND`: one ad hoc command on each host. One
/// host: its exit status is ours. Several: 0 when every command exited 0,
/// else as `run` (1, 3, 4, 130).
int cmd_exec(const ExecOptions& o);

/// `ratchet schema [playbook|inventory]`: prints that file's JSON Schema (draft 7) on stdout; 0.
int cmd_schema(const std::string& which);

}  // namespace ratchet::cli
