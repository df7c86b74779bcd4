#pragma once
// One kind key of a step or rung as the playbook wrote it: its typed value when
// known at load, or the {{ }} template each host renders, and where it was written.
#include <optional>
#include <stdexcept>
#include <string>

#include "playbook/source_pos.h"
#include "playbook/value.h"

namespace ratchet::playbook {

/// What every Field shares: whether the key was given, its template, its place.
struct FieldBase {
  bool given = false;              ///< the key is in the table
  std::optional<Value> written;    ///< set = a template: the value as written (a string,
                                   ///< or an array holding one), read once rendered
  SourcePos pos;                   ///< where the value was written
  bool templated() const { return written.has_value(); }
};

/// A key of type T: `value` is set for a literal (read at load) and, after
/// steps::resolve, for a template too. Unset and not given: the kind's default.
template <class T>
struct Field : FieldBase {
  using type = T;
  std::optional<T> value;
  /// The value; throws std::logic_error on a template not yet rendered (a
  /// builder given an unresolved action) or a key not given.
  const T& operator*() const {
    if (!value) throw std::logic_error("field read before it was resolved");
    return *value;
  }
  /// The value, or `fallback` when the key was not given.
  T or_else(T fallback) const { return given ? **this : std::move(fallback); }
};

}  // namespace ratchet::playbook
