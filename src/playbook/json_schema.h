#pragma once
// `ratchet schema`: the JSON Schema (draft 7) of playbooks and inventories,
// written from the loader's own tables (schema.h, key_rules.h, util/rules.h),
// so an editor (taplo, Even Better TOML) holds a file to the rules the loader
// does. docs/editors.md says how to use it and what it cannot express.
#include <nlohmann/json.hpp>

namespace ratchet::playbook {

/// The schema of a playbook file (its [inventory] table included).
nlohmann::json playbook_json_schema();

/// The schema of an included file (a piece: [vars] and [[step]] only).
nlohmann::json piece_json_schema();

/// The schema of an inventory file.
nlohmann::json inventory_json_schema();

}  // namespace ratchet::playbook
