#pragma once
// What a command is for within its rung: the transcript's and the plan's `role`.
#include <array>
#include <optional>
#include <string_view>

namespace ratchet::steps {

/// A command's part: a check that looks, an action that changes, or sudo's
/// probe that the engine sends before a step that becomes (docs/playbook.md#become).
enum class Role { check, action, become_probe };

/// Every role.
inline constexpr std::array<Role, 3> kRoles = {Role::check, Role::action, Role::become_probe};

/// The role as recorded: "check", "action", "become_probe".
std::string_view name(Role r);

/// The role `s` names exactly (as name() writes it), or nullopt.
std::optional<Role> parse_role(std::string_view s);

}  // namespace ratchet::steps
