#pragma once
// Process lines printed by the host library, read into JSON holder objects.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ratchet::steps {

/// Decodes one %-encoded file field of a process line (%25, %09, %0A: any
/// %XX); a '%' not followed by two hex digits stays as it is.
std::string decode_file(std::string_view field);

/// Parses one tab-separated process line ("pid user ticks epoch comm cmdline
/// file file ...", docs/host-library.md) into {pid, user, start_ticks, started
/// (RFC 3339 UTC), comm, cmdline, files[] (decoded)}. Returns null when the line
/// does not have that shape.
nlohmann::json parse_process_line(std::string_view line);

/// Parses every line of `text` that starts with `tag` + TAB (or every line when
/// tag is ""), skipping malformed ones; one holder per PID, first wins.
nlohmann::json parse_process_lines(std::string_view text, std::string_view tag);

}  // namespace ratchet::steps
