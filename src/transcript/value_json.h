#pragma once
// How a util::Value is written as JSON and read back: the one mapping the
// transcript and the plan file's codec use (a table is an object, null is null).
#include <nlohmann/json.hpp>

#include "util/value.h"

namespace ratchet::transcript {

/// `v` as JSON. Never throws.
nlohmann::json to_json(const util::Value& v);

/// `j` as a Value. An unsigned integer above INT64_MAX becomes a float; never throws.
util::Value from_json(const nlohmann::json& j);

}  // namespace ratchet::transcript
