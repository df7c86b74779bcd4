// `ratchet schema`: the JSON Schema an editor checks playbooks and inventories with (docs/editors.md).
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "playbook/json_schema.h"

namespace ratchet::cli {

int cmd_schema(const std::string& which) {
  auto j = which == "inventory" ? playbook::inventory_json_schema()
           : which == "piece"   ? playbook::piece_json_schema()
                                : playbook::playbook_json_schema();
  std::cout << j.dump(2) << "\n";
  return kExitOk;
}

}  // namespace ratchet::cli
