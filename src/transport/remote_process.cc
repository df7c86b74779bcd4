#include "transport/remote_process.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace ratchet::transport {

namespace {

template <typename T>
bool take_number(std::string_view* s, T* out, bool last) {
  size_t end = last ? s->size() : s->find(' ');
  if (end == std::string_view::npos || end == 0 || end > 20) return false;
  auto [p, ec] = std::from_chars(s->data(), s->data() + end, *out);
  if (ec != std::errc() || p != s->data() + end) return false;
  s->remove_prefix(last ? end : end + 1);
  return true;
}

}  // namespace

bool parse_remote_process(std::string_view fields, RemoteProcess* out) {
  RemoteProcess p;
  constexpr std::string_view kWatch = " watch";
  if (fields.size() > kWatch.size() && fields.substr(fields.size() - kWatch.size()) == kWatch) {
    p.watched = true;
    fields.remove_suffix(kWatch.size());
  }
  if (!take_number(&fields, &p.pid, false) || !take_number(&fields, &p.pgid, false) ||
      !take_number(&fields, &p.start_ticks, true))
    return false;
  if (p.pid <= 1 || p.pgid <= 1) return false;
  *out = p;
  return true;
}

std::string held_output_warning(long long grace_ms, const std::string& holders) {
  std::string names;
  size_t start = 0;
  int n = 0;
  while (start < holders.size() && n < 8) {
    size_t nl = holders.find('\n', start);
    std::string line = holders.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? holders.size() : nl + 1;
    size_t sp = line.find(' ');
    if (sp == std::string::npos || sp == 0) continue;
    names += std::string(names.empty() ? "" : ", ") + "PID " + line.substr(0, sp) + " (" + line.substr(sp + 1) + ")";
    ++n;
  }
  std::string secs = fmt::format("{:g}", static_cast<double>(grace_ms) / 1000.0);
  return "output still held open " + secs + "s after the command exited" +
         (names.empty() ? "" : ", by " + names) + ": left running, not waited for";
}

std::string pid_marker(std::string_view run_id) { return "[ratchet-pid " + std::string(run_id) + "] "; }

PidMarkerFilter::PidMarkerFilter(std::string_view run_id) : marker_(pid_marker(run_id)) {
  if (run_id.empty()) done_ = true;
}

void PidMarkerFilter::feed(const char* data, size_t n, std::string* out) {
  if (done_) {
    out->append(data, n);
    return;
  }
  const size_t first = std::min(n, kWindow > seen_ ? kWindow - seen_ : 0);
  held_.append(data, first);
  seen_ += first;
  scan(out);
  if (!done_ && seen_ >= kWindow) {  // no marker in the window: all of it is output
    done_ = true;
    out->append(held_);
    held_.clear();
  }
  if (done_) out->append(data + first, n - first);
}

void PidMarkerFilter::scan(std::string* out) {
  for (;;) {
    size_t at = held_.find(marker_);
    if (at == std::string::npos) {
      // Everything but a possible start of the marker is output already.
      size_t keep = std::min(held_.size(), marker_.size() - 1);
      out->append(held_, 0, held_.size() - keep);
      held_.erase(0, held_.size() - keep);
      return;
    }
    size_t nl = held_.find('\n', at);
    if (nl == std::string::npos) {  // the line is not complete yet
      out->append(held_, 0, at);
      held_.erase(0, at);
      if (held_.size() > 256) {  // far longer than a marker line: not one
        out->append(held_, 0, marker_.size());
        held_.erase(0, marker_.size());
        continue;
      }
      return;
    }
    std::string_view fields(held_.data() + at + marker_.size(), nl - at - marker_.size());
    if (parse_remote_process(fields, &proc_)) {
      out->append(held_, 0, at);
      out->append(held_, nl + 1);
      held_.clear();
      done_ = true;
      return;
    }
    // A look-alike that does not parse is output; look further on.
    out->append(held_, 0, nl + 1);
    held_.erase(0, nl + 1);
  }
}

void PidMarkerFilter::finish(std::string* out) {
  out->append(held_);
  held_.clear();
  done_ = true;
}

}  // namespace ratchet::transport
