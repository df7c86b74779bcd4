#pragma once
// A TOML value as data: what vars hold and what templates render to.
#include <nlohmann/json.hpp>

namespace ratchet::playbook {

/// A TOML value as data (string, integer, float, boolean, array, table).
using Value = nlohmann::json;

}  // namespace ratchet::playbook
