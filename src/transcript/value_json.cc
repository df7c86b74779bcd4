#include "transcript/value_json.h"

namespace ratchet::transcript {

nlohmann::json to_json(const util::Value& v) {
  using T = util::Value::Type;
  switch (v.type()) {
    case T::null:
      return nullptr;
    case T::boolean:
      return v.as_bool();
    case T::integer:
      return v.as_int();
    case T::floating:
      return v.as_float();
    case T::string:
      return v.as_string();
    case T::array: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& e : v.as_array()) out.push_back(to_json(e));
      return out;
    }
    case T::table: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [k, e] : v.as_table()) out[k] = to_json(e);
      return out;
    }
  }
  return nullptr;
}

util::Value from_json(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::boolean:
      return j.get<bool>();
    case nlohmann::json::value_t::number_integer:
      return j.get<long long>();
    case nlohmann::json::value_t::number_unsigned: {
      auto u = j.get<unsigned long long>();
      if (u <= static_cast<unsigned long long>(INT64_MAX)) return static_cast<long long>(u);
      return static_cast<double>(u);
    }
    case nlohmann::json::value_t::number_float:
      return j.get<double>();
    case nlohmann::json::value_t::string:
      return j.get<std::string>();
    case nlohmann::json::value_t::array: {
      util::Value out = util::Value::array();
      for (const auto& e : j) out.push_back(from_json(e));
      return out;
    }
    case nlohmann::json::value_t::object: {
      util::Value out = util::Value::table();
      for (const auto& [k, e] : j.items()) out[k] = from_json(e);
      return out;
    }
    default:
      return {};
  }
}

}  // namespace ratchet::transcript
