#pragma once
// The run lock and the audit line of a host (docs/playbook.md, "Lock and
// audit"): `lock`, `lock_path` and `audit_log`, written at the playbook's top
// level or on an inventory host (the host's win).
#include <optional>
#include <string>
#include <string_view>

#include "playbook/value.h"

namespace ratchet::playbook {

inline constexpr char kDefaultLockPath[] = "/run/lock/ratchet.lock";
inline constexpr char kDefaultAuditLog[] = "/var/log/ratchet/runs.log";

/// The keys as written (unset = not written there).
struct GuardKeys {
  std::optional<bool> lock;
  std::optional<std::string> lock_path;
  std::optional<std::string> audit_log;  ///< "" = `audit_log = false`
};

/// What holds on one host: the host's keys over the playbook's over the defaults.
struct Guards {
  bool lock = false;
  std::string lock_path = kDefaultLockPath;
  std::string audit_log = kDefaultAuditLog;  ///< "" = no audit line
};

/// Whether `key` is one of the three.
bool is_guard_key(std::string_view key);

/// Reads `key` = `v` into *out; "" when it fits, else the error (a wrong type,
/// a path that is not absolute or holds a control character).
std::string read_guard_key(std::string_view key, const Value& v, GuardKeys* out);

/// `host`'s keys over `playbook`'s over the defaults.
Guards resolve_guards(const GuardKeys& playbook, const GuardKeys& host);

}  // namespace ratchet::playbook
