#pragma once
// The hosts `ratchet exec` runs on: TARGETS (inventory hosts and groups, or ad
// hoc [user@]host[:port]) or --target, narrowed by --limit.
#include <string>
#include <vector>

#include "cli/commands.h"
#include "playbook/model.h"

namespace ratchet::cli {

struct ExecHosts {
  std::vector<playbook::Host> hosts;  ///< inventory order, then the ad hoc ones; no duplicates
  /// One host named as such (an inventory host, or one ad hoc target): exec
  /// behaves like ssh (output as is, its exit status). A group or a list is
  /// never single, even of one host.
  bool single = false;
};

/// Resolves o.targets (comma-separated) or o.base.target into *out, with
/// o.defaults filling the ad hoc hosts' user, port and identity. Returns 0, or
/// prints the usage or inventory error and returns 2 (nothing connected).
int exec_hosts(const ExecOptions& o, ExecHosts* out);

}  // namespace ratchet::cli
