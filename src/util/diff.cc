#include "util/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace ratchet::util {

namespace {

// The lines of `s`; a last line without '\n' is marked as diff -u marks it.
std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < s.size()) {
    size_t nl = s.find('\n', at);
    if (nl == std::string::npos) {
      out.push_back(s.substr(at) + "\n\\ No newline at end of file");
      break;
    }
    out.push_back(s.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

struct Edit {
  char op;  // ' ', '-', '+'
  size_t a, b;  // line index in before / after (the one that applies)
};

// The edit script by longest common subsequence (O(n*m), bounded by max_lines).
std::vector<Edit> edits(const std::vector<std::string>& A, const std::vector<std::string>& B) {
  const size_t n = A.size(), m = B.size();
  std::vector<unsigned> L((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> unsigned& { return L[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      at(i, j) = A[i] == B[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
  std::vector<Edit> out;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && A[i] == B[j]) out.push_back({' ', i++, j++});
    else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) out.push_back({'-', i++, j});  // '-' first, as diff -u
    else out.push_back({'+', i, j++});
  }
  return out;
}

}  // namespace

std::string unified_diff(const std::string& before, const std::string& after, const std::string& from_name,
                         const std::string& to_name, size_t context, size_t max_lines) {
  if (before == after) return "";
  auto A = lines_of(before), B = lines_of(after);
  std::string out = fmt::format("--- {}\n+++ {}\n", from_name, to_name);
  if (A.size() > max_lines || B.size() > max_lines)
    return out + fmt::format("(not compared line by line: {} and {} lines, more than {})\n", A.size(), B.size(),
                             max_lines);
  auto E = edits(A, B);
  size_t k = 0;
  while (k < E.size()) {
    while (k < E.size() && E[k].op == ' ') ++k;
    if (k == E.size()) break;
    // A hunk: from `context` lines before this change to `context` after the
    // last change that is no more than 2*context lines from the one before.
    size_t start = k >= context ? k - context : 0;
    size_t end = k;
    for (size_t q = k; q < E.size(); ++q)
      if (E[q].op != ' ') {
        if (q > end + 2 * context) break;
        end = q;
      }
    size_t stop = std::min(E.size(), end + context + 1);
    size_t na = 0, nb = 0;
    for (size_t q = start; q < stop; ++q) na += E[q].op != '+', nb += E[q].op != '-';
    size_t a0 = E[start].a, b0 = E[start].b;
    out += fmt::format("@@ -{},{} +{},{} @@\n", na ? a0 + 1 : a0, na, nb ? b0 + 1 : b0, nb);
    for (size_t q = start; q < stop; ++q)
      out += std::string(1, E[q].op) + (E[q].op == '+' ? B[E[q].b] : A[E[q].a]) + "\n";
    k = stop;
  }
  return out;
}

}  // namespace ratchet::util
