#pragma once
// A step's or a rung's kind (docs/playbook.md, "Kinds"), and its name as a
// playbook, the plan and the transcript write it.
#include <array>
#include <optional>
#include <string_view>

namespace ratchet::playbook {

/// What a step or a rung does: the builder that turns it into commands.
enum class Kind { run, service, kill, verify, write, copy, fetch, reboot };

/// Every kind, in the order docs/playbook.md lists them.
inline constexpr std::array<Kind, 8> kKinds = {Kind::run,   Kind::service, Kind::kill,  Kind::verify,
                                               Kind::write, Kind::copy,    Kind::fetch, Kind::reboot};

/// The kind as written: "run", "service", "kill", "verify", "write", "copy", "fetch", "reboot".
std::string_view name(Kind k);

/// The kind `s` names exactly (as name() writes it), or nullopt ("shell", "Run").
std::optional<Kind> parse_kind(std::string_view s);

}  // namespace ratchet::playbook
