#include "util/text.h"

#include <openssl/evp.h>

#include <fmt/format.h>

#include <vector>

namespace ratchet::util {

bool valid_utf8(std::string_view s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    unsigned cp;
    if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
    else return false;
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      unsigned char d = s[i + k];
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

std::string base64(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(data.data()),
                            static_cast<int>(data.size()));
  out.resize(len);
  return out;
}

std::string trim_lines(std::string_view s, size_t max_lines, size_t max_cols) {
  while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  std::string out;
  size_t lines = 0, start = 0, total = 0;
  while (start <= s.size() && !s.empty()) {
    size_t end = s.find('\n', start);
    if (end == std::string_view::npos) end = s.size();
    ++total;
    if (lines < max_lines) {
      std::string_view line = s.substr(start, end - start);
      if (line.size() > max_cols) {
        size_t cut = max_cols;
        while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
        out += std::string(line.substr(0, cut)) + "…";
      } else {
        out += line;
      }
      out += '\n';
      ++lines;
    }
    if (end == s.size()) break;
    start = end + 1;
  }
  if (total > lines) out += fmt::format("… ({} more lines)\n", total - lines);
  return out;
}

std::string indent_lines(std::string_view text, std::string_view pad) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.append(pad).append(text.substr(start, end - start)).append("\n");
    start = end + 1;
  }
  return out;
}

/// Length of the valid UTF-8 sequence at s[i] (1..4), or 0 when invalid.
static size_t utf8_len_at(std::string_view s, size_t i) {
  unsigned char c = s[i];
  size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  return valid_utf8(s.substr(i, len)) ? len : 0;
}

std::string terminal_line(std::string_view s, size_t max_cols) {
  std::string out;
  std::vector<size_t> starts;  // byte offset of each code point in out
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    size_t len = utf8_len_at(s, i);
    starts.push_back(out.size());
    if (len == 0) {
      out += '?';
      i += 1;
    } else if (len == 1) {
      out += c == '\n' || c == '\t' || c == '\r' ? ' ' : (c < 0x20 || c == 0x7F) ? '?' : char(c);
      i += 1;
    } else {
      // C1 controls (U+0080..U+009F) are two bytes: C2 80..C2 9F
      if (len == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) out += '?';
      else out.append(s.substr(i, len));
      i += len;
    }
  }
  if (max_cols > 0 && starts.size() > max_cols) {
    out.resize(starts[max_cols - 1]);
    out += "\u2026";
  }
  return out;
}

std::string terminal_text(std::string_view s) {
  std::string out;
  size_t from = 0;
  for (size_t nl; (nl = s.find('\n', from)) != std::string_view::npos; from = nl + 1)
    out += terminal_line(s.substr(from, nl - from)) + '\n';
  return out + terminal_line(s.substr(from));
}

namespace {

/// Appends the escape of byte `c` ("\\xNN").
void hex_escape(std::string& out, unsigned char c) {
  static const char digits[] = "0123456789abcdef";
  out += "\\x";
  out += digits[c >> 4];
  out += digits[c & 0xF];
}

/// Calls unit(text, columns) for each shown unit of `s`: a code point as it is,
/// or the escape of one byte. `line`: newline and tab show as a blank.
template <class F>
void escaped_units(std::string_view s, bool line, F&& unit) {
  std::string esc;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    size_t len = utf8_len_at(s, i);
    esc.clear();
    if (len == 0) {  // a byte of invalid UTF-8
      hex_escape(esc, c);
      unit(esc, 4);
      i += 1;
    } else if (len == 1) {
      if (c == '\\') unit(std::string_view("\\\\"), 2);
      else if (c == '\n' || c == '\t') line ? unit(std::string_view(" "), 1) : unit(s.substr(i, 1), 1);
      else if (c < 0x20 || c == 0x7F) hex_escape(esc, c), unit(esc, 4);
      else unit(s.substr(i, 1), 1);
      i += 1;
    } else if (len == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {  // C1 control
      hex_escape(esc, c);
      hex_escape(esc, static_cast<unsigned char>(s[i + 1]));
      unit(esc, 8);
      i += 2;
    } else {
      unit(s.substr(i, len), 1);
      i += len;
    }
  }
}

}  // namespace

std::string escape_bytes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  escaped_units(s, false, [&](std::string_view u, size_t) { out.append(u); });
  return out;
}

std::string escaped_line(std::string_view s, size_t max_cols) {
  std::string out;
  out.reserve(s.size());
  // Where each unit starts in `out`, and the columns up to its end.
  std::vector<std::pair<size_t, size_t>> units;
  size_t cols = 0;
  escaped_units(s, true, [&](std::string_view u, size_t w) {
    units.push_back({out.size(), cols + w});
    cols += w;
    out.append(u);
  });
  if (max_cols > 0 && cols > max_cols) {
    // Keep the units that end within max_cols - 1 columns, then "…".
    size_t keep = 0;
    while (keep < units.size() && units[keep].second <= max_cols - 1) ++keep;
    out.resize(keep < units.size() ? units[keep].first : out.size());
    out += "\u2026";
  }
  return out;
}

bool unbase64(std::string_view in, std::string* out) {
  out->clear();
  if (in.size() % 4 != 0) return false;
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else {
        if (pad) return false;  // data after padding
        v[k] = val(c);
        if (v[k] < 0) return false;
      }
    }
    unsigned n = (unsigned(v[0]) << 18) | (unsigned(v[1]) << 12) | (unsigned(v[2]) << 6) | unsigned(v[3]);
    out->push_back(static_cast<char>(n >> 16));
    if (pad < 2) out->push_back(static_cast<char>((n >> 8) & 0xFF));
    if (pad < 1) out->push_back(static_cast<char>(n & 0xFF));
  }
  return true;
}

size_t columns(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string quoted_name(std::string_view s) {
  bool plain = !s.empty() && s.front() != ' ' && s.back() != ' ';
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f || c == '"') plain = false;
  const std::string e = escape_bytes(s);  // invalid UTF-8, C0, DEL, C1 as \xNN; a backslash as \\ (bytes)
  if (plain && e == s) return std::string(s);
  std::string out = "\"";
  for (char c : e) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '"') out += "\\\"";
    else out += c;
  }
  return out + "\"";
}

}  // namespace ratchet::util
