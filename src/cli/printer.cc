#include "cli/printer.h"

#include <fmt/format.h>

#include <iostream>

#include "util/duration.h"
#include "util/text.h"

namespace ratchet::cli {

/// `text` with secrets masked (before any cut: a cut through a secret would
/// leave a prefix the mask cannot see).
static std::string masked(const transcript::Writer* mask, const std::string& text) {
  return mask ? mask->mask(text) : text;
}

/// `s` cut to at most `max` bytes, on a UTF-8 boundary, "..." last when cut.
static std::string cut(std::string s, size_t max) {
  if (s.size() <= max) return s;
  size_t at = max - 3;
  while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  return s.substr(0, at) + "...";
}

std::string step_result_line(const std::string& host, const std::string& step_id,
                             const engine::StepOutcome& o, const transcript::Writer* mask) {
  using S = engine::StepStatus;
  if (o.status == S::skipped)
    return fmt::format("{}: {:<18} {:<20}        {}", host, "skipped", step_id, masked(mask, o.reason));
  std::string rung = o.status == S::escalated || (o.status == S::failed && o.rung > 0)
                         ? fmt::format(" (rung {})", o.rung)
                         : "";
  std::string why = o.reason.empty() ? "" : ": " + masked(mask, o.reason);
  why = cut(why, 160);
  return fmt::format("{}: {:<18} {:<20} {:>6}{}", host, std::string(name(o.status)) + rung, step_id,
                     util::format_duration(util::Millis(o.ms)), o.status == S::ok && o.reason.empty() ? "" : why);
}

void LinePrinter::line(const std::string& text) {
  // One whole line at a time; nothing a host printed can move the cursor, and
  // its bytes show in the escape style of util::escaped_line().
  std::string safe = util::escaped_line(mask_ ? mask_->mask(text) : text);
  std::lock_guard<std::mutex> lock(mu_);
  (out_ ? *out_ : std::cout) << safe << std::endl;
}

void LinePrinter::host_done(const engine::HostReport& r) {
  std::string counts;
  for (const auto& [k, v] : r.counts)
    if (v) counts += fmt::format(" {}={}", k, v);
  std::string why = r.reason.empty() || r.status == engine::HostStatus::ok ? "" : ": " + masked(mask_, r.reason);
  why = cut(why, 200);
  line(fmt::format("{}: done {}{} {}{}", r.host, name(r.status), counts,
                   util::format_duration(util::Millis(r.ms)), why));
}

void LinePrinter::batch_started(int index, int count, const std::vector<std::string>& hosts) {
  std::string names;
  for (const auto& h : hosts) names += (names.empty() ? "" : ", ") + h;
  line(fmt::format("batch {}/{}: {}", index, count, names));
}

void LinePrinter::connected(const std::string& host, const std::string& detail) {
  line(fmt::format("{}: connected {}", host, detail));
}

void LinePrinter::unreachable(const std::string& host, const std::string& message) {
  line(fmt::format("{}: UNREACHABLE {}", host, message));
}

void LinePrinter::step_started(const std::string&, const std::string&, const std::string&) {}

void LinePrinter::step_done(const std::string& host, const std::string& step_id,
                            const engine::StepOutcome& o) {
  line(step_result_line(host, step_id, o, mask_));
}

void LinePrinter::step_skipped(const std::string& host, const std::string& step_id,
                               const std::string& why) {
  engine::StepOutcome o;
  o.status = engine::StepStatus::skipped;
  o.reason = why;
  line(step_result_line(host, step_id, o, mask_));
}

}  // namespace ratchet::cli
