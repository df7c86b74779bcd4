#include "util/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

namespace ratchet::util {

namespace {

// One line: its text, and whether it is a last line without '\n' (then it
// is compared, and shown, as diff -u marks it).
struct Line {
  std::string text;
  bool no_newline = false;
  bool operator==(const Line& o) const { return text == o.text && no_newline == o.no_newline; }
  std::string shown(bool hide) const {
    return (hide ? std::string("***") : text) + (no_newline ? "\n\\ No newline at end of file" : "");
  }
};

std::vector<Line> lines_of(const std::string& s) {
  std::vector<Line> out;
  size_t at = 0;
  while (at < s.size()) {
    size_t nl = s.find('\n', at);
    if (nl == std::string::npos) {
      out.push_back({s.substr(at), true});
      break;
    }
    out.push_back({s.substr(at, nl - at), false});
    at = nl + 1;
  }
  return out;
}

struct Edit {
  char op;  // ' ', '-', '+'
  size_t a, b;  // line index in before / after (the one that applies)
};

// The edit script by longest common subsequence (O(n*m), bounded by max_lines).
std::vector<Edit> edits(const std::vector<Line>& A, const std::vector<Line>& B) {
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

// A line's key: the text before its first '=' or ':', blanks and quotes
// trimmed ("password" of `  password = x`, of `"password": "x"`); "" for none.
std::string key_of(const std::string& line) {
  size_t end = line.find_first_of("=:");
  if (end == std::string::npos || end > 128) return "";
  std::string k = line.substr(0, end);
  auto trim = [](unsigned char c) { return c == ' ' || c == '\t' || c == '"' || c == '\''; };
  while (!k.empty() && trim(k.back())) k.pop_back();
  size_t b = 0;
  while (b < k.size() && trim(k[b])) ++b;
  return k.substr(b);
}

// Whether a key (key_of) names a credential: its old value, moved or under a
// renamed key, may be the secret the new content replaces.
bool credential_key(std::string key) {
  for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* w : {"pass", "pwd", "secret", "token", "key", "cred", "auth", "private", "cookie", "session"})
    if (key.find(w) != std::string::npos) return true;
  return false;
}

std::string diff_of(const std::vector<Line>& A, const std::vector<Line>& B, const std::vector<bool>& hideA,
                    const std::vector<bool>& hideB, const std::vector<Edit>& E, const std::string& from_name,
                    const std::string& to_name, size_t context) {
  std::string out = fmt::format("--- {}\n+++ {}\n", from_name, to_name);
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
    for (size_t q = start; q < stop; ++q) {
      const Edit& e = E[q];
      // A context line is both sides' line: hidden when either side is.
      if (e.op == '+') out += "+" + B[e.b].shown(hideB[e.b]) + "\n";
      else if (e.op == '-') out += "-" + A[e.a].shown(hideA[e.a]) + "\n";
      else out += " " + A[e.a].shown(hideA[e.a] || hideB[e.b]) + "\n";
    }
    k = stop;
  }
  return out;
}

std::string diff_texts(const std::string& before, const std::string& after, const std::string& from_name,
                       const std::string& to_name, const SecretLine* secret, size_t context, size_t max_lines) {
  if (before == after) return "";
  auto A = lines_of(before), B = lines_of(after);
  if (A.size() > max_lines || B.size() > max_lines)
    return fmt::format("--- {}\n+++ {}\n(not compared line by line: {} and {} lines, more than {})\n", from_name,
                       to_name, A.size(), B.size(), max_lines);
  auto E = edits(A, B);
  std::vector<bool> hideA(A.size(), false), hideB(B.size(), false);
  if (secret) {
    std::set<std::string> keys;  // of the lines of `after` that hold a secret
    for (size_t j = 0; j < B.size(); ++j)
      if ((*secret)(B[j].text)) {
        hideB[j] = true;
        if (std::string key = key_of(B[j].text); !key.empty()) keys.insert(key);
      }
    const bool any_secret = std::find(hideB.begin(), hideB.end(), true) != hideB.end();
    for (size_t i = 0; i < A.size(); ++i) hideA[i] = (*secret)(A[i].text);
    // The removed lines at the same place as a secret's line of `after`.
    for (size_t k = 0; k < E.size();) {
      if (E[k].op == ' ') {
        ++k;
        continue;
      }
      // One change: a run of '-' and '+' edits. As many removed lines as
      // added ones: the n-th replaced by the n-th. Else which old line became
      // the secret's is not known: every removed line of it is hidden.
      std::vector<size_t> removed, added;
      for (; k < E.size() && E[k].op != ' '; ++k) {
        if (E[k].op == '-') removed.push_back(E[k].a);
        else added.push_back(E[k].b);
      }
      bool secret_added = false;
      for (size_t j : added) secret_added |= hideB[j];
      for (size_t n = 0; n < removed.size(); ++n) {
        const size_t i = removed[n];
        const bool same_place = removed.size() == added.size() ? hideB[added[n]] : secret_added;
        const std::string key = key_of(A[i].text);
        if (same_place || (i < B.size() && hideB[i]) || keys.count(key) || (any_secret && credential_key(key)))
          hideA[i] = true;
      }
    }
  }
  return diff_of(A, B, hideA, hideB, E, from_name, to_name, context);
}

}  // namespace

std::string unified_diff(const std::string& before, const std::string& after, const std::string& from_name,
                         const std::string& to_name, size_t context, size_t max_lines) {
  return diff_texts(before, after, from_name, to_name, nullptr, context, max_lines);
}

std::string unified_diff_masked(const std::string& before, const std::string& after, const std::string& from_name,
                                const std::string& to_name, const SecretLine& secret, size_t context,
                                size_t max_lines) {
  return diff_texts(before, after, from_name, to_name, &secret, context, max_lines);
}

}  // namespace ratchet::util
