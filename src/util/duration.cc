#include "util/duration.h"

#include <cctype>
#include <fmt/format.h>

namespace ratchet::util {

std::optional<Millis> parse_duration(std::string_view text, std::string* err) {
  if (text.empty()) {
    *err = "empty duration";
    return std::nullopt;
  }
  long long total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    long long n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      n = n * 10 + (text[i] - '0');
      if (n > kMaxDuration.count()) {
        *err = fmt::format("\"{}\" is too long (at most {})", text, "10000h");
        return std::nullopt;
      }
      ++i;
    }
    if (i == start) {
      *err = fmt::format("expected a number at \"{}\"", text.substr(start));
      return std::nullopt;
    }
    size_t ustart = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit = text.substr(ustart, i - ustart);
    long long mult;
    if (unit == "ms") mult = 1;
    else if (unit == "s") mult = 1000;
    else if (unit == "m") mult = 60'000;
    else if (unit == "h") mult = 3'600'000;
    else if (unit.empty() && i < text.size()) {
      *err = fmt::format("unexpected \"{}\" in \"{}\" (durations look like \"250ms\", \"10s\", \"5m\", \"1h\")",
                         text[i], text);
      return std::nullopt;
    } else if (unit.empty()) {
      *err = fmt::format("\"{}\" has no unit (write \"{}s\" or \"{}ms\")", text, text, text);
      return std::nullopt;
    } else if (unit == "min" || unit == "sec" || unit == "hr") {
      *err = fmt::format("unknown unit \"{}\" (write \"{}\")", unit, unit.substr(0, 1) == "s" ? "s" : unit.substr(0, 1));
      return std::nullopt;
    } else {
      *err = fmt::format("unknown unit \"{}\" (use ms, s, m or h)", unit);
      return std::nullopt;
    }
    total += n * mult;  // n and total stay <= kMaxDuration: no overflow
    if (total > kMaxDuration.count()) {
      *err = fmt::format("\"{}\" is too long (at most {})", text, "10000h");
      return std::nullopt;
    }
  }
  return Millis(total);
}

std::string format_duration(Millis ms) {
  long long v = ms.count();
  if (v < 1000) return fmt::format("{}ms", v);
  if (v < 60'000) {
    if (v % 1000 == 0) return fmt::format("{}s", v / 1000);
    return fmt::format("{:.1f}s", v / 1000.0);
  }
  long long m = v / 60'000, s = (v % 60'000) / 1000;
  return s ? fmt::format("{}m{}s", m, s) : fmt::format("{}m", m);
}

}  // namespace ratchet::util
