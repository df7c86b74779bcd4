#include "report/step_details.h"

#include <fmt/format.h>

#include "report/format.h"
#include "report/html.h"
#include "util/text.h"

namespace ratchet::report {

namespace {

std::string badge(const std::string& status, std::string_view none = "no end recorded") {
  return fmt::format(R"(<span class="badge {}">{}</span>)", status_class(status),
                     status.empty() ? esc(none) : esc(status));
}

std::string exit_text(const Command& c) {
  if (!c.ended) return "no exit recorded";
  std::string s;
  if (!c.signal.empty())
    s = "signal " + c.signal;
  else if (c.code)
    s = fmt::format("exit {}", *c.code);
  if (!c.error.empty()) s += (s.empty() ? "" : "; ") + c.error;
  if (c.timed_out) s += (s.empty() ? "" : "; ") + std::string("timed out");
  if (!c.warning.empty()) s += (s.empty() ? "" : "; ") + c.warning;
  return s.empty() ? "no status" : s;
}

bool command_failed(const Command& c) {
  return !c.ended || c.timed_out || !c.signal.empty() || !c.error.empty() ||
         (c.code && *c.code != 0);
}

std::string output_html(const Output& o, const DetailOptions& opt) {
  std::string sum = fmt::format("{}, {} bytes", esc(o.stream), o.bytes);
  if (o.redacted)
    return fmt::format(R"(<div class="out">{}: not kept (the input held a secret)</div>)", sum);
  if (o.binary) sum += ", not UTF-8 (\\xNN for each byte that is not)";
  if (o.dropped > 0)
    sum += fmt::format(", {} bytes cut from the middle by the capture cap", o.dropped);
  bool cut = false;
  std::string body = esc_capped(o.data, opt.output_cap, &cut);
  if (cut)
    sum += fmt::format(", first {} of the {} kept shown (all of it is in the transcript)",
                       opt.output_cap, o.data.size());
  return fmt::format(R"(<details class="out"><summary>{}</summary><pre>{}</pre></details>)", sum,
                     body);
}

// Below a holder's files: each device target it holds through another node of
// the same number (a container's own /dev/nvidia0), and each target held
// through a thread's own descriptor table, in the words `ratchet show` uses.
std::string held_through(const Holder& h) {
  std::string out;
  for (const auto& n : h.nodes)
    out += fmt::format(R"(<div class="node">holds {}{}{}: same device {} as {}</div>)",
                       n.deleted ? "the deleted node " : "", esc(util::quoted_name(n.node)),
                       n.mount_ns.empty() ? "" : " of mount namespace " + esc(n.mount_ns), esc(n.device),
                       esc(util::quoted_name(n.target)));
  for (const auto& t : h.threads)
    out += fmt::format(R"(<div class="node">holds {} through its thread {} (a descriptor table of its own)</div>)",
                       esc(util::quoted_name(t.target)), esc(t.tid));
  return out;
}

std::string holders_table(const std::vector<Holder>& hs, std::string_view caption) {
  std::string out = fmt::format(
      R"(<table class="holders"><caption>{}</caption><tr><th>PID</th><th>user</th><th>comm</th>)"
      R"(<th>started</th><th>state</th><th>owner</th><th>command line</th><th>files</th></tr>)",
      caption);
  for (const auto& h : hs)
    out += fmt::format(
        R"(<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td><pre>{}</pre>{}</td></tr>)",
        esc(h.pid), esc(h.user), esc(h.comm), esc(h.started), esc(h.state), esc(h.owner), esc(h.cmdline), esc(h.files),
        held_through(h));
  return out + "</table>";
}

std::string evidence_html(const Evidence& e) {
  std::string verdict;
  if (e.could_not_check)
    verdict = "could not check";
  else if (e.holds)
    verdict = *e.holds ? "holds" : "does not hold";
  else if (e.ok)
    verdict = *e.ok ? "did what it should" : "did not do what it should";
  std::string cls =
      e.could_not_check || (e.holds && !*e.holds) || (e.ok && !*e.ok) ? "bad" : "good";
  std::string out = fmt::format(
      R"(<div class="evidence {}"><b>evidence</b>, rung {}{}{}{})", cls, e.rung,
      e.role.empty() ? "" : ", " + esc(e.role), verdict.empty() ? "" : ": " + verdict,
      e.note.empty() ? "" : fmt::format(R"( &mdash; <span class="note">{}</span>)", esc(e.note)));
  if (!e.holders.empty()) out += holders_table(e.holders, "holders found");
  if (!e.signalled.empty()) out += holders_table(e.signalled, "signalled");
  if (!e.other.empty()) {
    out += R"(<table class="kv">)";
    for (const auto& [k, v] : e.other)
      out += fmt::format(R"(<tr><th>{}</th><td><pre>{}</pre></td></tr>)", esc(k), esc(v));
    out += "</table>";
  }
  return out + "</div>";
}

std::string step_html(const Step& s, size_t hi, size_t si, const DetailOptions& opt) {
  bool open = s.status == "failed" || s.status.empty() || s.status == "could_not_check";
  std::string out = fmt::format(
      R"(<details class="step" id="{}" data-step="{}" data-status="{}"{}><summary>{} <code>{}</code> {} <span class="dim">{}, {}{}</span>{}</summary>)",
      step_anchor(hi, si), esc(s.id), esc(s.status), open ? " open" : "", badge(s.status),
      esc(s.id), esc(s.name), esc(s.kind),
      duration(s.ms ? s.ms : (s.t_end ? s.t_end - s.t_start : 0)),
      s.rung > 0 ? fmt::format(", rung {}", s.rung) : "",
      s.reason.empty() ? "" : fmt::format(R"(<div class="reason">{}</div>)", esc(s.reason)));
  if (!s.commands.empty()) {
    out +=
        R"(<table class="cmds"><tr><th>rung</th><th>role</th><th>command (as planned)</th><th>exit</th><th>time</th></tr>)";
    for (const auto& c : s.commands) {
      out += fmt::format(R"(<tr><td>{}</td><td>{}</td><td><pre class="cmd">{}</pre>)", c.rung,
                         esc(c.role), esc(c.command));
      for (const auto& o : c.outputs) out += output_html(o, opt);
      out += fmt::format(R"(</td><td class="{}">{}</td><td>{}</td></tr>)",
                         command_failed(c) ? "bad" : "good", esc(exit_text(c)),
                         c.ended ? duration(c.ms) : "");
    }
    out += "</table>";
  }
  for (const auto& e : s.evidence) out += evidence_html(e);
  return out + "</details>\n";
}

}  // namespace

std::string host_details_html(const Host& h, size_t hi, const DetailOptions& opt) {
  std::string out =
      fmt::format(R"(<section class="host" id="{}" data-host="{}"><h3>{} {}</h3>)", host_anchor(hi),
                  esc(h.name), esc(h.name), badge(h.ended ? h.status : "", "no host_end recorded"));
  if (h.connected)
    out += fmt::format(
        R"(<p class="conn">{}@{}:{}{}, host key <code>{}</code>, {}, connected in {}</p>)",
        esc(h.user), esc(h.address), h.port, h.via.empty() ? "" : " via " + esc(h.via),
        esc(h.fingerprint), esc(h.auth_method), duration(h.connect_ms));
  if (!h.unreachable_cause.empty())
    out += fmt::format(R"(<p class="conn bad">unreachable ({}): {}</p>)", esc(h.unreachable_cause),
                       esc(h.unreachable_message));
  if (!h.reason.empty()) out += fmt::format(R"(<p class="reason">{}</p>)", esc(h.reason));
  for (const auto& m : h.marks)
    out += fmt::format(R"(<p class="markline">{}: {}</p>)", utc(m.t),
                       esc(m.step.empty() ? m.text : m.step + ": " + m.text));
  for (size_t si = 0; si < h.steps.size(); ++si) out += step_html(h.steps[si], hi, si, opt);
  return out + "</section>\n";
}

}  // namespace ratchet::report
