#pragma once
// Small formatting rules the report's parts share: one CSS class per status,
// times and durations as the page prints them.
#include <string>
#include <string_view>

namespace ratchet::report {

/// The CSS class for a step, host or run status: "st-ok", "st-failed", ...;
/// "st-none" for "" (no end recorded), "st-other" for a status this ratchet
/// does not know. Never a byte of `status` itself.
std::string_view status_class(std::string_view status);

/// UTC time of `ms` since the epoch: "2026-11-30 05:03:18.821Z"; "" for 0.
std::string utc(long long ms);

/// A duration for people: "174 ms", "1.9 s", "2m05s".
std::string duration(long long ms);

/// Stable element ids: "h3" for host 3, "h3-s5" for its step 5 (numbers, never names).
std::string host_anchor(size_t host);
std::string step_anchor(size_t host, size_t step);

}  // namespace ratchet::report
