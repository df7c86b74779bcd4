#pragma once
// HTML escaping for the report: the one place where bytes from a host, a
// playbook or an inventory become page text. No other code writes them raw.
#include <string>
#include <string_view>

namespace ratchet::report {

/// `s` as HTML text or a double- or single-quoted attribute value: & < > " '
/// as entities; invalid UTF-8 bytes and C0 controls but tab, newline and CR,
/// DEL and C1 controls as a visible `\xNN`. Never fails.
std::string esc(std::string_view s);

/// esc() of at most `max` bytes of `s` (cut on a UTF-8 boundary), and whether it was cut.
std::string esc_capped(std::string_view s, size_t max, bool* cut);

}  // namespace ratchet::report
