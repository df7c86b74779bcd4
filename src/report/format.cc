#include "report/format.h"

#include <fmt/format.h>

#include <ctime>

#include "util/duration.h"

namespace ratchet::report {

std::string_view status_class(std::string_view status) {
  static constexpr std::string_view kKnown[] = {
      "ok",       "changed",     "escalated", "failed",          "skipped",   "unreachable",
      "host_key", "interrupted", "would_act", "could_not_check", "not_probed"};
  if (status.empty()) return "st-none";
  static const std::string kClasses[] = {
      "st-ok",        "st-changed",         "st-escalated", "st-failed",
      "st-skipped",   "st-unreachable",     "st-host_key",  "st-interrupted",
      "st-would_act", "st-could_not_check", "st-not_probed"};
  for (size_t k = 0; k < std::size(kKnown); ++k)
    if (kKnown[k] == status) return kClasses[k];
  return "st-other";
}

std::string utc(long long ms) {
  if (ms == 0) return "";
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04d}-{:02d}-{:02d} {:02d}:{:02d}:{:02d}.{:03d}Z", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     static_cast<int>(ms % 1000));
}

std::string duration(long long ms) {
  if (ms < 1000) return fmt::format("{} ms", ms);
  if (ms < 60'000) return fmt::format("{:.1f} s", ms / 1000.0);
  return util::format_duration(util::Millis(ms));
}

std::string host_anchor(size_t host) { return fmt::format("h{}", host); }

std::string step_anchor(size_t host, size_t step) { return fmt::format("h{}-s{}", host, step); }

}  // namespace ratchet::report
