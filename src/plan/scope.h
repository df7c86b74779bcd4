#pragma once
// The template scope of one host (docs/playbook.md, "Templates").
#include <string>
#include <vector>

#include "playbook/model.h"

namespace ratchet::plan {

/// Facts about this run that templates may use (run.id, run.started).
struct RunInfo {
  std::string id;       ///< e.g. "20261130T042537Z-4f2a"
  std::string started;  ///< UTC RFC 3339
};

/// Vars (playbook < group vars < host vars < -e names in `extra_keys`, whose
/// values the loader already put in pb.vars), secret values, and the built-ins
/// host.*, playbook.*, ratchet.*; run.* only when `run` is given (a dry run
/// leaves it out so it renders as a placeholder). `secrets` maps name → value.
playbook::Value host_scope(const playbook::Playbook& pb, const playbook::Inventory* inv,
                           const playbook::Host& host, const std::vector<std::string>& extra_keys,
                           const playbook::Value& secrets, const RunInfo* run);

}  // namespace ratchet::plan
