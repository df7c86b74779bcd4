#include "steps/holders.h"

#include <chrono>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "util/clock.h"

namespace ratchet::steps {

static std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t i = s.find(sep, start);
    if (i == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, i - start));
    start = i + 1;
  }
}

static bool to_ll(std::string_view s, long long* v) {
  if (s.empty()) return false;
  long long n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  *v = n;
  return true;
}

std::string decode_file(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '%' && i + 2 < field.size() && hex(field[i + 1]) >= 0 && hex(field[i + 2]) >= 0) {
      out += static_cast<char>(hex(field[i + 1]) * 16 + hex(field[i + 2]));
      i += 2;
    } else {
      out += field[i];
    }
  }
  return out;
}

std::optional<Holder> parse_process_line(std::string_view line) {
  auto f = split(line, '\t');
  if (f.size() < 8) return std::nullopt;
  Holder h;
  if (!to_ll(f[0], &h.pid) || !to_ll(f[2], &h.start_ticks)) return std::nullopt;
  double epoch = 0;
  try {
    epoch = std::stod(std::string(f[3]));
  } catch (...) {
    return std::nullopt;
  }
  h.started = util::rfc3339(util::WallTime(std::chrono::milliseconds(static_cast<long long>(std::llround(epoch * 1000)))));
  h.user = std::string(f[1]);
  h.comm = std::string(f[4]);
  h.cmdline = std::string(f[5]);
  h.state = std::string(f[6]);
  h.owner = parse_owner(f[7]);
  if (!h.owner) return std::nullopt;
  for (size_t i = 8; i < f.size(); ++i)
    if (!f[i].empty()) h.files.push_back(decode_file(f[i]));
  return h;
}

std::vector<Holder> parse_process_lines(std::string_view text, std::string_view tag) {
  std::vector<Holder> out;
  std::set<long long> seen;
  for (auto line : split(text, '\n')) {
    if (!tag.empty()) {
      if (line.size() <= tag.size() || line.substr(0, tag.size()) != tag || line[tag.size()] != '\t')
        continue;
      line.remove_prefix(tag.size() + 1);
    }
    auto h = parse_process_line(line);
    if (!h || !seen.insert(h->pid).second) continue;
    out.push_back(std::move(*h));
  }
  return out;
}

util::Value to_value(const Holder& h) {
  util::Value files = util::Value::array();
  for (const auto& f : h.files) files.push_back(f);
  util::Value v = util::Value::table({{"pid", h.pid}, {"user", h.user}, {"comm", h.comm}, {"cmdline", h.cmdline},
                                      {"files", std::move(files)}});
  if (!h.started.empty()) {
    v["start_ticks"] = h.start_ticks;
    v["started"] = h.started;
  }
  if (!h.state.empty()) v["state"] = h.state;
  if (h.owner) v["owner"] = to_value(*h.owner);
  return v;
}

util::Value to_value(const std::vector<Holder>& hs) {
  util::Value out = util::Value::array();
  for (const auto& h : hs) out.push_back(to_value(h));
  return out;
}

std::optional<Holder> holder_from(const util::Value& v) {
  if (!v.is_table()) return std::nullopt;
  for (const auto& kv : v.as_table())
    if (kv.first != "pid" && kv.first != "user" && kv.first != "comm" && kv.first != "cmdline" &&
        kv.first != "files" && kv.first != "start_ticks" && kv.first != "started" && kv.first != "state" &&
        kv.first != "owner")
      return std::nullopt;
  const util::Value &pid = v["pid"], &user = v["user"], &comm = v["comm"], &cmdline = v["cmdline"],
                    &files = v["files"], &ticks = v["start_ticks"], &started = v["started"];
  if (!pid.is_int() || !user.is_string() || !comm.is_string() || !cmdline.is_string() || !files.is_array())
    return std::nullopt;
  if (ticks.is_null() != started.is_null() || (!ticks.is_null() && (!ticks.is_int() || !started.is_string())))
    return std::nullopt;
  Holder h;
  h.pid = pid.as_int();
  h.user = user.as_string();
  h.comm = comm.as_string();
  h.cmdline = cmdline.as_string();
  for (const auto& f : files.as_list()) {
    if (!f.is_string()) return std::nullopt;
    h.files.push_back(f.as_string());
  }
  if (const util::Value* st = v.find("state")) {
    if (!st->is_string() || st->as_string().empty()) return std::nullopt;
    h.state = st->as_string();
  }
  if (const util::Value* ow = v.find("owner")) {
    h.owner = owner_from(*ow);
    if (!h.owner) return std::nullopt;
  }
  if (!ticks.is_null()) {
    h.start_ticks = ticks.as_int();
    h.started = started.as_string();
    if (h.started.empty()) return std::nullopt;  // to_value leaves both out then
  }
  return h;
}

}  // namespace ratchet::steps
