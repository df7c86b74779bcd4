#include "util/value.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cctype>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace ratchet::util {
namespace {

[[noreturn]] void wrong_type(const char* want) {
  throw std::logic_error(std::string("util::Value: not ") + want);
}

// A string as a TOML basic string ("..."), escaped by toml++ itself.
std::string quoted(const std::string& s) {
  std::ostringstream os;
  toml::value<std::string> v(s);
  os << toml::toml_formatter(v, toml::format_flags::none);
  return os.str();
}

bool bare_key(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

}  // namespace

Value::Value(std::initializer_list<Value> items) {
  bool table = items.size() > 0;
  for (const auto& e : items) table = table && e.is_array() && e.size() == 2 && e[size_t{0}].is_string();
  if (!table) {
    v_ = Array(items);
    return;
  }
  Table t;
  for (const auto& e : items) t.insert_or_assign(e[size_t{0}].as_string(), e[size_t{1}]);
  v_ = std::move(t);
}

bool Value::as_bool() const {
  if (auto* b = std::get_if<bool>(&v_)) return *b;
  wrong_type("a boolean");
}

long long Value::as_int() const {
  if (auto* i = std::get_if<long long>(&v_)) return *i;
  wrong_type("an integer");
}

double Value::as_float() const {
  if (auto* d = std::get_if<double>(&v_)) return *d;
  if (auto* i = std::get_if<long long>(&v_)) return static_cast<double>(*i);
  wrong_type("a number");
}

const std::string& Value::as_string() const {
  if (auto* s = std::get_if<std::string>(&v_)) return *s;
  wrong_type("a string");
}

const Value::Array& Value::as_array() const {
  if (auto* a = std::get_if<Array>(&v_)) return *a;
  wrong_type("an array");
}

// The non-const accessors are the const ones on a value this function may change.
Value::Array& Value::as_array() { return const_cast<Array&>(std::as_const(*this).as_array()); }

const Value::Table& Value::as_table() const {
  if (auto* t = std::get_if<Table>(&v_)) return *t;
  wrong_type("a table");
}

Value::Table& Value::as_table() { return const_cast<Table&>(std::as_const(*this).as_table()); }

const Value* Value::find(std::string_view key) const {
  auto* t = std::get_if<Table>(&v_);
  if (!t) return nullptr;
  auto it = t->find(key);
  return it == t->end() ? nullptr : &it->second;
}

Value* Value::find(std::string_view key) { return const_cast<Value*>(std::as_const(*this).find(key)); }

Value& Value::operator[](std::string_view key) {
  if (is_null()) v_ = Table{};
  Table& t = as_table();
  auto it = t.find(key);
  if (it == t.end()) it = t.emplace(std::string(key), Value()).first;
  return it->second;
}

const Value& Value::operator[](std::string_view key) const {
  static const Value null;
  const Value* v = find(key);
  return v ? *v : null;
}

const Value& Value::operator[](size_t i) const {
  static const Value null;
  auto* a = std::get_if<Array>(&v_);
  return a && i < a->size() ? (*a)[i] : null;
}

void Value::merge(const Value& other) {
  if (!other.is_table()) return;
  for (const auto& [k, v] : other.as_table()) (*this)[k] = v;
}

Value& Value::operator[](size_t i) {
  Array& a = as_array();
  if (i >= a.size()) throw std::logic_error("util::Value: index out of range");
  return a[i];
}

void Value::erase(std::string_view key) {
  if (auto* t = std::get_if<Table>(&v_)) {
    auto it = t->find(key);
    if (it != t->end()) t->erase(it);
  }
}

void Value::push_back(Value v) {
  if (is_null()) v_ = Array{};
  as_array().push_back(std::move(v));
}

size_t Value::size() const {
  if (auto* a = std::get_if<Array>(&v_)) return a->size();
  if (auto* t = std::get_if<Table>(&v_)) return t->size();
  return 0;
}

std::string toml_text(const Value& v) {
  switch (v.type()) {
    case Value::Type::null:
      return "nothing";
    case Value::Type::boolean:
      return v.as_bool() ? "true" : "false";
    case Value::Type::integer:
      return std::to_string(v.as_int());
    case Value::Type::floating: {
      double d = v.as_float();
      if (std::isnan(d)) return "nan";
      if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
      std::string s = fmt::format("{}", d);
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";  // TOML writes 3.0
      return s;
    }
    case Value::Type::string:
      return quoted(v.as_string());
    case Value::Type::array: {
      std::string out = "[";
      for (const auto& e : v.as_array()) out += (out.size() > 1 ? ", " : "") + toml_text(e);
      return out + "]";
    }
    case Value::Type::table: {
      if (v.empty()) return "{}";
      std::string out = "{ ";
      bool first = true;
      for (const auto& [k, e] : v.as_table()) {
        out += (first ? "" : ", ") + (bare_key(k) ? k : quoted(k)) + " = " + toml_text(e);
        first = false;
      }
      return out + " }";
    }
  }
  return "";
}

}  // namespace ratchet::util
