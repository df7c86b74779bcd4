#include "cli/live_progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cli/printer.h"
#include "util/text.h"

namespace ratchet::cli {

namespace {

bool term_ok(int fd) {
  if (!isatty(fd)) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::strcmp(term, "dumb") == 0);
}

void write_all(int fd, const std::string& s) {
  for (size_t off = 0; off < s.size();) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;  // a closed terminal: progress is best effort
    off += static_cast<size_t>(n);
  }
}

std::string elapsed(std::chrono::steady_clock::duration d) {
  long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  if (ms < 60'000) return fmt::format("{:.1f}s", ms / 1000.0);
  return fmt::format("{}m{:02d}s", ms / 60'000, static_cast<int>(ms / 1000 % 60));
}

}  // namespace

bool use_live(int fd) { return term_ok(fd); }

bool use_color(int fd) {
  const char* nc = std::getenv("NO_COLOR");
  return term_ok(fd) && !(nc && *nc);
}

LiveProgress::LiveProgress(const std::vector<std::string>& hosts, const std::vector<std::string>& steps,
                           int fd, bool color, const transcript::Writer* mask)
    : order_(hosts), step_ids_(steps), steps_(steps.size()), fd_(fd), color_(color), mask_(mask),
      t0_(Clock::now()) {
  for (const auto& h : hosts) rows_[h];
  thread_ = std::thread([this] { loop(); });
}

LiveProgress::~LiveProgress() { stop(); }

void LiveProgress::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  draw(true);
  stopped_ = true;
}

std::string LiveProgress::results_text(size_t cols) const {
  std::lock_guard<std::mutex> lock(mu_);
  return results_unlocked(cols);
}

std::string LiveProgress::results_unlocked(size_t cols) const {
  std::string out;
  if (cols < 20) cols = 20;
  if (order_.size() == 1) {  // one host: a line per step, as run prints them piped
    const std::string& host = order_[0];
    const Row& r = rows_.at(host);
    for (const auto& id : step_ids_) {
      auto it = r.results.find(id);
      if (it == r.results.end()) continue;  // never reached (unreachable, interrupted)
      out += util::escaped_line(step_result_line(host, id, it->second, mask_), cols - 1) + "\n";
    }
    return out;
  }
  // Several hosts: a row per host, a column per step.
  auto cell = [&](const Row& r, const std::string& id, std::string* status) {
    auto it = r.results.find(id);
    if (it == r.results.end()) {
      *status = "";
      return std::string("-");
    }
    const auto& o = it->second;
    *status = name(o.status);
    return o.status == engine::StepStatus::escalated || (o.status == engine::StepStatus::failed && o.rung > 0)
               ? fmt::format("{} (rung {})", name(o.status), o.rung)
               : std::string(name(o.status));
  };
  auto pad = [](std::string s, size_t n) {
    size_t c = util::columns(s);
    return c < n ? s + std::string(n - c, ' ') : s;
  };
  size_t host_w = 4;
  for (const auto& h : order_) host_w = std::max(host_w, util::columns(util::escaped_line(h)));
  host_w = std::min<size_t>(host_w, std::max<size_t>(8, cols / 3));
  std::vector<std::string> heads;
  std::vector<size_t> widths;
  for (const auto& id : step_ids_) {
    std::string head = util::escaped_line(id, 24);
    size_t w = util::columns(head);
    for (const auto& h : order_) {
      std::string st;
      w = std::max(w, util::columns(cell(rows_.at(h), id, &st)));
    }
    heads.push_back(head);
    widths.push_back(w);
  }
  // Steps side by side while they fit the width; the rest in a further table.
  for (size_t from = 0; from < step_ids_.size();) {
    size_t to = from, used = host_w;
    while (to < step_ids_.size() && (to == from || used + 2 + widths[to] < cols)) used += 2 + widths[to++];
    if (from > 0) out += "\n";
    std::string line = pad("host", host_w);
    for (size_t k = from; k < to; ++k) line += "  " + pad(heads[k], widths[k]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += util::escaped_line(line, cols - 1) + "\n";
    for (const auto& h : order_) {
      const Row& r = rows_.at(h);
      std::string row = pad(util::escaped_line(h, host_w), host_w);
      for (size_t k = from; k < to; ++k) {
        std::string st;
        std::string c = cell(r, step_ids_[k], &st);
        row += "  " + (k + 1 < to ? paint(st, pad(c, widths[k])) : paint(st, c));
      }
      out += row + "\n";
    }
    from = to;
  }
  return out;
}

void LiveProgress::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    draw(false);
    cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; });
  }
}

