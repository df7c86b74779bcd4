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

void LinePrinter::line(const std::string& text) {
  // One whole line at a time; nothing a host printed can move the cursor.
  std::string safe = util::terminal_line(mask_ ? mask_->mask(text) : text);
  std::lock_guard<std::mutex> lock(mu_);
  (out_ ? *out_ : std::cout) << safe << std::endl;
}

void LinePrinter::host_done(const engine::HostReport& r) {
  std::string counts;
  for (const auto& [k, v] : r.counts)
    if (v) counts += fmt::format(" {}={}", k, v);
  std::string why = r.reason.empty() || r.status == "ok" ? "" : ": " + masked(mask_, r.reason);
  if (why.size() > 200) why = why.substr(0, 197) + "...";
  line(fmt::format("{}: done {}{} {}{}", r.host, r.status, counts,
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
  std::string rung = o.status == "escalated" || (o.status == "failed" && o.rung > 0)
                         ? fmt::format(" (rung {})", o.rung)
                         : "";
  std::string why = o.reason.empty() ? "" : ": " + masked(mask_, o.reason);
  if (why.size() > 160) why = why.substr(0, 157) + "...";
  line(fmt::format("{}: {:<18} {:<20} {:>6}{}", host, o.status + rung, step_id,
                   util::format_duration(util::Millis(o.ms)), o.status == "ok" && o.reason.empty() ? "" : why));
}

void LinePrinter::step_skipped(const std::string& host, const std::string& step_id,
                               const std::string& why) {
  line(fmt::format("{}: {:<18} {:<20}        {}", host, "skipped", step_id, why));
}

}  // namespace ratchet::cli
