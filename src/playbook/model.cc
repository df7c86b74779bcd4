#include "playbook/model.h"

#include <fmt/format.h>

namespace ratchet::playbook {

std::string SourcePos::str() const {
  if (line <= 0) return file;
  if (col <= 0) return fmt::format("{}:{}", file, line);
  return fmt::format("{}:{}:{}", file, line, col);
}

std::string connect_name(const Host& h) {
  if (!h.address.empty()) return h.address;
  std::string suffix = ":" + std::to_string(h.port);
  if (h.port && h.name.size() > suffix.size() &&
      h.name.compare(h.name.size() - suffix.size(), suffix.size(), suffix) == 0)
    return h.name.substr(0, h.name.size() - suffix.size());
  return h.name;
}

std::string_view name(Strategy s) { return s == Strategy::free ? "free" : "linear"; }

std::optional<Strategy> parse_strategy(std::string_view s) {
  for (Strategy st : kStrategies)
    if (name(st) == s) return st;
  return std::nullopt;
}

bool becomes(const Step& s, const Host& h) { return s.become.value_or(h.become); }

std::string become_user_for(const Step& s, const Host& h) {
  if (!s.become_user.empty()) return s.become_user;
  return h.become_user.empty() ? "root" : h.become_user;
}

}  // namespace ratchet::playbook

namespace ratchet::playbook {

std::string origin(const Step& s) {
  std::string out = s.where.str();
  for (const auto& site : s.included_from) out += ", included from " + site.str();
  return out;
}

const std::string& text_of(const Playbook& pb, const std::string& file) {
  static const std::string none;
  if (file == pb.path) return pb.source;
  for (const auto& f : pb.includes)
    if (f.path == file) return f.source;
  return none;
}

}  // namespace ratchet::playbook
