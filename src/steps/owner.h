#pragma once
// Who owns a process, as the host library read it from /proc/PID/cgroup: its
// systemd unit (system or user, with Restart=), container, Kubernetes pod or
// login session. The owner field of a process line (docs/host-library.md).
#include <optional>
#include <string>
#include <string_view>

#include "util/owner_words.h"
#include "util/value.h"

namespace ratchet::steps {

using util::OwnerKind;

struct Owner {
  OwnerKind kind = OwnerKind::none;  ///< none: the root cgroup; unknown: /proc/PID/cgroup unreadable (name: that file)
  std::string name;     ///< unit name (sglang.service), container or pod name ("" = not known)
  std::string scope;    ///< unit: "system" or "user"; container or pod: the runtime (docker, containerd, ...)
  std::string user;     ///< the user of a user unit or login session
  std::string restart;  ///< a unit's Restart= or a container's restart policy; "" = not known
  std::string id;       ///< container id, pod UID, session number
  std::string pod;      ///< a container's pod as its runtime's files say it: "NAMESPACE/NAME" ("" = none, not known)
  bool operator==(const Owner&) const = default;
};

/// Parses an owner field: "-" (kind none), or blank-separated KEY=VALUE words
/// with %-encoded values; nullopt when it has neither shape (no kind, a kind
/// not of OwnerKind, a word without '=').
std::optional<Owner> parse_owner(std::string_view field);

/// True when something brings a killed process back: a unit whose Restart= is
/// known and not "no", a container whose restart policy is not "no" (unknown
/// counts: it may), a pod. False for unknown (the owner could not be read).
bool restarts(const Owner& o);

/// The owner in words: "unit sglang.service (Restart=always)", "user unit
/// a.service of alice", "container web (docker abc123def456)", "pod UID",
/// "login session 3 of alice", "could not tell the owner: /proc/42/cgroup
/// unreadable"; "" for none.
std::string describe(const Owner& o);

/// As data: {kind, name, scope, user, restart, id, pod} (empty members left out),
/// plus `unit` (a unit's name) and `restarts` (restarts(o)).
util::Value to_value(const Owner& o);
/// The inverse of to_value(Owner); nullopt when `v` is not of that shape.
std::optional<Owner> owner_from(const util::Value& v);

}  // namespace ratchet::steps
