#pragma once
// A step's `when`: "NAME" or "not NAME", NAME a boolean var (docs/playbook.md).
#include <string>

#include "playbook/model.h"

namespace ratchet::playbook {

/// Evaluates `when` against `scope` (the host's template scope) into *out.
/// Returns false with *err when the var is missing or not a boolean.
bool eval_when(const std::string& when, const Value& scope, bool* out, std::string* err);

}  // namespace ratchet::playbook
