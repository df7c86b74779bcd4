#pragma once
// The playbook's `targets` against the inventory that will select from them
// (docs/playbook.md, "Top level"): each name must be a host or group there.
#include <vector>

#include "playbook/loader.h"
#include "playbook/model.h"

namespace ratchet::playbook {

/// Appends an error at file:line:col of each name in pb's `targets` that is no
/// host or group of `inv` ("all" is every host), naming the inventory and the
/// nearest name, if any. False when it appended one.
bool check_targets(const Playbook& pb, const Inventory& inv, std::vector<LoadError>* errors);

}  // namespace ratchet::playbook
