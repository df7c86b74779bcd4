#include "transcript/render.h"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "transcript/events.h"
#include "transcript/sign.h"
#include "transcript/value_json.h"
#include "util/duration.h"
#include "util/gpu_table.h"
#include "util/owner_words.h"
#include "util/text.h"

namespace ratchet::transcript {

using nlohmann::json;

static std::string str(const json& e, const char* k) {
  auto it = e.find(k);
  if (it == e.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// A field as a whole number; nullopt when absent or of another type. A transcript
// may be hand-edited or foreign: a field of the wrong type (a string "10", 1e300,
// an object) must not stop `show` (nlohmann's get<> throws, or is UB for a double
// out of range).
static std::optional<long long> integer(const json& v) {
  if (!v.is_number_integer()) return std::nullopt;
  return v.get<long long>();
}

static std::optional<long long> integer(const json& e, const char* k) {
  auto it = e.find(k);
  return it == e.end() ? std::nullopt : integer(*it);
}

static bool flag(const json& e, const char* k) {
  auto it = e.find(k);
  return it != e.end() && it->is_boolean() && it->get<bool>();
}

static std::string dur(const json& e) {
  auto ms = integer(e, "ms");
  if (!ms) return str(e, "ms");  // absent: ""; of another type: as written
  return util::format_duration(util::Millis(*ms));
}

static std::string first_line(const std::string& s, size_t max) {
  std::string t = util::trim_lines(s, 1, max);
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t;
}

std::vector<json> filter(const std::vector<json>& events, const RenderOptions& opt) {
  std::vector<json> out;
  for (const auto& e : events) {
    if (!opt.host.empty() && e.contains("host") && str(e, "host") != opt.host) continue;
    if (!opt.step.empty() && e.contains("step") && str(e, "step") != opt.step) continue;
    if (!opt.step.empty() && !e.contains("step") && e.contains("host")) continue;
    out.push_back(e);
  }
  return out;
}

namespace {

/// What render() has built so far: the run's own lines, each host's lines
/// (hosts that ran in parallel print apart) and the closing lines.
struct Page {
  const RenderOptions& opt;
  std::string head;  // run_start, host_library, batch_start
  std::string tail;  // run_end, and events of no host
  std::vector<std::string> host_order;
  std::map<std::string, std::string> body;
  std::map<std::string, std::string> pending_cmd;  // host -> current command line
  std::map<std::string, std::string> pending_out;  // host -> its output, printed after the exit
  std::string what = "run";  // "probe" when run_start says mode = "probe" (plan --probe)
  std::string run_id;        // run_start's run_id
  bool several = false;      // the file holds more than one run: each host heading names its run
};

/// The line that heads a host's lines: "host NAME" for the one run of a file;
/// a probe's, and each run's of a file of several (a probed apply), name the
/// run, so that a probe never reads as part of the run after it.
std::string host_heading(const Page& p, const std::string& host) {
  if (p.what == "probe") return fmt::format("probe {} on host {} (read-only)\n", p.run_id, host);
  if (p.several) return fmt::format("run {} on host {}\n", p.run_id, host);
  return fmt::format("host {}\n", host);
}

/// Lines for one event: `b` is its host's lines (the tail for an event of no host).
using RenderFn = void (*)(Page& p, const json& e, const std::string& host, std::string& b);

std::string list_of(const json& e, const char* k, const char* first, const char* sep) {
  std::string s;
  if (e.contains(k) && e[k].is_array())
    for (const auto& v : e[k]) s += (s.empty() ? first : sep) + (v.is_string() ? v.get<std::string>() : v.dump());
  return s;
}

void on_run_start(Page& p, const json& e, const std::string&, std::string&) {
  if (e.contains("exec"))
    p.head += fmt::format("exec of `{}` on {}, ratchet {}\n", first_line(str(e, "exec"), 100), str(e, "targets"),
                          str(e, "ratchet_version"));
  else {
    p.what = str(e, "mode") == "probe" ? "probe" : "run";
    p.run_id = str(e, "run_id");
    p.head += fmt::format("{} {} of {} ({}), playbook sha256 {}, ratchet {}\n", p.what, str(e, "run_id"),
                          str(e, "playbook"), str(e, "playbook_path"), str(e, "playbook_sha256").substr(0, 12),
                          str(e, "ratchet_version"));
    if (p.what == "probe") p.head += "read-only: each step's check sent once, no action or rung (plan --probe)\n";
  }
  p.head += fmt::format("started {}\n", str(e, "t"));
  if (auto sel = e.find("selection"); sel != e.end() && sel->is_object()) {  // --tags, --skip-tags, --start-at, --step
    // As plan and run print it (plan::selection_lines).
    std::string how = list_of(*sel, "tags", " --tags ", " --tags ") +
                      list_of(*sel, "skip_tags", " --skip-tags ", " --skip-tags ") +
                      (str(*sel, "start_at").empty() ? "" : " --start-at " + str(*sel, "start_at")) +
                      list_of(*sel, "steps", " --step ", " --step ");
    std::string left;
    size_t n = 0;
    if (auto l = sel->find("not_selected"); l != sel->end() && l->is_array())
      for (const auto& u : *l)
        if (u.is_object()) {
          left += fmt::format("  not selected: {}: {}\n", str(u, "step"), str(u, "reason"));
          ++n;
        }
    p.head += fmt::format("selection:{}; {} step(s) left out{}\n{}", how, n, n ? ":" : "", left);
  }
  if (e.contains("plan") && e["plan"].is_object()) {  // apply: the saved plan it executed
    const auto& plan = e["plan"];
    p.head += fmt::format("applied plan {} ({}), made by {} at {}\n", str(plan, "digest"),
                          str(plan, "path"), str(plan, "made_by"), str(plan, "made_at"));
  }
}

void on_host_library(Page& p, const json& e, const std::string&, std::string&) {
  p.head += fmt::format("host library sha256 {}, {} bytes\n", str(e, "sha256").substr(0, 12),
                        e.contains("text") && e["text"].is_string() ? e["text"].get_ref<const std::string&>().size() : 0);
}

void on_batch_start(Page& p, const json& e, const std::string&, std::string&) {
  p.head += fmt::format("batch {}/{}: {}\n", str(e, "batch"), str(e, "batches"), list_of(e, "hosts", "", ", "));
}

void on_connect(Page&, const json& e, const std::string&, std::string& b) {
  b += fmt::format("  {} {}@{}:{}{} host key {} ({}, {})\n",
                   flag(e, "after_reboot") ? "connected after reboot" : "connected", str(e, "user"), str(e, "address"),
                   str(e, "port"), list_of(e, "via", " via ", ", "), str(e, "fingerprint"), str(e, "auth_method"), dur(e));
}

void on_unreachable(Page&, const json& e, const std::string&, std::string& b) {
  b += fmt::format("  UNREACHABLE ({}): {}\n", str(e, "cause"), str(e, "message"));
}

void on_reboot_wait(Page&, const json& e, const std::string&, std::string& b) {
  b += e.contains("cause") ? fmt::format("      waiting for the reboot, attempt {}: {}: {}\n", str(e, "attempt"),
                                         str(e, "cause"), str(e, "message"))
                           : fmt::format("      waiting for the reboot, attempt {}: {}\n", str(e, "attempt"),
                                         str(e, "message"));
}

void on_reconnect(Page&, const json& e, const std::string&, std::string& b) {
  b += flag(e, "ok") ? fmt::format("      reconnected (attempt {}, after {})\n", str(e, "attempt"), dur(e))
                     : fmt::format("      reconnect attempt {} failed ({}): {}\n", str(e, "attempt"), str(e, "cause"),
                                   str(e, "message"));
}

void on_step_start(Page&, const json& e, const std::string&, std::string& b) {
  b += fmt::format("  - {} [{}] {}\n", str(e, "step"), str(e, "kind"), str(e, "name"));
}

void on_command(Page& p, const json& e, const std::string& host, std::string&) {
  if (!p.opt.commands) return;
  auto r = integer(e, "rung");
  std::string rung = r.value_or(0) ? fmt::format("rung {} ", *r) : "";
  std::string& line = p.pending_cmd[host];
  line = fmt::format("      {}{:<6} $ {}", rung, str(e, "role"), util::trim_lines(str(e, "command"), 1, 100));
  while (!line.empty() && line.back() == '\n') line.pop_back();
}

void on_output(Page& p, const json& e, const std::string& host, std::string&) {
  if (!p.opt.commands) return;
  // Bytes that are not UTF-8 are recorded as base64: shown decoded, each
  // bad byte as \xNN, the rest as text.
  std::string data = str(e, "data");
  if (flag(e, "redacted")) data = fmt::format("<{} bytes, not recorded: the command's input held a secret>", str(e, "bytes"));
  else if (!e.contains("data") && !util::unbase64(str(e, "data_b64"), &data)) data = "<data_b64 that is not base64>";
  std::string t = util::trim_lines(data, p.opt.output_lines, 120);
  if (!t.empty())
    p.pending_out[host] += util::indent_lines(t, str(e, "stream") == "stderr" ? "          ! " : "          | ");
}

void on_exit(Page& p, const json& e, const std::string& host, std::string& b) {
  if (!p.opt.commands) return;
  std::string how = e.contains("signal")          ? "SIG" + str(e, "signal")
                    : !str(e, "error").empty() ? "error: " + str(e, "error")
                                               : fmt::format("exit {}", str(e, "code"));
  if (flag(e, "timed_out")) how += ", timed out";
  b += fmt::format("{}  → {} ({})\n", p.pending_cmd[host], how, dur(e));
  b += p.pending_out[host];
  p.pending_out[host].clear();
  p.pending_cmd[host].clear();
}

void on_evidence(Page&, const json& e, const std::string&, std::string& b) {
  std::string lines;
  for (const char* k : {"holders", "signalled"})
    if (e.contains(k) && e[k].is_array())
      for (const auto& h : e[k]) {
        const std::string owner = h.contains("owner") ? util::owner_words(from_json(h["owner"])) : "";
        lines += fmt::format("          {} PID {} user {} started {}{} cmd: {}\n", k == std::string("holders") ? "holder" : "signalled",
                             str(h, "pid"), str(h, "user"), str(h, "started"), owner.empty() ? "" : " owner " + owner,
                             first_line(str(h, "cmdline"), 80));
        if (h.contains("nodes") && h["nodes"].is_array())  // a device held through another node
          for (const auto& n : h["nodes"])
            lines += fmt::format("            holds {}{}{}: same device {} as {}\n",
                                 n.contains("deleted") ? "the deleted node " : "", util::quoted_name(str(n, "node")),
                                 n.contains("mount_ns") ? " of mount namespace " + str(n, "mount_ns") : "",
                                 str(n, "device"), util::quoted_name(str(n, "target")));
        if (h.contains("threads") && h["threads"].is_array())  // through a thread's own descriptor table
          for (const auto& t : h["threads"])
            lines += fmt::format("            holds {} through its thread {} (a descriptor table of its own)\n",
                                 util::quoted_name(str(t, "target")), str(t, "tid"));
      }
  auto frozen_cgroups = [&](const json& u) {  // thawing releases it
    if (u.contains("frozen") && u["frozen"].is_array())
      for (const auto& c : u["frozen"])
        lines += fmt::format("            in the frozen cgroup {} ({}): thaw it: {}\n",
                             util::quoted_name(str(c, "cgroup")), str(c, "version"), str(c, "thaw"));
  };
  if (e.contains("unkillable") && e["unkillable"].is_array())
    for (const auto& u : e["unkillable"]) {
      lines += fmt::format("          unkillable PID {} ({}) in state {}, wchan {}\n", str(u, "pid"), str(u, "comm"),
                           str(u, "state"), str(u, "wchan"));
      frozen_cgroups(u);
    }
  if (e.contains("frozen") && e["frozen"].is_array())
    for (const auto& f : e["frozen"]) {
      lines += fmt::format("          frozen PID {} ({}) in state {}: the signal is pending until it is thawed\n",
                           str(f, "pid"), str(f, "comm"), str(f, "state"));
      frozen_cgroups(f);
    }
  if (e.contains("traced") && e["traced"].is_array())
    for (const auto& t : e["traced"])
      lines += t.contains("tracer")  // tracer_pid 0: not visible from the scan's PID namespace
                   ? fmt::format("          traced PID {} ({}) is stopped by a tracer {}\n", str(t, "pid"),
                                 str(t, "comm"), str(t, "tracer"))
                   : fmt::format("          traced PID {} ({}) is stopped by its tracer PID {} ({})\n", str(t, "pid"),
                                 str(t, "comm"), str(t, "tracer_pid"), str(t, "tracer_comm"));
  if (e.contains("gpus"))
    if (const util::Value gpus = from_json(e["gpus"]); util::is_gpu_evidence(gpus))
      for (const auto& l : util::gpu_lines(gpus)) lines += "          " + l + "\n";
  if (e.contains("boot_id_before") || e.contains("boot_id_after"))
    lines += fmt::format("          rebooted: boot id {} → {} ({} attempts, back after {})\n", str(e, "boot_id_before"),
                         str(e, "boot_id_after"), str(e, "attempts"),
                         integer(e, "back_ms") ? util::format_duration(util::Millis(*integer(e, "back_ms")))
                                               : str(e, "back_ms"));
  if (e.contains("note")) lines += fmt::format("          note: {}\n", str(e, "note"));
  if (lines.empty()) {  // nothing more than a verdict
    std::string verdict = e.contains("holds") ? (flag(e, "holds") ? ": holds" : ": does not hold")
                          : e.contains("ok")  ? (flag(e, "ok") ? ": ok" : ": not ok")
                                              : "";
    lines = fmt::format("          evidence{}{}\n", str(e, "role").empty() ? "" : " of the " + str(e, "role"), verdict);
  }
  b += lines;
}

void on_step_end(Page&, const json& e, const std::string&, std::string& b) {
  std::string why = e.contains("reason") && !str(e, "reason").empty() ? ": " + str(e, "reason") : "";
  if (str(e, "status") == "skipped") {  // never ran: no time to give
    b += fmt::format("    skipped{}\n", why);
    return;
  }
  std::string rung = str(e, "status") == "escalated" || str(e, "status") == "failed"
                         ? fmt::format(" (rung {})", str(e, "rung"))
                         : "";
  b += fmt::format("    {}{} in {}{}\n", str(e, "status"), rung, dur(e), why);
}

void on_host_end(Page&, const json& e, const std::string&, std::string& b) {
  std::string counts;
  if (e.contains("counts") && e["counts"].is_object())
    for (auto it = e["counts"].begin(); it != e["counts"].end(); ++it)
      if (auto n = integer(it.value()); n.value_or(0) > 0)
        counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", *n, it.key());
  std::string why = str(e, "status") != "ok" && !str(e, "reason").empty() ? ": " + str(e, "reason") : "";
  std::string at = str(e, "stopped_at").empty() ? "" : fmt::format(" (stopped at {})", str(e, "stopped_at"));
  b += fmt::format("  host {}{}: {}{}\n", str(e, "status"), at, counts.empty() ? "nothing ran" : counts, why);
}

void on_lock(Page&, const json& e, const std::string&, std::string& b) {
  std::string what = str(e, "action") == "release" ? "release" : "take";
  b += fmt::format("  lock {} {}: {}\n", str(e, "path"), what, str(e, "message"));
}

void on_audit(Page&, const json& e, const std::string&, std::string& b) {
  b += flag(e, "ok") ? fmt::format("  audit line appended to {} (digest {})\n", str(e, "path"), str(e, "digest"))
                     : fmt::format("  warning: {}\n", str(e, "warning"));
}

void on_fetch(Page&, const json& e, const std::string&, std::string& b) {
  if (!flag(e, "ok")) {
    b += fmt::format("      not fetched: {}{}{}\n", str(e, "remote"), e.contains("error") ? ": " : "", str(e, "error"));
    return;
  }
  std::string line = "      fetched " + str(e, "remote");
  if (e.contains("local")) line += " → " + str(e, "local");
  if (e.contains("bytes")) line += fmt::format(" ({} bytes, sha256 {})", str(e, "bytes"), str(e, "sha256"));
  b += line + "\n";
}

void on_run_end(Page& p, const json& e, const std::string&, std::string&) {
  p.tail += fmt::format("{} {} (exit {}) at {}\n", p.what, str(e, "status"), str(e, "exit_code"), str(e, "t"));
}

void on_signature(Page& p, const json& e, const std::string&, std::string&) {
  if (e.contains("error"))
    p.tail += fmt::format("not signed: {}\n", str(e, "error"));
  else
    p.tail += fmt::format("signed: final head {} by key {} ({}; not checked here: show --verify --allowed-signers "
                          "FILE)\n",
                          str(e, "head"), str(e, "key"), str(e, "file"));
}

/// One renderer per kind of events.h (a test holds the two tables to each other).
const std::map<std::string_view, RenderFn>& renderers() {
  namespace ev = events;
  static const std::map<std::string_view, RenderFn> m = {
      {ev::kRunStart, on_run_start},     {ev::kHostLibrary, on_host_library}, {ev::kBatchStart, on_batch_start},
      {ev::kConnect, on_connect},        {ev::kUnreachable, on_unreachable},  {ev::kRebootWait, on_reboot_wait},
      {ev::kReconnect, on_reconnect},    {ev::kStepStart, on_step_start},     {ev::kCommand, on_command},
      {ev::kOutput, on_output},          {ev::kExit, on_exit},                {ev::kEvidence, on_evidence},
      {ev::kStepEnd, on_step_end},       {ev::kHostEnd, on_host_end},
      {ev::kLock, on_lock},              {ev::kAudit, on_audit},         {ev::kRunEnd, on_run_end},
      {ev::kFetch, on_fetch},            {ev::kSignature, on_signature},
  };
  return m;
}

/// A kind this table does not know (a newer ratchet's): named, never dropped.
void unknown(const json& e, const std::string& name, std::string& b) {
  std::string fields;
  for (auto it = e.begin(); it != e.end(); ++it)
    if (it.key() != "event" && it.key() != "t") fields += (fields.empty() ? "" : ", ") + it.key();
  b += fmt::format("  unknown event {}{}\n", name.empty() ? "(no name)" : name,
                   fields.empty() ? "" : " (" + fields + ")");
}

}  // namespace

namespace {

/// Adds event `e`'s lines to `p`, as its kind's renderer says.
void dispatch(Page& p, const json& e) {
  const std::string ev = str(e, "event");
  const std::string host = str(e, "host");
  if (!host.empty() && !p.body.count(host)) {
    p.host_order.push_back(host);
    p.body[host] = "";
  }
  std::string& b = host.empty() ? p.tail : p.body[host];
  auto it = e.contains("event") && e["event"].is_string() ? renderers().find(ev) : renderers().end();
  if (it != renderers().end()) it->second(p, e, host, b);
  else unknown(e, ev, b);
}

/// Everything here may hold what a host printed: no escape or control byte
/// reaches the terminal (a title change, an alternate screen, a clear); each
/// shows as \xNN, a backslash as \\ (util::escaped_line).
std::string terminal_safe(const std::string& out) {
  std::string safe;
  size_t start = 0;
  for (size_t nl; (nl = out.find('\n', start)) != std::string::npos; start = nl + 1)
    safe += util::escaped_line(std::string_view(out).substr(start, nl - start)) + "\n";
  if (start < out.size()) safe += util::escaped_line(std::string_view(out).substr(start));
  return safe;
}

}  // namespace

namespace {

bool is_run_start(const json& e) {
  auto it = e.find("event");
  return it != e.end() && it->is_string() && *it == events::kRunStart;
}

/// One run's events (from its run_start to the next) as render() prints them.
std::string render_run(const std::vector<json>& events, const RenderOptions& opt, bool several) {
  Page p{opt, {}, {}, {}, {}, {}, {}};
  p.several = several;
  for (const auto& e : events) dispatch(p, e);
  // A command with no exit: the run stopped while it ran (SIGKILL, a full disk).
  for (auto& [h, cmd] : p.pending_cmd)
    if (!cmd.empty()) (h.empty() ? p.tail : p.body[h]) += cmd + "  → no exit recorded: the run stopped here\n";
  for (auto& [h, text] : p.pending_out) (h.empty() ? p.tail : p.body[h]) += text;  // no exit after it
  std::string out = p.head;
  for (const auto& h : p.host_order) out += host_heading(p, h) + p.body[h];
  out += p.tail;
  return out;
}

}  // namespace

std::string render(const std::vector<json>& all, const RenderOptions& opt) {
  // Each run of the file (a probed apply's probe, then its run) on its own:
  // its head, its hosts, its end.
  std::vector<std::vector<json>> runs;
  for (const auto& e : filter(all, opt)) {
    if (runs.empty() || is_run_start(e)) runs.emplace_back();
    runs.back().push_back(e);
  }
  std::string out;
  for (const auto& r : runs) out += render_run(r, opt, runs.size() > 1);
  return terminal_safe(out);
}

struct Stream::State {
  RenderOptions opt;
  Page page{opt, {}, {}, {}, {}, {}, {}};
  std::string last_host;  ///< whose lines came last ("" = the run's)
  size_t runs = 0;        ///< run_start events seen
};

Stream::Stream(RenderOptions opt) : s_(std::make_unique<State>()) { s_->opt = std::move(opt); }

Stream::~Stream() = default;

std::string Stream::add(const json& e) {
  if (filter({e}, s_->opt).empty()) return "";
  Page& p = s_->page;
  if (is_run_start(e) && s_->runs++ > 0) {  // the next run of the file: its own page
    p.pending_cmd.clear();
    p.pending_out.clear();
    p.what = "run";
    p.several = true;
    s_->last_host.clear();
  }
  dispatch(p, e);
  std::string out;
  if (!p.head.empty()) s_->last_host.clear();
  out += p.head;
  p.head.clear();
  for (auto& [host, b] : p.body) {
    if (b.empty()) continue;
    if (host != s_->last_host) out += host_heading(p, host);
    s_->last_host = host;
    out += b;
    b.clear();
  }
  if (!p.tail.empty()) s_->last_host.clear();
  out += p.tail;
  p.tail.clear();
  return terminal_safe(out);
}

}  // namespace ratchet::transcript
