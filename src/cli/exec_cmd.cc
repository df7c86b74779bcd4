// `ratchet exec TARGETS -- COMMAND`: one ad hoc command over the same transport
// (host keys, deadline wrapper). One host: like ssh, its stdout byte for byte
// and its exit status passed through (128 + N for a signal, 124 when its own
// --timeout ended it). Several hosts (a group, a list, several --target): the
// fleet's pool (--forks), each output line prefixed "HOST | ", a recap, and
// exit 0 / 1 / 3 / 4 / 130 as `run`.
#include <fmt/format.h>

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <mutex>

#include "cli/commands.h"
#include "cli/exec_targets.h"
#include "cli/exit_codes.h"
#include "cli/live_progress.h"
#include "cli/recap.h"
#include "cli/usage.h"
#include "cli/run_settings.h"
#include "run/adhoc_run.h"
#include "util/clock.h"
#include "util/duration.h"
#include "util/text.h"

namespace ratchet::cli {

namespace {

/// ratchet's own lines about a host on stderr (not for a plain exit status:
/// the caller has it): the connect error, the lock, a signal, the timeout,
/// then the warnings.
std::string host_notes(const engine::AdhocResult& a) {
  std::string out;
  bool plain_exit = a.ran && a.r.error.empty() && !a.r.timed_out && a.r.signal.empty();
  if (!a.reason.empty() && !plain_exit)
    out += util::escaped_line("ratchet: " + (a.connected ? a.host + ": " : "") + a.reason) + "\n";
  for (const auto& warn : a.warnings) out += util::escaped_line("ratchet: warning: " + a.host + ": " + warn) + "\n";
  return out;
}

/// `text` with each line prefixed "HOST | " (a last line without a newline gets one);
/// `escape`: each line in the escape style of what a host sends (stderr).
std::string prefixed(const std::string& host, const std::string& text, bool escape) {
  std::string out, tag = util::escaped_line(host, 40) + " | ";
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    std::string_view line(text.data() + at, (nl == std::string::npos ? text.size() : nl) - at);
    out += tag + (escape ? util::escape_bytes(line) : std::string(line)) + "\n";
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

nlohmann::json host_json(const engine::AdhocResult& a) {
  nlohmann::json h = {{"host", a.host}, {"status", name(a.status)}, {"exit_code", run::adhoc_exit(a)}, {"ms", a.ms}};
  if (a.ran) {
    h["code"] = a.r.exit_code >= 0 ? nlohmann::json(a.r.exit_code) : nlohmann::json(nullptr);
    h["signal"] = a.r.signal.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.r.signal);
    h["timed_out"] = a.r.timed_out;
    h["stdout"] = a.r.out.data;
    h["stderr"] = a.r.err.data;
  }
  if (!a.reason.empty()) h["reason"] = a.reason;
  if (!a.cause.empty()) h["cause"] = a.cause;
  if (!a.warnings.empty()) h["warnings"] = a.warnings;
  return h;
}

/// One host's output when it ends, its lines together ("HOST | "), and ratchet's notes on it.
void print_host(const engine::AdhocResult& a, bool stdout_tty) {
  static std::mutex print_mu;
  // stdout as sent when piped (a program reads it); on a terminal no host byte may drive it.
  std::string out = prefixed(a.host, a.r.out.data, stdout_tty), err = prefixed(a.host, a.r.err.data, true);
  std::lock_guard<std::mutex> lock(print_mu);
  std::cout << out << std::flush;
  std::cerr << err << host_notes(a) << std::flush;
}

/// After every host ended: one host's output as it wrote it, or the recap; then --json.
void print_ended(const ExecOptions& o, const run::AdhocRequest& r, const run::AdhocRun& R, long long wall_ms) {
  if (r.single) {
    const auto& a = R.results[0];
    if (!o.base.json) {
      // stdout as the host wrote it (like ssh: it may be piped on); stderr is for a
      // person, so no byte of it may drive the terminal.
      std::cout << a.r.out.data << std::flush;
      std::cerr << util::escape_bytes(a.r.err.data);
    }
    std::cerr << host_notes(a) << std::flush;
  } else {
    size_t cols = 0;  // a terminal: recap reasons cut to its width
    if (winsize ws{}; isatty(2) && ioctl(2, TIOCGWINSZ, &ws) == 0) cols = ws.ws_col;
    std::cerr << exec_recap_table(R.results, use_color(2), cols)
              << util::escaped_line(fmt::format("{} (exit {}) in {}{}", exit_name(R.code), R.code,
                                                util::format_duration(util::Millis(wall_ms)),
                                                r.settings.transcript.empty() ? "" : "; transcript " + r.settings.transcript))
              << "\n" << std::flush;
  }
  if (!o.base.json) return;
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& a : R.results) hosts.push_back(host_json(a));
  nlohmann::json sum = {{"run_id", R.run_id}, {"exec", r.command}, {"status", R.status}, {"exit_code", R.code},
                        {"ms", wall_ms}, {"hosts", hosts}};
  sum["transcript"] = r.settings.transcript.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.settings.transcript);
  std::cout << sum.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

}  // namespace

int cmd_exec(const ExecOptions& o) {
  const auto wall0 = std::chrono::steady_clock::now();
  if (o.command.empty())
    return usage_error("exec", "no command: give it after `--`, e.g. ratchet exec web -- uptime");
  ExecHosts sel;
  if (int code = exec_hosts(o, &sel); code != kExitOk) return code;
  run::AdhocRequest r{sel.hosts, sel.single, "", {}, o.timeout, settings_of(o.base, {})};
  std::string why;
  auto timeout = util::parse_duration(o.timeout, &why);
  if (timeout && timeout->count() <= 0) {  // as a step's timeout: a deadline must be ahead
    timeout.reset();
    why = "must be more than 0";
  }
  if (!timeout) return usage_error("exec", fmt::format("--timeout {}: {}", o.timeout, why));
  r.timeout = *timeout;
  for (const auto& w : o.command) r.command += (r.command.empty() ? "" : " ") + w;
  auto lock_wait = o.base.lock_wait == "0" ? std::optional<util::Millis>(util::Millis(0))
                                           : util::parse_duration(o.base.lock_wait, &why);
  if (!lock_wait) return usage_error("exec", fmt::format("--lock-wait {}: {}", o.base.lock_wait, why));
  if ((lock_wait->count() > 0 || o.base.break_lock) && !o.base.lock)
    return usage_error("exec", fmt::format("{} acts on the lock --lock takes: pass --lock too",
                                           o.base.break_lock ? "--break-lock" : "--lock-wait"));
  r.settings.lock_wait = *lock_wait;
  r.settings.transcript = o.base.transcript;
  r.settings.started = std::chrono::system_clock::now();
  const bool stdout_tty = isatty(1) == 1;
  if (!sel.single && !o.base.json) r.host_done = [stdout_tty](const engine::AdhocResult& a) { print_host(a, stdout_tty); };
  auto R = run::run_adhoc(r);
  if (!R.ran) return R.code;
  print_ended(o, r, R, util::ms_since(wall0));
  return R.code;
}

}  // namespace ratchet::cli
