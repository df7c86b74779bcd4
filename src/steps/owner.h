#pragma once
// Who owns a process, as the host library read it from /proc/PID/cgroup: its
// systemd unit (system or user, with Restart=), container, Kubernetes pod or
// login session. The owner field of a process line (docs/host-library.md).
#include <optional>
#include <string>
#include <string_view>

#include "util/value.h"

namespace ratchet::steps {

struct Owner {
  std::string kind;     ///< "unit", "container", "pod", "session", "cgroup" (a path no rule knows); "none": the root cgroup
  std::string name;     ///< unit name (sglang.service), container or pod name ("" = not known)
  std::string scope;    ///< unit: "system" or "user"; container or pod: the runtime (docker, containerd, ...)
  std::string user;     ///< the user of a user unit or login session
  std::string restart;  ///< a unit's Restart= or a container's restart policy; "" = not known
  std::string id;       ///< container id, pod UID, session number
  bool operator==(const Owner&) const = default;
};

/// Parses an owner field: "-" (kind "none"), or blank-separated KEY=VALUE words
/// with %-encoded values; nullopt when it has neither shape (no kind, a word without '=').
std::optional<Owner> parse_owner(std::string_view field);

/// True when something brings a killed process back: a unit whose Restart= is
/// known and not "no", a container whose restart policy is not "no", a pod.
bool restarts(const Owner& o);

/// The owner in words: "unit sglang.service (Restart=always)", "user unit
/// a.service of alice", "container web (docker abc123def456)", "pod UID",
/// "login session 3 of alice"; "" for none.
std::string describe(const Owner& o);

/// As data: {kind, name, scope, user, restart, id} (empty members left out),
/// plus `unit` (a unit's name) and `restarts` (restarts(o)).
util::Value to_value(const Owner& o);
/// The inverse of to_value(Owner); nullopt when `v` is not of that shape.
std::optional<Owner> owner_from(const util::Value& v);

}  // namespace ratchet::steps
