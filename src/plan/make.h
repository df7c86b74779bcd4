#pragma once
// Plan assembly: the plan of every selected host, from the loaded model and
// what the command line selected (docs/plan.md). Connects to nothing.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "playbook/model.h"
#include "transport/transport.h"

namespace ratchet::plan {

/// What a plan is made from.
struct MakeInputs {
  const playbook::Playbook* pb = nullptr;
  const playbook::Inventory* inv = nullptr;         ///< null: ad hoc hosts only
  const std::vector<playbook::Host>* hosts = nullptr;  ///< selected, in order
  std::vector<std::string> extra_keys;              ///< the names given with -e
  /// The command line's selection as given: paths (inventory, -F: "" =
  /// ~/.ssh/config, "none" = no config; known_hosts) are made absolute here;
  /// extra_vars holds no -e of a --secret name.
  Selection selection;
  /// Each host's endpoint as a run would connect (ssh config applied by resolve_endpoint).
  std::function<transport::Endpoint(const playbook::Host&)> endpoint;
};

/// Why no plan was made.
struct MakeError {
  enum class Kind {
    selection,  ///< --tags, --step, ... chose nothing valid: a usage error
    render,     ///< a step of a host did not render: lines "MESSAGE (host H)", each error once
    endpoint,   ///< a host's endpoint could not be resolved
  };
  Kind kind = Kind::render;
  std::vector<std::string> lines;
};

/// The plan of every host of `in`: each step rendered (dry secrets), each
/// endpoint resolved through ssh config with the keys known_hosts lists for
/// it, and the provenance (files with sha256, selection, who, when). Reads
/// the inventory and ssh config files to hash them. nullopt with *err set.
std::optional<Plan> make_plan(const MakeInputs& in, MakeError* err);

}  // namespace ratchet::plan
