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

/// Bytes a host sent, for a terminal, in the one escape style of show, the live
/// view, the recap and errors (docs/reliability.md): `\xNN` (lower-case hex)
/// for each byte of invalid UTF-8, NUL, every other C0 control but tab and
/// newline, DEL, and each byte of a C1 control (U+0080..U+009F); `\\` for a
/// backslash, so a shown `caf\xe9` is never a literal backslash. Tabs,
/// newlines and all other valid UTF-8 stay as they are.
std::string escape_bytes(std::string_view s);

/// A file name for one line of text: as it is when it has no control byte, no
/// '"' and no leading or trailing blank; else in double quotes with \n, \t,
/// \", \\ and \xNN (every other control byte, invalid UTF-8), so a name
/// with a newline never splits a line and "x (deleted)" is never glued to one.
std::string quoted_name(std::string_view s);

/// escape_bytes() for one terminal line: a newline or tab shows as a blank;
/// then cut to `max_cols` columns (0 = no limit), the last one "…" when cut,
/// never inside an escape.
std::string escaped_line(std::string_view s, size_t max_cols = 0);

/// Standard base64 decoded into *out; false (and *out unspecified) when `in`
/// is not base64.
bool unbase64(std::string_view in, std::string* out);

/// Code points in valid UTF-8 `s` (the columns terminal_line() counts).
size_t columns(std::string_view s);

}  // namespace ratchet::util
