#include "transcript/render.h"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "util/duration.h"
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

std::string render(const std::vector<json>& all, const RenderOptions& opt) {
  auto events = filter(all, opt);
  std::string out;
  // Per host: buffered lines, so hosts that ran in parallel print apart.
  std::vector<std::string> host_order;
  std::map<std::string, std::string> body;
  std::map<std::string, std::string> pending_cmd;  // host -> current command line
  std::map<std::string, std::string> pending_out;  // host -> its output, printed after the exit
  std::string tail;
  for (const auto& e : events) {
    const std::string ev = str(e, "event");
    const std::string host = str(e, "host");
    if (!host.empty() && !body.count(host)) {
      host_order.push_back(host);
      body[host] = "";
    }
    std::string& b = host.empty() ? tail : body[host];
    if (ev == "run_start") {
      if (e.contains("exec"))
        out += fmt::format("exec of `{}` on {}, ratchet {}\n", first_line(str(e, "exec"), 100),
                           str(e, "targets"), str(e, "ratchet_version"));
      else
        out += fmt::format("run {} of {} ({}), playbook sha256 {}, ratchet {}\n", str(e, "run_id"),
                           str(e, "playbook"), str(e, "playbook_path"),
                           str(e, "playbook_sha256").substr(0, 12), str(e, "ratchet_version"));
      out += fmt::format("started {}\n", str(e, "t"));
      if (e.contains("plan") && e["plan"].is_object()) {
        const auto& p = e["plan"];
        out += fmt::format("applied plan {} ({}), made by {} at {}\n", str(p, "digest").substr(0, 12),
                           str(p, "path"), str(p, "made_by"), str(p, "made_at"));
      }
    } else if (ev == "host_library") {
      out += fmt::format("host library sha256 {}, {} bytes\n", str(e, "sha256").substr(0, 12),
                         e.contains("text") && e["text"].is_string() ? e["text"].get_ref<const std::string&>().size() : 0);
    } else if (ev == "batch_start") {
      std::string names;
      if (e.contains("hosts") && e["hosts"].is_array())
        for (const auto& h : e["hosts"]) names += (names.empty() ? "" : ", ") + (h.is_string() ? h.get<std::string>() : h.dump());
      out += fmt::format("batch {}/{}: {}\n", str(e, "batch"), str(e, "batches"), names);
    } else if (ev == "connect") {
      std::string via;
      if (e.contains("via") && e["via"].is_array())
        for (const auto& hop : e["via"]) via += (via.empty() ? " via " : ", ") + (hop.is_string() ? hop.get<std::string>() : hop.dump());
      b += fmt::format("  {} {}@{}:{}{} host key {} ({}, {})\n",
                       flag(e, "after_reboot") ? "connected after reboot" : "connected", str(e, "user"),
                       str(e, "address"), str(e, "port"), via, str(e, "fingerprint"), str(e, "auth_method"), dur(e));
    } else if (ev == "reboot_wait") {
      b += e.contains("cause")
               ? fmt::format("      waiting for the reboot, attempt {}: {}: {}\n", str(e, "attempt"), str(e, "cause"),
                             str(e, "message"))
               : fmt::format("      waiting for the reboot, attempt {}: {}\n", str(e, "attempt"), str(e, "message"));
    } else if (ev == "unreachable") {
      b += fmt::format("  UNREACHABLE ({}): {}\n", str(e, "cause"), str(e, "message"));
    } else if (ev == "step_start") {
      b += fmt::format("  - {} [{}] {}\n", str(e, "step"), str(e, "kind"), str(e, "name"));
    } else if (ev == "command" && opt.commands) {
      auto r = integer(e, "rung");
      std::string rung = r.value_or(0) ? fmt::format("rung {} ", *r) : "";
      pending_cmd[host] = fmt::format("      {}{:<6} $ {}", rung, str(e, "role"),
                                      util::trim_lines(str(e, "command"), 1, 100));
      while (!pending_cmd[host].empty() && pending_cmd[host].back() == '\n') pending_cmd[host].pop_back();
    } else if (ev == "reconnect") {
      b += flag(e, "ok") ? fmt::format("      reconnected (attempt {}, after {})\n", str(e, "attempt"), dur(e))
                         : fmt::format("      reconnect attempt {} failed ({}): {}\n", str(e, "attempt"),
                                       str(e, "cause"), str(e, "message"));
    } else if (ev == "exit" && opt.commands) {
      std::string how = e.contains("signal") ? "SIG" + str(e, "signal")
                        : !str(e, "error").empty() ? "error: " + str(e, "error")
                                                   : fmt::format("exit {}", str(e, "code"));
      if (flag(e, "timed_out")) how += ", timed out";
      b += fmt::format("{}  → {} ({})\n", pending_cmd[host], how, dur(e));
      b += pending_out[host];
      pending_out[host].clear();
      pending_cmd[host].clear();
    } else if (ev == "output" && opt.commands) {
      // Bytes that are not UTF-8 are recorded as base64: shown decoded, each
      // bad byte as \xNN, the rest as text.
      std::string data = str(e, "data");
      if (!e.contains("data") && !util::unbase64(str(e, "data_b64"), &data))
        data = "<data_b64 that is not base64>";
      std::string t = util::trim_lines(data, opt.output_lines, 120);
      if (!t.empty()) pending_out[host] += util::indent_lines(t, str(e, "stream") == "stderr" ? "          ! " : "          | ");
    } else if (ev == "evidence") {
      if (e.contains("holders") && e["holders"].is_array()) {
        for (const auto& h : e["holders"])
          b += fmt::format("          holder PID {} user {} started {} cmd: {}\n", str(h, "pid"),
                           str(h, "user"), str(h, "started"), first_line(str(h, "cmdline"), 80));
      }
      if (e.contains("note")) b += fmt::format("          note: {}\n", str(e, "note"));
    } else if (ev == "step_end") {
      std::string why = e.contains("reason") && !str(e, "reason").empty() ? ": " + str(e, "reason") : "";
      if (str(e, "status") == "skipped") {  // never ran: no time to give
        b += fmt::format("    skipped{}\n", why);
      } else {
        std::string rung = str(e, "status") == "escalated" || str(e, "status") == "failed"
                               ? fmt::format(" (rung {})", str(e, "rung"))
                               : "";
        b += fmt::format("    {}{} in {}{}\n", str(e, "status"), rung, dur(e), why);
      }
    } else if (ev == "host_end") {
      std::string counts;
      if (e.contains("counts") && e["counts"].is_object())
        for (auto it = e["counts"].begin(); it != e["counts"].end(); ++it)
          if (auto n = integer(it.value()); n.value_or(0) > 0)
            counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", *n, it.key());
      std::string why = str(e, "status") != "ok" && !str(e, "reason").empty() ? ": " + str(e, "reason") : "";
      std::string at = str(e, "stopped_at").empty() ? "" : fmt::format(" (stopped at {})", str(e, "stopped_at"));
      b += fmt::format("  host {}{}: {}{}\n", str(e, "status"), at, counts.empty() ? "nothing ran" : counts, why);
    } else if (ev == "run_end") {
      tail += fmt::format("run {} (exit {}) at {}\n", str(e, "status"), str(e, "exit_code"), str(e, "t"));
    } else if (ev != "command" && ev != "exit" && ev != "output") {  // a kind this version does not know
      b += fmt::format("  event `{}` (not known to this ratchet)\n", ev);
    }
  }
  // A command with no exit: the run stopped while it ran (SIGKILL, a full disk).
  for (auto& [h, cmd] : pending_cmd)
    if (!cmd.empty()) body[h] += cmd + "  → no exit recorded: the run stopped here\n" + pending_out[h];
  for (const auto& h : host_order) out += fmt::format("host {}\n{}", h, body[h]);
  out += tail;
  // Everything here may hold what a host printed: no escape or control byte
  // reaches the terminal (a title change, an alternate screen, a clear); each
  // shows as \xNN, a backslash as \\ (util::escaped_line).
  std::string safe;
  size_t start = 0;
  for (size_t nl; (nl = out.find('\n', start)) != std::string::npos; start = nl + 1)
    safe += util::escaped_line(std::string_view(out).substr(start, nl - start)) + "\n";
  if (start < out.size()) safe += util::escaped_line(std::string_view(out).substr(start));
  return safe;
}

}  // namespace ratchet::transcript