std::string LiveProgress::paint(const std::string& status, const std::string& text) const {
  if (!color_) return text;
  const char* c = "";
  if (status == "ok") c = "\x1b[32m";
  else if (status == "changed" || status == "escalated") c = "\x1b[33m";
  else if (status == "failed" || status == "unreachable" || status == "host_key") c = "\x1b[31m";
  else if (status == "running" || status == "connecting") c = "\x1b[36m";
  else if (status == "waiting" || status == "skipped") c = "\x1b[2m";
  else if (status == "interrupted") c = "\x1b[35m";
  return *c ? std::string(c) + text + "\x1b[0m" : text;
}

std::string LiveProgress::row_text(const std::string& host, const Row& r, size_t name_w,
                                   size_t cols) const {
  // Built plain (to measure and cut), then the status word is painted.
  std::string name = util::escaped_line(host, name_w);
  name += std::string(name_w - std::min(name_w, util::columns(name)), ' ');
  std::string state = fmt::format("{:<11}", r.state);
  std::string rest;
  auto now = r.done ? r.end : Clock::now();
  std::string time = r.start == Clock::time_point{} ? "" : elapsed(now - r.start);
  if (r.done) {
    std::string counts;
    for (const char* k : {"ok", "changed", "escalated", "failed", "skipped"}) {
      auto it = r.counts.find(k);
      if (it != r.counts.end() && it->second) counts += fmt::format("{}{}={}", counts.empty() ? "" : " ", k, it->second);
    }
    rest = fmt::format("{:<40} {:>7}", counts, time);
  } else if (r.state == "running") {
    std::string where = fmt::format("[{}/{}] {}", r.step_no, steps_, r.step);
    std::string what = r.rung > 0 ? fmt::format("rung {} {}", r.rung, r.role) : r.role;
    rest = fmt::format("{:<30} {:<16} {:>7}", where, what, time);
  } else {
    rest = time;
  }
  std::string plain_rest = util::escaped_line(rest);
  size_t used = name_w + 2 + 11 + 1;
  if (cols > used + 1) plain_rest = util::escaped_line(rest, cols - used - 1);
  else plain_rest.clear();
  return name + "  " + paint(r.state, state) + " " + plain_rest;
}

void LiveProgress::draw(bool final) {
  winsize ws{};
  size_t cols = 80, lines = 24;
  if (ioctl(fd_, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    cols = ws.ws_col;
    lines = ws.ws_row > 0 ? ws.ws_row : lines;
  }
  std::map<std::string, int> tally;
  for (const auto& [h, r] : rows_) tally[r.done ? r.state : r.state == "waiting" ? "waiting" : "running"]++;
  std::string head = fmt::format("ratchet: {} host(s)", order_.size());
  for (const char* k : {"running", "waiting", "ok", "changed", "escalated", "failed", "unreachable",
                        "host_key", "skipped", "interrupted"})
    if (tally[k]) head += fmt::format(", {} {}", tally[k], k);
  if (!batch_.empty()) head += "  " + batch_;
  head += "  " + elapsed(Clock::now() - t0_);

  size_t name_w = 4;
  for (const auto& h : order_) name_w = std::max(name_w, util::columns(h));
  name_w = std::min<size_t>(name_w, std::max<size_t>(8, cols / 3));

  // Which hosts fit: all when the terminal is tall enough, else the busy ones,
  // then failures, then waiting, then finished, shown in inventory order.
  // Header, the line the cursor rests on, and one spare row: the block never
  // starts at the screen's top row, where a terminal may take "erase below" for
  // a full clear and push the whole screen into its scrollback on every redraw.
  size_t room = lines > 4 ? lines - 3 : 1;
  std::vector<const std::string*> shown;
  size_t hidden = 0;
  if (order_.size() <= room) {
    for (const auto& h : order_) shown.push_back(&h);
  } else {
    size_t slots = room > 1 ? room - 1 : 0;  // one line says how many are hidden
    std::vector<int> rank(order_.size());
    for (size_t i = 0; i < order_.size(); ++i) {
      const Row& r = rows_.at(order_[i]);
      rank[i] = !r.done && r.state != "waiting" ? 0
                : r.done && (r.state == "failed" || r.state == "unreachable" || r.state == "host_key") ? 1
                : r.state == "waiting" ? 2 : 3;
    }
    std::vector<size_t> pick(order_.size());
    for (size_t i = 0; i < pick.size(); ++i) pick[i] = i;
    std::stable_sort(pick.begin(), pick.end(), [&](size_t a, size_t b) { return rank[a] < rank[b]; });
    pick.resize(std::min(slots, pick.size()));
    std::sort(pick.begin(), pick.end());
    for (size_t i : pick) shown.push_back(&order_[i]);
    hidden = order_.size() - shown.size();
  }
  std::string out;
  if (drawn_ > 0) out += fmt::format("\x1b[{}F", drawn_);  // back to the block's first line
  if (final) {  // the block gives way to every step's result, which stays
    out += "\x1b[2K" + util::escaped_line(head, cols - 1) + "\n\x1b[J" + results_unlocked(cols);
    drawn_ = 0;
    write_all(fd_, out);
    return;
  }
  // Each line is erased as it is rewritten; only what a taller block left
  // below is erased at the end.
  out += "\x1b[2K" + util::escaped_line(head, cols - 1) + "\n";
  for (const auto* h : shown) out += "\x1b[2K" + row_text(*h, rows_.at(*h), name_w, cols) + "\n";
  size_t n = 1 + shown.size();
  if (hidden) {
    out += "\x1b[2K" + util::escaped_line(fmt::format("  ... {} more host(s) not shown (the recap lists all)", hidden), cols - 1) + "\n";
    ++n;
  }
  out += "\x1b[J";
  drawn_ = n;
  write_all(fd_, out);
}

void LiveProgress::above(const std::string& text) {
  winsize ws{};
  size_t cols = 80;
  if (ioctl(fd_, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) cols = ws.ws_col;
  std::string out;
  if (drawn_ > 0) out += fmt::format("\x1b[{}F\x1b[J", drawn_);
  out += util::escaped_line(mask_ ? mask_->mask(text) : text, cols - 1) + "\n";
  drawn_ = 0;
  write_all(fd_, out);
  if (!stopping_) draw(false);
}

void LiveProgress::connecting(const std::string& host) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& r = rows_[host];
  r.state = "connecting";
  r.start = Clock::now();
}

void LiveProgress::connected(const std::string& host, const std::string&) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& r = rows_[host];
  r.state = "running";
  r.role = "connected";
}

