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
constexpr Member kMembers[] = {{"name", &Owner::name},       {"scope", &Owner::scope},
                               {"user", &Owner::user},       {"restart", &Owner::restart},
                               {"id", &Owner::id},           {"pod", &Owner::pod}};

}  // namespace

std::optional<Owner> parse_owner(std::string_view field) {
  Owner o;
  if (field == "-") return o;  // kind none
  bool kind = false;
  while (!field.empty()) {
    size_t end = field.find(' ');
    std::string_view word = field.substr(0, end);
    field = end == std::string_view::npos ? std::string_view() : field.substr(end + 1);
    if (word.empty()) continue;
    size_t eq = word.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    std::string_view key = word.substr(0, eq);
    if (key == "kind") {
      auto k = util::parse_owner_kind(word.substr(eq + 1));
      if (!k || *k == OwnerKind::none) return std::nullopt;  // none is "-" only
      o.kind = *k;
      kind = true;
      continue;
    }
    for (const auto& m : kMembers)
      if (key == m.key) o.*m.field = decode_file(word.substr(eq + 1));  // other keys: a later library's, skipped
  }
  if (!kind) return std::nullopt;
  return o;
}

bool restarts(const Owner& o) {
  switch (o.kind) {
    case OwnerKind::pod: return true;
    case OwnerKind::container: return o.restart != "no";
    case OwnerKind::unit: return !o.restart.empty() && o.restart != "no";
    case OwnerKind::none:
    case OwnerKind::unknown:
    case OwnerKind::session:
    case OwnerKind::cgroup: return false;
  }
  return false;
}

std::string describe(const Owner& o) { return util::owner_words(to_value(o)); }

util::Value to_value(const Owner& o) {
  util::Value v = util::Value::table();
  v["kind"] = std::string(util::name(o.kind));
  for (const auto& m : kMembers)
    if (!(o.*m.field).empty()) v[m.key] = o.*m.field;
  if (o.kind == OwnerKind::unit) v["unit"] = o.name;
  v["restarts"] = restarts(o);
  return v;
}

std::optional<Owner> owner_from(const util::Value& v) {
  if (!v.is_table()) return std::nullopt;
  Owner o;
  for (const auto& [key, val] : v.as_table()) {
    if (key == "kind") {
      auto k = val.is_string() ? util::parse_owner_kind(val.as_string()) : std::nullopt;
      if (!k) return std::nullopt;
      o.kind = *k;
      continue;
    }
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
  if (to_value(o) != v) return std::nullopt;  // no kind, or derived members that do not match
  return o;
}

}  // namespace ratchet::steps
