#include "cli/recap.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/duration.h"
#include "util/text.h"

namespace ratchet::cli {

namespace {

/// `text` in the colour of a host's `status` when `color`.
std::string paint(bool color, engine::HostStatus status, const std::string& text) {
  using S = engine::HostStatus;
  if (!color) return text;
  const char* c = status == S::ok                        ? "\x1b[32m"
                  : engine::counts_as_failed(status)     ? "\x1b[31m"
                  : status == S::interrupted             ? "\x1b[35m"
                  : status == S::skipped                 ? "\x1b[2m"
                                                         : "";
  return *c ? std::string(c) + text + "\x1b[0m" : text;
}

/// `s` padded with blanks to `n` terminal columns.
std::string pad(const std::string& s, size_t n) {
  size_t c = util::columns(s);
  return c < n ? s + std::string(n - c, ' ') : s;
}

/// "  why", cut to what is left of `cols` after `used` columns (160 when cols is 0).
std::string why_column(const std::string& why, size_t used, size_t cols) {
  size_t room = cols == 0 ? 160 : cols > used + 10 ? cols - used : 10;
  return "  " + util::escaped_line(why, room);
}

}  // namespace

std::string exec_recap_table(const std::vector<engine::AdhocResult>& results, bool color, size_t cols) {
  size_t w = 5;
  for (const auto& a : results) w = std::max(w, util::columns(util::escaped_line(a.host, 40)));
  std::string out = fmt::format("\nRECAP\n{} {:<12} {:>7} {:>8} {:>10} {:>10}\n", pad("host", w), "status", "exit",
                                "time", "stdout", "stderr");
  std::map<std::string, int> tot;
  for (const auto& a : results) {
    const auto& r = a.r;
    const bool ended = a.ran && r.error.empty() && !r.timed_out;
    const std::string exit = !ended ? "-" : !r.signal.empty() ? "SIG" + r.signal : std::to_string(r.exit_code);
    auto bytes = [&](const transport::Captured& c) { return a.ran ? fmt::format("{} B", c.total) : std::string("-"); };
    std::string line = fmt::format("{} {} {:>7} {:>8} {:>10} {:>10}", pad(util::escaped_line(a.host, 40), w),
                                   paint(color, a.status, fmt::format("{:<12}", name(a.status))), exit,
                                   util::format_duration(util::Millis(a.ms)), bytes(r.out), bytes(r.err));
    if (a.status != engine::HostStatus::ok && !a.reason.empty())
      line += why_column(a.reason, util::columns(util::escaped_line(a.host, 40)) + 52, cols);
    out += line + "\n";
    tot[std::string(name(a.status))]++;
  }
  std::string counts;
  for (const auto& [status, n] : tot) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, status);
  out += fmt::format("{} {} host(s): {}\n", pad("total", w), results.size(), counts);
  return out;
}

std::string recap_table(const std::vector<engine::HostReport>& reps, bool color, size_t cols) {
  size_t w = 4;
  for (const auto& r : reps) w = std::max(w, util::columns(util::escaped_line(r.host, 40)));
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
                                   paint(color, r.status, fmt::format("{:<12}", name(r.status))), ok, ch, esc, fl, sk,
                                   util::format_duration(util::Millis(r.ms)));
    if (r.status != engine::HostStatus::ok && !r.reason.empty()) {
      std::string why = r.failed_step.empty() ? r.reason : r.failed_step + ": " + r.reason;
      line += why_column(why, util::columns(util::escaped_line(r.host, 40)) + 70, cols);
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
