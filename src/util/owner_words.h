#pragma once
// A process's owner (steps::Owner as data: {kind, name, scope, user, restart,
// id}) in words, for text output, the transcript's rendering and the report;
// and the owner kinds, the one list of them (the host library's `kind=` word).
#include <optional>
#include <string>
#include <string_view>

#include "util/value.h"

namespace ratchet::util {

/// Who owns a process: none (the root cgroup), unknown (/proc/PID/cgroup could
/// not be read: never taken as none), a systemd unit, a container, a
/// Kubernetes pod, a login session, or a cgroup no rule knows (by its path).
enum class OwnerKind { none, unknown, unit, container, pod, session, cgroup };

/// "none", "unknown", "unit", "container", "pod", "session", "cgroup".
std::string_view name(OwnerKind k);
/// The inverse of name(OwnerKind); nullopt for any other word.
std::optional<OwnerKind> parse_owner_kind(std::string_view word);

/// "unit sglang.service (Restart=always)", "user unit a.service of alice",
/// "container web (docker abc123def456)", "pod NS/NAME (UID)", "login session 3
/// of alice", "could not tell the owner: /proc/42/cgroup unreadable"; "" for
/// kind "none", a missing owner or one of another shape.
std::string owner_words(const Value& owner);

}  // namespace ratchet::util
