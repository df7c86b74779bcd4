#pragma once
// `validate` without an inventory: what the playbook's own vars decide
// (docs/playbook.md, "Validate").
#include <string>
#include <vector>

#include "playbook/model.h"

namespace ratchet::cli {

/// Renders each templated key of every step and rung whose templates name only
/// the playbook's vars (its [vars], its pieces' and -e's), playbook.* and
/// ratchet.*, and reads it by its key's rule, as a plan does per host. Returns
/// one line per key refused ("pb.toml:12:12: step `kill`: `pid_file` must be
/// absolute, ..."); *unsure gets the vars those keys took from the file and not
/// from -e (`extra_keys`), which an inventory's host or group var would replace.
std::vector<std::string> check_own_vars(const playbook::Playbook& pb, const std::vector<std::string>& extra_keys,
                                        std::vector<std::string>* unsure);

}  // namespace ratchet::cli
