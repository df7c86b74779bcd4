#pragma once
// Builds the plan `plan`, `run` and `apply` use from what the command line loaded.
#include <optional>

#include "cli/options.h"
#include "plan/plan.h"

namespace ratchet::cli {

/// The plan of every host of L: each step rendered (dry secrets), each
/// endpoint resolved through ssh config with the keys known_hosts lists for
/// it, and the provenance (files with sha256, selection, who, when).
/// Connects to nothing. Prints every error to stderr and returns nullopt (exit 2).
std::optional<plan::Plan> make_plan(const Loaded& L, const Options& o);

/// Who runs ratchet from where: "user@host" (the login user and host name; "unknown" for either not found).
std::string who_here();

/// `path` absolute and normalised (unchanged when it is "" or cannot be made absolute).
std::string absolute_path(const std::string& path);

/// Which file of P's sources (or `also`, e.g. the plan file being applied) an
/// output at `path` would overwrite: "the playbook /x/pb.toml" or "" for none.
/// Compares device and inode when both exist, else absolute paths.
std::string clobbered_source(const plan::Plan& P, const std::string& path, const std::string& also = "");

}  // namespace ratchet::cli
