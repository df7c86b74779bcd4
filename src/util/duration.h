#pragma once
// Durations as playbooks spell them: "250ms", "10s", "5m", "1h", "1m30s".
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ratchet::util {

using Millis = std::chrono::milliseconds;

/// Parses a duration string into milliseconds. Units: ms, s, m, h; parts may be
/// concatenated ("1m30s"). A bare number without a unit is rejected.
/// Returns nullopt and sets *err (a short reason) on bad input.
std::optional<Millis> parse_duration(std::string_view text, std::string* err);

/// Formats milliseconds for people: "250ms", "10s", "1m30s", "1.5s".
std::string format_duration(Millis ms);

}  // namespace ratchet::util
