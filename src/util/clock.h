#pragma once
// Wall-clock times for transcripts and templates.
#include <chrono>
#include <string>

namespace ratchet::util {

using WallTime = std::chrono::system_clock::time_point;

/// UTC RFC 3339 with milliseconds and Z: "2026-11-30T04:25:37.123Z".
std::string rfc3339_ms(WallTime t);

/// UTC RFC 3339 to the second: "2026-11-30T04:25:37Z".
std::string rfc3339(WallTime t);

/// Compact UTC stamp for file names: "20261130T042537Z".
std::string file_stamp(WallTime t);

/// Milliseconds elapsed on the steady clock since `start`.
long long ms_since(std::chrono::steady_clock::time_point start);

}  // namespace ratchet::util
