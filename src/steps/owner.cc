#include "steps/owner.h"

#include <fmt/format.h>

#include "steps/holders.h"
#include "util/owner_words.h"

namespace ratchet::steps {

namespace {

// The members to_value writes from the fields (unit and restarts are derived).
struct Member {
  const char* key;
  std::string Owner::*field;
};
constexpr Member kMembers[] = {{"kind", &Owner::kind},       {"name", &Owner::name},
                               {"scope", &Owner::scope},     {"user", &Owner::user},
                               {"restart", &Owner::restart}, {"id", &Owner::id}};

}  // namespace

std::optional<Owner> parse_owner(std::string_view field) {
  Owner o;
  if (field == "-") {
    o.kind = "none";
    return o;
  }
  while (!field.empty()) {
    size_t end = field.find(' ');
    std::string_view word = field.substr(0, end);
    field = end == std::string_view::npos ? std::string_view() : field.substr(end + 1);
    if (word.empty()) continue;
    size_t eq = word.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    std::string_view key = word.substr(0, eq);
    for (const auto& m : kMembers)
      if (key == m.key) o.*m.field = decode_file(word.substr(eq + 1));  // other keys: a later library's, skipped
  }
  if (o.kind.empty()) return std::nullopt;
  return o;
}

bool restarts(const Owner& o) {
  if (o.kind == "pod") return true;
  if (o.kind == "container") return o.restart != "no";
  if (o.kind == "unit") return !o.restart.empty() && o.restart != "no";
  return false;
}

std::string describe(const Owner& o) { return util::owner_words(to_value(o)); }

util::Value to_value(const Owner& o) {
  util::Value v = util::Value::table();
  for (const auto& m : kMembers)
    if (!(o.*m.field).empty()) v[m.key] = o.*m.field;
  if (o.kind == "unit") v["unit"] = o.name;
  v["restarts"] = restarts(o);
  return v;
}

std::optional<Owner> owner_from(const util::Value& v) {
  if (!v.is_table()) return std::nullopt;
  Owner o;
  for (const auto& [key, val] : v.as_table()) {
    bool known = false;
    for (const auto& m : kMembers)
      if (key == m.key) {
        if (!val.is_string() || val.as_string().empty()) return std::nullopt;
        o.*m.field = val.as_string();
        known = true;
      }
    if (key == "unit" || key == "restarts") continue;  // derived: checked below
    if (!known) return std::nullopt;
  }
  if (o.kind.empty() || to_value(o) != v) return std::nullopt;
  return o;
}

}  // namespace ratchet::steps
