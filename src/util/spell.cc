#include "util/spell.h"

#include <algorithm>
#include <cctype>

namespace ratchet::util {

static size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                  std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  size_t limit = std::max<size_t>(2, word.size() / 3);
  size_t best = limit + 1;
  std::string out;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best) {
      best = d;
      out = c;
    }
  }
  return out;
}

}  // namespace ratchet::util
