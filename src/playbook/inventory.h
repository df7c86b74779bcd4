#pragma once
// Choosing hosts from an inventory, and the vars a host sees (docs/playbook.md, "Inventory").
#include <string>
#include <vector>

#include "playbook/model.h"

namespace ratchet::playbook {

/// The hosts that `targets` (host or group names; "all" = every host) select,
/// narrowed by `limit` (host or group names, or shell globs matched against host
/// and group names; empty = no narrowing). Inventory file order, no duplicates.
/// On an unknown name (with "did you mean"), a glob that matches nothing, a
/// --limit pattern that selects none of the targets ("--limit `dead` selects no
/// target: dead is in the inventory but not among the targets (gpu)"), or an
/// empty selection returns {} and sets *err.
std::vector<const Host*> resolve_targets(const Inventory& inv,
                                         const std::vector<std::string>& targets,
                                         const std::vector<std::string>& limit, std::string* err);

/// The hosts of group `name`, groups of groups expanded ("all" = every host), in
/// inventory order; {} for an unknown name.
std::vector<const Host*> group_hosts(const Inventory& inv, const std::string& name);

/// The vars `host` sees from the inventory: [group_vars.all], then the vars of
/// the groups that hold it (outermost first, then by name), then its own vars.
/// Later ones replace earlier top-level keys.
Value host_scope_vars(const Inventory& inv, const Host& host);

}  // namespace ratchet::playbook
