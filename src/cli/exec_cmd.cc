// `ratchet exec TARGETS -- COMMAND`: one ad hoc command over the same transport
// (host keys, deadline wrapper). One host: like ssh, its stdout byte for byte
// and its exit status passed through (128 + N for a signal, 124 when its own
// --timeout ended it). Several hosts (a group, a list, several --target): the
// fleet's pool (--forks), each output line prefixed "HOST | ", a recap, and
// exit 0 / 1 / 3 / 4 / 130 as `run`.
#include <fmt/format.h>

#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>

#include "cli/commands.h"
#include "cli/exec_targets.h"
#include "cli/exit_codes.h"
#include "cli/live_progress.h"
#include "cli/make_plan.h"
#include "cli/recap.h"
#include "cli/usage.h"
#include "engine/adhoc.h"
#include "engine/fleet.h"
#include "ratchet/version.h"
#include "transcript/writer.h"
#include "util/clock.h"
#include "util/duration.h"
#include "util/text.h"

namespace ratchet::cli {

static std::atomic<bool> g_exec_interrupted{false};

static void on_exec_signal(int) {
  if (g_exec_interrupted.exchange(true)) {  // second ^C: leave now, and say what that means
    static const char msg[] = "ratchet: second interrupt: leaving now; the remote command may run on until its deadline\n";
    (void)!::write(2, msg, sizeof msg - 1);
    std::_Exit(kExitInterrupted);
  }
}

static int signal_number(const std::string& name) {
  for (int s = 1; s < 32; ++s) {
    const char* abbrev = sigabbrev_np(s);
    if (abbrev && name == abbrev) return s;
  }
  return 0;
}

/// One host's exit code as `exec` on it alone returns it.
static int host_exit(const engine::AdhocResult& a) {
  using S = engine::HostStatus;
  if (!a.connected)
    return a.status == S::host_key ? kExitHostKey : a.status == S::interrupted ? kExitInterrupted : kExitUnreachable;
  if (!a.ran) return kExitFailed;  // the lock was not taken
  const auto& r = a.r;
  if (r.error == "interrupted") return kExitInterrupted;
  if (!r.error.empty()) return kExitUnreachable;
  if (r.timed_out) return kExitTimedOut;
  if (!r.signal.empty()) return 128 + signal_number(r.signal);
  return r.exit_code;
}

/// ratchet's own lines about a host on stderr (not for a plain exit status:
/// the caller has it): the connect error, the lock, a signal, the timeout,
/// then the warnings.
static std::string host_notes(const engine::AdhocResult& a) {
  std::string out;
  bool plain_exit = a.ran && a.r.error.empty() && !a.r.timed_out && a.r.signal.empty();
  if (!a.reason.empty() && !plain_exit)
    out += util::escaped_line("ratchet: " + (a.connected ? a.host + ": " : "") + a.reason) + "\n";
  for (const auto& warn : a.warnings) out += util::escaped_line("ratchet: warning: " + a.host + ": " + warn) + "\n";
  return out;
}

/// `text` with each line prefixed "HOST | " (a last line without a newline gets one);
/// `escape`: each line in the escape style of what a host sends (stderr).
static std::string prefixed(const std::string& host, const std::string& text, bool escape) {
  std::string out, tag = util::escaped_line(host, 40) + " | ";
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    std::string_view line(text.data() + at, (nl == std::string::npos ? text.size() : nl) - at);
    out += tag + (escape ? util::escape_bytes(line) : std::string(line)) + "\n";
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

static nlohmann::json host_json(const engine::AdhocResult& a) {
  nlohmann::json h = {{"host", a.host}, {"status", name(a.status)}, {"exit_code", host_exit(a)}, {"ms", a.ms}};
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

int cmd_exec(const ExecOptions& o) {
  const auto wall0 = std::chrono::steady_clock::now();
  if (o.command.empty())
    return usage_error("exec", "no command: give it after `--`, e.g. ratchet exec web -- uptime");
  ExecHosts sel;
  if (int code = exec_hosts(o, &sel); code != kExitOk) return code;
  std::string why;
  auto timeout = util::parse_duration(o.timeout, &why);
  if (timeout && timeout->count() <= 0) {  // as a step's timeout: a deadline must be ahead
    timeout.reset();
    why = "must be more than 0";
  }
  if (!timeout) return usage_error("exec", fmt::format("--timeout {}: {}", o.timeout, why));
  std::string command;
  for (const auto& w : o.command) command += (command.empty() ? "" : " ") + w;
  // The lock (only with --lock) and the audit line (docs/playbook.md, "Lock and audit").
  auto lock_wait = o.base.lock_wait == "0" ? std::optional<util::Millis>(util::Millis(0))
                                           : util::parse_duration(o.base.lock_wait, &why);
  if (!lock_wait) return usage_error("exec", fmt::format("--lock-wait {}: {}", o.base.lock_wait, why));
  if ((lock_wait->count() > 0 || o.base.break_lock) && !o.base.lock)
    return usage_error("exec", fmt::format("{} acts on the lock --lock takes: pass --lock too",
                                           o.base.break_lock ? "--break-lock" : "--lock-wait"));
  const auto now = std::chrono::system_clock::now();
  engine::RunGuards rg;
  rg.run_id = fmt::format("{}-{:04x}", util::file_stamp(now), std::random_device{}() & 0xffff);
  rg.who = who_here();
  rg.break_lock = o.base.break_lock;
  rg.lock_wait = *lock_wait;
  rg.mode = "exec";

  // --transcript: the same events as a run's, for one step "exec" (docs/transcript.md).
  std::unique_ptr<transcript::Writer> w;
  transcript::Writer none;  // records nothing: no --transcript
  std::vector<std::string> names;
  for (const auto& h : sel.hosts) names.push_back(h.name);
  if (!o.base.transcript.empty()) {
    w = std::make_unique<transcript::Writer>(o.base.transcript);
    nlohmann::json start = {{"schema", transcript::kSchemaVersion}, {"ratchet_version", RATCHET_VERSION},
                            {"exec", command}, {"targets", names}, {"run_id", rg.run_id}};
    w->emit(transcript::events::kRunStart, start);
    if (w->failed()) {
      std::cerr << "ratchet: error: " << w->failure() << "; nothing was run\n";
      return kExitFailed;
    }
  }
  engine::AdhocShared shared;
  shared.command = command;
  shared.timeout = *timeout;
  shared.timeout_text = o.timeout;
  shared.lock = o.base.lock;
  shared.guards = &rg;
  shared.started = util::rfc3339(now);
  shared.w = w ? w.get() : &none;
  shared.interrupted = &g_exec_interrupted;

  // Several hosts: each one's output when it ends, its lines together.
  std::mutex print_mu;
  const bool stdout_tty = isatty(1) == 1;
  std::vector<engine::AdhocResult> results(sel.hosts.size());
  g_exec_interrupted = false;
  // ^C / SIGTERM: each remote command's process group is stopped (ssh_exec.cc).
  auto old_int = std::signal(SIGINT, on_exec_signal);
  auto old_term = std::signal(SIGTERM, on_exec_signal);
  engine::for_each_host(sel.hosts.size(), o.base.forks, [&](size_t i) {
    const auto& host = sel.hosts[i];
    engine::AdhocResult& a = results[i];
    if (g_exec_interrupted.load()) {
      a.host = host.name;
      a.status = engine::HostStatus::interrupted;
      a.reason = "not run: interrupted";
    } else {
      auto t = transport::make_ssh_transport(endpoint_for(host, o.base));
      a = engine::run_adhoc(host, *t, shared);
    }
    if (sel.single || o.base.json) return;
    // stdout as sent when piped (a program reads it); on a terminal no host byte may drive it.
    std::string out = prefixed(a.host, a.r.out.data, stdout_tty), err = prefixed(a.host, a.r.err.data, true);
    std::lock_guard<std::mutex> lock(print_mu);
    std::cout << out << std::flush;
    std::cerr << err << host_notes(a) << std::flush;
  });
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);

  int code;
  std::string status;
  if (sel.single) {
    const auto& a = results[0];
    code = host_exit(a);
    status = std::string(name(a.status));
    if (!o.base.json) {
      // stdout as the host wrote it (like ssh: it may be piped on); stderr is for a
      // person, so no byte of it may drive the terminal.
      std::cout << a.r.out.data << std::flush;
      std::cerr << util::escape_bytes(a.r.err.data);
    }
    std::cerr << host_notes(a) << std::flush;
  } else {
    std::vector<engine::HostStatus> statuses;
    for (const auto& a : results) statuses.push_back(a.status);
    code = exit_code_for(statuses, g_exec_interrupted.load());
    status = exit_name(code);
  }
  if (w) {
    nlohmann::json hosts = nlohmann::json::object();
    for (const auto& a : results) hosts[a.host] = name(a.status);
    w->emit(transcript::events::kRunEnd, {{"status", status}, {"exit_code", code}, {"hosts", hosts}});
  }
  long long wall_ms = util::ms_since(wall0);
  if (!sel.single) {
    size_t cols = 0;  // a terminal: recap reasons cut to its width
    if (winsize ws{}; isatty(2) && ioctl(2, TIOCGWINSZ, &ws) == 0) cols = ws.ws_col;
    std::cerr << exec_recap_table(results, use_color(2), cols)
              << util::escaped_line(fmt::format("{} (exit {}) in {}{}", exit_name(code), code,
                                                util::format_duration(util::Millis(wall_ms)),
                                                w ? "; transcript " + o.base.transcript : ""))
              << "\n" << std::flush;
  }
  if (o.base.json) {
    nlohmann::json hosts = nlohmann::json::array();
    for (const auto& a : results) hosts.push_back(host_json(a));
    nlohmann::json sum = {{"run_id", rg.run_id}, {"exec", command}, {"status", status}, {"exit_code", code},
                          {"ms", wall_ms}, {"hosts", hosts}};
    sum["transcript"] = w ? nlohmann::json(o.base.transcript) : nlohmann::json(nullptr);
    std::cout << sum.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  }
  return code;
}

}  // namespace ratchet::cli
