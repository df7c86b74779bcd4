#pragma once
// Byte-string helpers for recording command output.
#include <string>
#include <string_view>

namespace ratchet::util {

/// True when `s` is valid UTF-8 (RFC 3629: no overlongs, no surrogates, <= U+10FFFF).
bool valid_utf8(std::string_view s);

/// Standard base64 (RFC 4648, with padding) of `data`.
std::string base64(std::string_view data);

/// The first `max_lines` lines of `s`, each cut at `max_cols` bytes (on a UTF-8
/// boundary), with "… (N more lines)" appended when lines were dropped.
std::string trim_lines(std::string_view s, size_t max_lines, size_t max_cols);

/// Each line of `text` prefixed with `pad`, every line ending in '\n'.
std::string indent_lines(std::string_view text, std::string_view pad);

/// `s` made safe for one terminal line: control bytes (C0, DEL, C1 — so no
/// ANSI escape from a host reaches the terminal) become '?', newlines and tabs
/// a space, invalid UTF-8 bytes '?'; then cut to `max_cols` code points, the
/// last one "…" when cut (0 = no limit).
std::string terminal_line(std::string_view s, size_t max_cols = 0);

/// Text of several lines made safe for a terminal: each line as terminal_line()
/// (no cut), the newlines kept. For what a person reviews (plan, validate).
std::string terminal_text(std::string_view s);

/// Code points in valid UTF-8 `s` (the columns terminal_line() counts).
size_t columns(std::string_view s);

}  // namespace ratchet::util
