#include "util/shell.h"

namespace ratchet::util {

static bool is_plain(std::string_view w) {
  if (w.empty()) return false;
  for (unsigned char c : w) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '/' || c == ':' || c == '=' || c == '@' ||
              c == '%' || c == '+' || c == ',' || c == '-';
    if (!ok) return false;
  }
  // A leading '=' or '-' is fine for sh, but "~" or "=" forms never appear here.
  return true;
}

std::string shell_quote(std::string_view word) {
  if (is_plain(word)) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += '\'';
  return out;
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += shell_quote(w);
  }
  return out;
}

}  // namespace ratchet::util
