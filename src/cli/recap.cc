#include "cli/recap.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/duration.h"
#include "util/text.h"

namespace ratchet::cli {

std::string recap_table(const std::vector<engine::HostReport>& reps, bool color, size_t cols) {
  size_t w = 4;
  for (const auto& r : reps) w = std::max(w, util::columns(util::escaped_line(r.host, 40)));
  auto paint = [&](engine::HostStatus status, const std::string& text) {
    using S = engine::HostStatus;
    if (!color) return text;
    const char* c = status == S::ok                        ? "\x1b[32m"
                    : engine::counts_as_failed(status)     ? "\x1b[31m"
                    : status == S::interrupted             ? "\x1b[35m"
                    : status == S::skipped                 ? "\x1b[2m"
                                                           : "";
    return *c ? std::string(c) + text + "\x1b[0m" : text;
  };
  auto pad = [](std::string s, size_t n) {
    size_t c = util::columns(s);
    return c < n ? s + std::string(n - c, ' ') : s;
  };
  std::string out = fmt::format("\nRECAP\n{} {:<12} {:>4} {:>8} {:>10} {:>7} {:>8} {:>8}\n",
                                pad("host", w), "status", "ok", "changed", "escalated", "failed",
                                "skipped", "time");
  std::map<std::string, int> tot;
  for (const auto& r : reps) {
    auto n = [&](const char* k) {
      auto it = r.counts.find(k);
      int v = it == r.counts.end() ? 0 : it->second;
      tot[k] += v;
      return v;
    };
    int ok = n("ok"), ch = n("changed"), esc = n("escalated"), fl = n("failed"), sk = n("skipped");
    std::string line = fmt::format("{} {} {:>4} {:>8} {:>10} {:>7} {:>8} {:>8}",
                                   pad(util::escaped_line(r.host, 40), w),
                                   paint(r.status, fmt::format("{:<12}", name(r.status))), ok, ch, esc, fl, sk,
                                   util::format_duration(util::Millis(r.ms)));
    if (r.status != engine::HostStatus::ok && !r.reason.empty()) {
      std::string why = r.failed_step.empty() ? r.reason : r.failed_step + ": " + r.reason;
      size_t used = util::columns(util::escaped_line(r.host, 40)) + 70;
      size_t room = cols == 0 ? 160 : cols > used + 10 ? cols - used : 10;
      line += "  " + util::escaped_line(why, room);
    }
    out += line + "\n";
  }
  // The steps a host did not run, and why (a false `when`, or the host stopped).
  for (const auto& r : reps) {
    std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;
    for (const auto& [id, why] : r.skipped) {
      auto it = std::find_if(by_reason.begin(), by_reason.end(), [&, &w = why](const auto& b) { return b.first == w; });
      if (it == by_reason.end()) by_reason.push_back({why, {id}});
      else it->second.push_back(id);
    }
    for (const auto& [why, ids] : by_reason) {
      std::string list;
      for (const auto& id : ids) list += (list.empty() ? "" : ", ") + id;
      out += util::escaped_line(fmt::format("{}: {} skipped ({}): {}", r.host, ids.size(), why, list),
                                cols == 0 ? 0 : cols - 1) + "\n";
    }
  }
  out += fmt::format("{} {:<12} {:>4} {:>8} {:>10} {:>7} {:>8}\n", pad("total", w),
                     fmt::format("{} host(s)", reps.size()), tot["ok"], tot["changed"],
                     tot["escalated"], tot["failed"], tot["skipped"]);
  return out;
}

}  // namespace ratchet::cli
