#pragma once
// Pieces of the loader shared between its .cc files. Internal to the module.
#include <optional>
#include <string>
#include <vector>

#include "playbook/doc.h"
#include "playbook/loader.h"
#include "playbook/model.h"

namespace ratchet::playbook {

/// Reads [defaults] and the [[step]] array of `doc` into steps: kinds, keys and
/// types checked, defaults applied, ids derived and unique. Errors are appended.
std::vector<Step> read_steps(const Doc& doc, std::vector<LoadError>* errors);

/// Reads the inventory table at `at` of `doc` (root for an inventory file,
/// "/inventory" in a playbook). Returns nullopt when it had errors (appended).
std::optional<Inventory> read_inventory(const Doc& doc, const DocPath& at,
                                        std::vector<LoadError>* errors);

/// Load-time checks of every template in every step field: syntax, templates
/// inside quotes in shell fields, secrets outside `stdin`/`content`.
void check_step_templates(const Playbook& pb, std::vector<LoadError>* errors);

}  // namespace ratchet::playbook
