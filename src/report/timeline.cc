#include "report/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "report/format.h"
#include "report/html.h"

namespace ratchet::report {

namespace {

/// Where a time falls on the axis, in percent of the run's span.
struct Axis {
  long long t0 = 0, span = 1;
  double at(long long t) const { return std::clamp((t - t0) * 100.0 / span, 0.0, 100.0); }
};

/// A marker at time `t`: a glyph with its explanation as a tooltip.
std::string mark_html(const Axis& ax, long long t, std::string_view cls, std::string_view glyph,
                      const std::string& title) {
  return fmt::format(R"(<span class="mark {}" style="left:{:.3f}%" title="{}">{}</span>)", cls,
                     ax.at(t), esc(title), glyph);
}

std::string step_bar(const Axis& ax, const Host& h, size_t hi, size_t si, long long run_end) {
  const Step& s = h.steps[si];
  long long end = s.t_end ? s.t_end : (h.t_end ? h.t_end : run_end);
  double left = ax.at(s.t_start), width = std::max(ax.at(end) - left, 0.25);
  std::string title = fmt::format(
      "{} ({}): {}{}, {}", s.id, s.name, s.status.empty() ? "no end recorded" : s.status,
      s.rung > 0 ? fmt::format(" at rung {}", s.rung) : "", duration(end - s.t_start));
  if (!s.reason.empty()) title += "; " + s.reason;
  std::string out =
      fmt::format(R"(<a class="bar {}" href="#{}" style="left:{:.3f}%;width:{:.3f}%" title="{}">)",
                  status_class(s.status), step_anchor(hi, si), left, width, esc(title));
  out += fmt::format(R"(<span class="label">{}{}</span>)", esc(s.id),
                     s.rung > 0 ? fmt::format(" r{}", s.rung) : "");
  out += "</a>";
  // Rungs and retries, as ticks where their action was sent.
  std::map<int, int> actions;  // rung -> actions sent so far
  for (const auto& c : s.commands) {
    if (c.role != "action" || c.t == 0) continue;
    int n = ++actions[c.rung];
    if (c.rung > 0 && n == 1)
      out += mark_html(ax, c.t, "rung", "&#9650;",
                       fmt::format("{}: rung {}: {}", s.id, c.rung, c.command));
    else if (n > 1)
      out += mark_html(ax, c.t, "retry", "&#8635;",
                       fmt::format("{}: retry {} of the action: {}", s.id, n - 1, c.command));
  }
  return out;
}

}  // namespace

std::string timeline_html(const Run& run) {
  Axis ax{run.t_start, std::max<long long>(run.t_last - run.t_start, 1)};
  std::string out = R"(<section id="timeline"><h2>Timeline</h2>)";
  out += R"(<div class="legend">)";
  for (const char* s : {"ok", "changed", "escalated", "failed", "skipped"})
    out += fmt::format(R"(<span class="key {}">{}</span>)", status_class(s), s);
  out += R"(<span class="key st-none">no end recorded</span>)"
         R"(<span class="mk">&#9650; rung</span><span class="mk">&#8635; retry</span>)"
         R"(<span class="mk">&#8644; reconnect</span><span class="mk">&#8623; reboot</span></div>)";
  out += R"(<div class="axis"><span class="name"></span><div class="track">)";
  for (int k = 0; k <= 4; ++k)
    out += fmt::format(R"(<span class="tick" style="left:{}%">{}</span>)", k * 25,
                       duration(ax.span * k / 4));
  out += "</div></div>\n";
  for (size_t hi = 0; hi < run.hosts.size(); ++hi) {
    const Host& h = run.hosts[hi];
    std::string status = h.ended ? h.status : "";
    out += fmt::format(
        R"(<div class="row" data-host="{}"><a class="name {}" href="#{}" title="{}">{}</a>)",
        esc(h.name), status_class(status), host_anchor(hi),
        esc(h.name + ": " + (status.empty() ? "no host_end recorded" : status)), esc(h.name));
    out += R"(<div class="track">)";
    if (!h.unreachable_cause.empty())
      out += fmt::format(R"(<span class="note">unreachable ({}): {}</span>)",
                         esc(h.unreachable_cause), esc(h.unreachable_message));
    for (size_t si = 0; si < h.steps.size(); ++si) out += step_bar(ax, h, hi, si, run.t_last);
    for (const auto& m : h.marks) {
      switch (m.kind) {
        case Mark::Kind::reconnect:
          out += mark_html(ax, m.t, m.ok ? "reconnect ok" : "reconnect bad", "&#8644;",
                           m.step + ": " + m.text);
          break;
        case Mark::Kind::reboot_wait:
          out += mark_html(ax, m.t, "reboot", "&#8623;", m.step + ": " + m.text);
          break;
        case Mark::Kind::back_after_reboot:
          out += mark_html(ax, m.t, "reboot ok", "&#8623;", m.text);
          break;
      }
    }
    out += "</div></div>\n";
  }
  return out + "</section>\n";
}

}  // namespace ratchet::report