void LiveProgress::unreachable(const std::string& host, const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  above(fmt::format("{}: UNREACHABLE {}", host, message));
}

void LiveProgress::step_started(const std::string& host, const std::string& step_id,
                                const std::string&) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& r = rows_[host];
  if (r.start == Clock::time_point{}) r.start = Clock::now();
  r.state = "running";
  r.step = step_id;
  r.step_no++;
  r.rung = 0;
  r.role = "";
}

void LiveProgress::command_started(const std::string& host, int rung, const std::string& role) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& r = rows_[host];
  if (r.start == Clock::time_point{}) r.start = Clock::now();
  if (r.state == "waiting") r.state = "connecting";
  r.rung = rung;
  r.role = role;
}

void LiveProgress::step_done(const std::string& host, const std::string& step_id,
                             const engine::StepOutcome& o) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& r = rows_[host];
  r.counts[std::string(name(o.status))]++;
  r.results[step_id] = o;
  r.role = o.rung > 0 ? fmt::format("{} (rung {})", name(o.status), o.rung) : std::string(name(o.status));  // until the next step
  r.rung = 0;
  if (o.status == engine::StepStatus::failed) {
    std::string rung = o.rung > 0 ? fmt::format(" (rung {})", o.rung) : "";
    above(fmt::format("{}: FAILED {}{}: {}", host, step_id, rung, o.reason));
  }
}

void LiveProgress::step_skipped(const std::string& host, const std::string& step_id,
                                const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& r = rows_[host];
  r.step_no++;
  r.counts["skipped"]++;
  engine::StepOutcome o;
  o.status = engine::StepStatus::skipped;
  o.reason = why;
  r.results[step_id] = o;
}

void LiveProgress::host_done(const engine::HostReport& rep) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& r = rows_[rep.host];
  if (r.start == Clock::time_point{}) r.start = Clock::now();
  r.done = true;
  r.end = Clock::now();
  if (rep.ms > 0) r.start = r.end - std::chrono::milliseconds(rep.ms);  // as the recap counts it
  r.state = name(rep.status);
  r.counts = rep.counts;
}

void LiveProgress::batch_started(int index, int count, const std::vector<std::string>& hosts) {
  std::lock_guard<std::mutex> lock(mu_);
  batch_ = fmt::format("batch {}/{} ({} hosts)", index, count, hosts.size());
}

}  // namespace ratchet::cli
