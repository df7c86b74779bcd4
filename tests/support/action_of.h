#pragma once
// Test helper: an Action read from a table as the loader reads one
// (playbook::check_table), for tests that build steps without a TOML file.
#include <stdexcept>

#include "playbook/schema.h"

namespace ratchet::testing {

/// The action `t` (which names its `kind`) reads into; throws std::runtime_error
/// with the schema's first problem when the loader would refuse it.
inline playbook::Action action_of(playbook::Value t) {
  playbook::Action a;
  a.kind = playbook::parse_kind(t["kind"].is_string() ? t["kind"].as_string() : "");
  auto problems = playbook::check_table(playbook::TableRole::step, t, &a.keys);
  if (!problems.empty()) throw std::runtime_error(problems[0].key + ": " + problems[0].message);
  if (a.kind)
    for (const auto& f : playbook::kind_spec(*a.kind).fields)
      if (playbook::FieldBase& b = f.field(a.keys); b.given) a.pos[f.name] = b.pos = {"test.toml", 1, 1};
  return a;
}

}  // namespace ratchet::testing
