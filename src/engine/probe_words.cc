#include "engine/probe_words.h"

#include <fnmatch.h>

namespace ratchet::engine {

std::vector<std::string> command_words(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\'') {
      size_t end = s.find('\'', i + 1);
      if (end == std::string::npos) end = s.size();
      cur += s.substr(i + 1, end - i - 1);
      i = end;
      in_word = true;
    } else if (c == '\\' && i + 1 < s.size()) {
      cur += s[++i];
      in_word = true;
    } else if (c == '"') {  // "...": the quotes go, what is inside stays one word
      size_t end = s.find('"', i + 1);
      if (end == std::string::npos) end = s.size();
      cur += s.substr(i + 1, end - i - 1);
      i = end;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' ||
               c == '`' || c == '<' || c == '>' || c == '$') {  // $(cat /run/x.pid): the path is a word
      if (in_word) out.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(cur);
  return out;
}

std::set<std::string> resources(const steps::Command& c) {
  std::set<std::string> out;
  auto w = command_words(c.text);
  bool after_dashes = false;
  for (size_t i = 1; i < w.size(); ++i) {
    const std::string& x = w[i];
    if (x == "--") {
      after_dashes = true;
      continue;
    }
    if (x.empty() || x[0] == '-') continue;
    if (after_dashes || x.find('/') != std::string::npos ||
        (x.find('.') != std::string::npos && x.find_first_not_of("0123456789.") != std::string::npos))
      out.insert(x);
  }
  if (c.judge == steps::Judge::service && w.size() > 1) out.insert(w[1]);
  return out;
}

bool overlap(const std::string& a, const std::string& b) {
  if (a == b) return true;
  if (fnmatch(a.c_str(), b.c_str(), 0) == 0 || fnmatch(b.c_str(), a.c_str(), 0) == 0) return true;
  return b.rfind(a + "/", 0) == 0 || a.rfind(b + "/", 0) == 0;
}

}  // namespace ratchet::engine
