#include "report/page.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "report/format.h"
#include "report/html.h"
#include "report/timeline.h"

namespace ratchet::report {

namespace {

// The page's only style. No font, image or script is loaded; the CSP below
// makes sure of it, even if an escaping bug let markup through. Every status
// colour carries its text at a contrast of 4.5:1 or more (white, or #222 on the
// light ones: escalated, skipped, not_probed, would_act, none); a timeline row
// is two lanes, the bars with their labels above and the markers (rung, retry,
// reconnect, reboot) below, so that no marker covers a label (the Chromium test
// checks both: tests/report/browser/check_report.js).
constexpr const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.4em;margin:0 0 .4em}h2{font-size:1.15em;margin:1.2em 0 .4em}h3{font-size:1.05em;margin:1em 0 .3em}
code,pre{font-family:ui-monospace,monospace;font-size:12px}pre{white-space:pre-wrap;word-break:break-all;margin:0}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.meta th{width:11em}.dim{color:#777}.bad{color:#b00020}.good{color:#1b5e20}
.banner{padding:.5em .8em;margin:.5em 0;border-radius:4px;background:#fff3cd;border:1px solid #e0c060}
.banner.broken{background:#fde2e4;border-color:#d08080}
.badge{display:inline-block;padding:0 .45em;border-radius:3px;color:#fff;font-size:12px}
.st-ok{background:#2e7d32}.st-changed{background:#1565c0}.st-escalated{background:#ef6c00}.st-failed{background:#c62828}
.st-skipped,.st-not_probed{background:#9e9e9e}.st-unreachable,.st-host_key{background:#6a1b9a}
.st-interrupted{background:#5d4037}.st-would_act{background:#f9a825}.st-could_not_check{background:#ad1457}
.st-none{background:repeating-linear-gradient(45deg,#d6d6d6,#d6d6d6 4px,#ececec 4px,#ececec 8px);color:#222}.st-other{background:#455a64}
.legend{margin:.3em 0}.legend .key{display:inline-block;color:#fff;padding:0 .4em;margin-right:.3em;border-radius:3px;font-size:12px}
.legend .mk{margin-right:.8em;font-size:12px}
.row,.axis{display:flex;align-items:center;height:24px;border-bottom:1px solid #f0f0f0}.axis{height:20px}
.row .name,.axis .name{flex:0 0 12em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;padding-right:.5em;
 color:#222;background:none;text-decoration:none;font-family:ui-monospace,monospace;font-size:12px}
.track{position:relative;flex:1;height:24px;background:#fafafa}.axis .track{height:16px}
.bar{position:absolute;top:0;height:13px;min-width:2px;border-radius:2px;overflow:hidden;color:#fff;
 text-decoration:none;font-size:10px;line-height:13px;box-shadow:inset -1px 0 #fff}
.bar .label{padding-left:2px;white-space:nowrap}
.mark{position:absolute;top:13px;height:11px;line-height:11px;transform:translateX(-50%);font-size:10px;color:#000;pointer-events:auto}
.mark.bad{color:#c62828}.mark.ok{color:#2e7d32}
.tick{position:absolute;font-size:10px;color:#777;transform:translateX(-50%);white-space:nowrap}.tick:first-child{transform:none}.tick:last-child{transform:translateX(-100%)}
.track .note{font-size:11px;color:#6a1b9a;padding-left:4px;white-space:nowrap}
details.step{border:1px solid #e4e4e4;border-radius:4px;margin:.3em 0;padding:.2em .5em}
details.step>summary{cursor:pointer}.reason{color:#555;margin-left:1.5em}
.cmds{margin:.4em 0;width:100%}.cmds td:nth-child(3){width:70%}
details.out summary{font-size:12px;color:#555;cursor:pointer}details.out pre{background:#f7f7f7;padding:4px;max-height:30em;overflow:auto}
.evidence{margin:.3em 0;font-size:13px}.holders,.kv{margin:.2em 0 .4em 1em;font-size:12px}.holders .node{color:#555}
.badge.st-escalated,.key.st-escalated,.bar.st-escalated,.badge.st-skipped,.key.st-skipped,.bar.st-skipped,
.badge.st-not_probed,.key.st-not_probed,.bar.st-not_probed,.badge.st-would_act,.key.st-would_act,.bar.st-would_act,
.badge.st-none,.key.st-none,.bar.st-none{color:#222}
)";

std::string row(std::string_view th, const std::string& td_html) {
  return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", th, td_html);
}

std::string header_html(const Source& src) {
  const Run& r = src.run;
  std::string title = r.exec.empty() ? r.playbook : "exec";
  std::string out = fmt::format("<header><h1>ratchet {}report: {}</h1>\n",
                                r.mode == "probe" ? "probe " : "", esc(title));
  if (!r.ended)
    out += fmt::format(
        R"(<div class="banner cut" id="cut">This run has no run_end: the transcript is cut (ratchet was killed, the disk filled, or the run is still going). The page shows what it holds{}.</div>)",
        src.cut_note.empty() ? "" : ": " + esc(src.cut_note));
  if (src.chain == ChainState::broken)
    out += fmt::format(R"(<div class="banner broken" id="chain-broken">Hash chain: {}</div>)",
                       esc(src.chain_text));
  out += R"(<table class="meta">)";
  if (!r.run_id.empty()) out += row("run", "<code>" + esc(r.run_id) + "</code>");
  if (src.runs > 1) out += row("in the file", fmt::format("run {} of {}", src.run_index, src.runs));
  if (!r.exec.empty()) out += row("command", "<code>" + esc(r.exec) + "</code>");
  if (!r.playbook.empty())
    out +=
        row("playbook", fmt::format("{} <code>{}</code><br>sha256 <code>{}</code>", esc(r.playbook),
                                    esc(r.playbook_path), esc(r.playbook_sha256)));
  out += row("run by", r.run_by.empty() ? std::string(R"(<span class="dim">not recorded</span>)")
                                        : esc(r.run_by));
  if (!r.argv.empty()) out += row("command line", "<code>" + esc(r.argv) + "</code>");
  out += row("started", esc(utc(r.t_start)));
  if (!r.plan_digest.empty())
    out += row("saved plan",
               fmt::format("digest <code>{}</code><br>{}, made by {} at {}", esc(r.plan_digest),
                           esc(r.plan_path), esc(r.plan_made_by), esc(r.plan_made_at)));
  else
    out += row("saved plan", R"(<span class="dim">none (ratchet run, not apply)</span>)");
  if (r.ended)
    out += row("exit status",
               fmt::format(R"(<span class="badge {}" id="exit-status">{}</span> exit {}{})",
                           status_class(r.status), esc(r.status), r.exit_code,
                           r.ms > 0 ? ", in " + duration(r.ms) : ""));
  else
    out += row(
        "exit status",
        R"(<span class="badge st-none" id="exit-status">no run_end</span> the run did not finish in this file)");
  std::string cls = src.chain == ChainState::intact ? "good" : "bad";
  out +=
      row("hash chain", fmt::format(R"(<span class="{}" id="chain" data-chain="{}">{}</span>)", cls,
                                    src.chain == ChainState::intact ? "intact"
                                    : src.chain == ChainState::cut  ? "cut"
                                                                    : "broken",
                                    esc(src.chain_text)));
  out += row("signed", fmt::format(R"(<span class="{}" id="signature" data-signature="{}">{}</span>)",
                                   src.signature_state == "good"  ? "good"
                                   : src.signature_state == "bad" || src.signature_state == "failed" ? "bad"
                                                                                                      : "dim",
                                   src.signature_state, esc(src.signature_text)));
  out +=
      row("transcript",
          "<code>" + esc(src.path) + "</code>" +
              (r.ratchet_version.empty() ? "" : ", written by ratchet " + esc(r.ratchet_version)));
  if (!r.unknown.empty()) {
    std::string names;
    for (const auto& n : r.unknown) names += (names.empty() ? "" : ", ") + n;
    out += row("not shown", "events this ratchet does not know: " + esc(names));
  }
  if (src.problems > 0)
    out += row(
        "note",
        fmt::format(
            "{} events have a field of another type than the format says (ratchet show names them)",
            src.problems));
  return out + "</table></header>\n";
}

std::string recap_html(const Source& src) {
  const Run& r = src.run;
  // The step statuses in the order a step climbs them, then any other a count names (a probe's
  // verdicts).
  std::vector<std::string> keys{"ok", "changed", "escalated", "failed", "skipped"};
  if (r.mode == "probe") keys = {"ok", "would_act", "could_not_check", "not_probed", "skipped"};
  for (const auto& h : r.hosts)
    for (const auto& kv : h.counts)
      if (std::find(keys.begin(), keys.end(), kv.first) == keys.end()) keys.push_back(kv.first);
  std::string out =
      R"(<section id="recap"><h2>Recap</h2><table class="recap"><tr><th>host</th><th>status</th>)";
  for (const auto& k : keys) out += "<th>" + esc(k) + "</th>";
  out += "<th>time</th><th>reason</th><th>digest</th></tr>\n";
  for (size_t hi = 0; hi < r.hosts.size(); ++hi) {
    const Host& h = r.hosts[hi];
    out += fmt::format(
        R"(<tr data-host="{}"><td><a href="#{}">{}</a></td><td><span class="badge {}">{}</span></td>)",
        esc(h.name), host_anchor(hi), esc(h.name), status_class(h.ended ? h.status : ""),
        h.ended ? esc(h.status) : "no host_end");
    for (const auto& k : keys) {
      long long n = 0;
      for (const auto& kv : h.counts)
        if (kv.first == k) n = kv.second;
      out += fmt::format("<td>{}</td>", h.ended ? std::to_string(n) : "");
    }
    std::string digest;
    for (const auto& [host, d] : src.host_digests)
      if (host == h.name) digest = d;
    out += fmt::format(R"(<td>{}</td><td>{}</td><td><code title="{}">{}</code></td></tr>)",
                       h.ended && h.ms > 0 ? duration(h.ms) : "", esc(h.reason), esc(digest),
                       esc(digest.substr(0, 12)));
    out += "\n";
  }
  return out + "</table></section>\n";
}

}  // namespace

std::string render_page(const Source& src, const DetailOptions& opt) {
  const Run& r = src.run;
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>ratchet report: {}{}</title>\n<style>{}</style></head>\n<body>\n",
                     esc(r.exec.empty() ? r.playbook : "exec"),
                     r.run_id.empty() ? "" : " " + esc(r.run_id), kStyle);
  out += header_html(src);
  out += timeline_html(r);  // the overview first: for 50 hosts the recap is long
  out += recap_html(src);
  out += R"(<section id="hosts"><h2>Steps per host</h2>)";
  for (size_t hi = 0; hi < r.hosts.size(); ++hi) out += host_details_html(r.hosts[hi], hi, opt);
  out +=
      "</section>\n<footer class=\"dim\"><p>Made by <code>ratchet report</code> from the "
      "transcript; "
      "it holds host output: keep it as private as the transcript.</p></footer>\n</body></html>\n";
  return out;
}

}  // namespace ratchet::report
