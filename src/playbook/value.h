#pragma once
// A TOML value as data: what vars hold and what templates render to.
#include "util/value.h"

namespace ratchet::playbook {

/// A TOML value as data (string, integer, float, boolean, array, table).
using Value = util::Value;

}  // namespace ratchet::playbook
