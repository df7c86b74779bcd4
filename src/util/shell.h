#pragma once
// POSIX shell quoting: values interpolated into remote commands stay inert data.
#include <string>
#include <string_view>
#include <vector>

namespace ratchet::util {

/// Quotes one word for a POSIX sh (single quotes; ' becomes '\''). Safe for any
/// byte string, including newlines, $(), ; and UTF-8. Plain words
/// ([A-Za-z0-9_./:=@%+,-]+) are returned unchanged for readability.
std::string shell_quote(std::string_view word);

/// Quotes each word and joins them with single spaces.
std::string shell_join(const std::vector<std::string>& words);

}  // namespace ratchet::util
