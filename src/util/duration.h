#pragma once
// Durations as playbooks spell them: "250ms", "10s", "5m", "1h", "1m30s".
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ratchet::util {

using Millis = std::chrono::milliseconds;

/// The longest duration parse_duration() takes: 10000h (about 14 months). Longer
/// ones are refused, never wrapped (a deadline of now + it stays representable).
inline constexpr Millis kMaxDuration{10'000LL * 3'600'000};

/// Parses a duration string into milliseconds. Units: ms, s, m, h; parts may be
/// concatenated ("1m30s"). A bare number without a unit is rejected, and so is
/// one over kMaxDuration.
/// Returns nullopt and sets *err (a short reason) on bad input.
std::optional<Millis> parse_duration(std::string_view text, std::string* err);

/// Formats milliseconds for people: "250ms", "10s", "1m30s", "1.5s".
std::string format_duration(Millis ms);

}  // namespace ratchet::util
