#include "report/html.h"

#include <fmt/format.h>

namespace ratchet::report {

namespace {

/// Length of the valid UTF-8 sequence at s[i] (1-4), or 0 when it is not one.
size_t utf8_len(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xC2 && c <= 0xDF   ? 2
             : c >= 0xE0 && c <= 0xEF ? 3
             : c >= 0xF0 && c <= 0xF4 ? 4
                                      : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && b(i + 1) < 0xA0) return 0;  // overlong
  if (c == 0xED && b(i + 1) > 0x9F) return 0;  // surrogate
  if (c == 0xF0 && b(i + 1) < 0x90) return 0;  // overlong
  if (c == 0xF4 && b(i + 1) > 0x8F) return 0;  // above U+10FFFF
  return n;
}

void hex(std::string& out, unsigned char c) { out += fmt::format("\\x{:02x}", c); }

}  // namespace

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = utf8_len(s, i);
    if (n == 0) {
      hex(out, c);
      ++i;
      continue;
    }
    if (n == 1) {
      switch (c) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&#39;";
          break;
        case '\t':
        case '\n':
        case '\r':
          out += static_cast<char>(c);
          break;
        default:
          if (c < 0x20 || c == 0x7F)
            hex(out, c);
          else
            out += static_cast<char>(c);
      }
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      hex(out, c), hex(out, static_cast<unsigned char>(s[i + 1]));  // a C1 control
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string esc_capped(std::string_view s, size_t max, bool* cut) {
  *cut = s.size() > max;
  if (!*cut) return esc(s);
  size_t end = max;
  // back off continuation bytes so a character is never split
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return esc(s.substr(0, end));
}

}  // namespace ratchet::report
