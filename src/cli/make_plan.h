#pragma once
// Builds the plan `plan`, `run` and `apply` use from what the command line loaded.
#include <optional>

#include "cli/options.h"
#include "plan/plan.h"

namespace ratchet::cli {

/// The plan of every host of L as the options select (plan/make.h): each step
/// rendered (dry secrets), each endpoint resolved, the provenance. Connects to
/// nothing. Prints every error to stderr and returns nullopt (exit 2).
std::optional<plan::Plan> make_plan(const Loaded& L, const Options& o);

/// Which file of P's sources (or `also`, e.g. the plan file being applied) an
/// output at `path` would overwrite: "the playbook /x/pb.toml" or "" for none.
/// Compares device and inode when both exist, else absolute paths.
std::string clobbered_source(const plan::Plan& P, const std::string& path, const std::string& also = "");

/// `--out`: writes P as a plan file (docs/plan.md) to o.out, mode 0600,
/// atomically (a temp file renamed), and prints where and its digest (on
/// stderr with --json). Returns 0, or 2 after printing why it could not.
int save_plan(const plan::Plan& P, const Options& o);

/// The transcript a run of playbook `name` started at `stamp` (util::file_stamp)
/// writes without --transcript: "transcripts/NAME-STAMP.jsonl", NAME cut to
/// letters, digits, '-', '_' and '.' (no leading '.'), so "../x" stays inside.
std::string default_transcript(const std::string& name, const std::string& stamp);

}  // namespace ratchet::cli
