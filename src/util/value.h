#pragma once
// A value as data, the shapes a TOML file holds: null (absent), a boolean, an
// integer, a float, a string, an array or a table. Vars, the template scope and
// per-GPU evidence are Values; JSON is how the plan file and the transcript
// write one, and how a template renders a table (transcript/value_json.h).

#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace ratchet::util {

class Value {
 public:
  enum class Type { null, boolean, integer, floating, string, array, table };
  using Array = std::vector<Value>;
  using Table = std::map<std::string, Value, std::less<>>;  ///< sorted by key

  Value() = default;  ///< null
  Value(std::nullptr_t) {}
  Value(bool b) : v_(b) {}
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Value(I i) : v_(static_cast<long long>(i)) {}
  Value(double d) : v_(d) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(Array a) : v_(std::move(a)) {}
  Value(Table t) : v_(std::move(t)) {}
  /// A brace list, read as JSON libraries read one: a table when every element
  /// is a two-element array whose first is a string ({{"pid", 42}, {"user",
  /// "root"}}), else an array. So Value{"x"} is an array: write Value("x").
  Value(std::initializer_list<Value> items);

  /// An array / a table of the given elements: Value::table({{"pid", 42}}).
  static Value array(std::initializer_list<Value> items = {}) { return Value(Array(items)); }
  static Value table(std::initializer_list<std::pair<const std::string, Value>> items = {}) {
    return Value(Table(items));
  }

  Type type() const { return static_cast<Type>(v_.index()); }
  bool is_null() const { return type() == Type::null; }
  bool is_bool() const { return type() == Type::boolean; }
  bool is_int() const { return type() == Type::integer; }
  bool is_float() const { return type() == Type::floating; }
  bool is_number() const { return is_int() || is_float(); }
  bool is_string() const { return type() == Type::string; }
  bool is_array() const { return type() == Type::array; }
  bool is_table() const { return type() == Type::table; }

  // The value as its type. Each throws std::logic_error when the value is of
  // another type (a programming error: callers check the type first).
  bool as_bool() const;
  long long as_int() const;
  double as_float() const;  ///< a float, or an integer converted
  const std::string& as_string() const;
  const Array& as_array() const;
  Array& as_array();
  const Table& as_table() const;
  Table& as_table();

  /// The element under `key`; nullptr when absent or this is not a table.
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  /// The element under `key`, made (null) when absent; a null becomes a table
  /// first. Throws std::logic_error when this is neither null nor a table.
  Value& operator[](std::string_view key);
  /// The element under `key`, or a null when absent or this is not a table.
  const Value& operator[](std::string_view key) const;
  /// Appends to an array; a null becomes an array first. Throws
  /// std::logic_error when this is neither null nor an array.
  void push_back(Value v);
  /// The element at `i` of an array; a null when out of range or this is not an array.
  const Value& operator[](size_t i) const;
  /// The element at `i` of an array. Throws std::logic_error when this is not an
  /// array or `i` is out of range.
  Value& operator[](size_t i);
  /// An array's elements; any other value as the one element (a copy).
  Array as_list() const { return is_array() ? as_array() : Array{*this}; }
  /// Sets each key of table `other` here (this becomes a table when null); no-op
  /// when `other` is not a table. Throws std::logic_error when this is neither null nor a table.
  void merge(const Value& other);
  /// Removes the element under `key` of a table; no-op otherwise.
  void erase(std::string_view key);
  /// Elements of an array or a table; 0 for anything else.
  size_t size() const;
  bool empty() const { return size() == 0; }

  bool operator==(const Value&) const = default;

 private:
  std::variant<std::monostate, bool, long long, double, std::string, Array, Table> v_;
};

/// The value as TOML writes it, on one line (`"x"`, `42`, `["a", 1]`,
/// `{ k = true }`; null is "nothing"), for messages.
std::string toml_text(const Value& v);

}  // namespace ratchet::util
