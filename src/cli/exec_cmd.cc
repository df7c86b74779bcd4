// `ratchet exec HOST -- COMMAND`: one ad hoc command over the same transport
// (host keys, deadline wrapper); the remote exit status is passed through,
// 128 + N for a signal, 124 when its own --timeout ended it.
#include <fmt/format.h>

#include <csignal>
#include <cstring>
#include <atomic>
#include <unistd.h>
#include <iostream>
#include <memory>
#include <random>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/usage.h"
#include "cli/make_plan.h"
#include "engine/executor.h"
#include "engine/host_lock.h"
#include "steps/library.h"
#include "playbook/inventory.h"
#include "playbook/loader.h"
#include "transcript/writer.h"
#include "util/clock.h"
#include "util/text.h"
#include "ratchet/version.h"
#include "util/spell.h"

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

int cmd_exec(const ExecOptions& o) {
  playbook::Host host;
  bool found = false;
  if (!o.base.inventory.empty()) {
    std::vector<playbook::LoadError> errors;
    auto inv = playbook::load_inventory(o.base.inventory, &errors);
    if (!inv) {
      for (const auto& e : errors) std::cerr << playbook::format_error(e) << "\n";
      return kExitUsage;
    }
    auto it = inv->hosts.find(o.host);
    if (it != inv->hosts.end()) {
      host = it->second;
      found = true;
    } else if (o.host.find_first_of("@:.") == std::string::npos) {
      // A bare name with -i must be one of its hosts (a group runs nothing here).
      std::vector<std::string> names;
      for (const auto& [n, h] : inv->hosts) names.push_back(n);
      std::string near = util::nearest(o.host, names);
      return usage_error("exec", fmt::format("{} is not a host in {}{}", o.host, o.base.inventory,
                                             near.empty() ? "" : fmt::format(" (did you mean `{}`?)", near)));
    }
  }
  if (!found) {
    std::string err;
    auto h = parse_target(o.host, &err);
    if (!h) return usage_error("exec", err);
    host = *h;
  }
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
  const playbook::Guards guards = playbook::resolve_guards({}, host.guards);
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
  auto finish = [&](int code, const char* status) {
    if (w) w->emit(transcript::events::kRunEnd, {{"status", status}, {"exit_code", code}, {"hosts", {{host.name, status}}}});
    return code;
  };
  if (!o.base.transcript.empty()) {
    w = std::make_unique<transcript::Writer>(o.base.transcript);
    w->emit(transcript::events::kRunStart, {{"schema", transcript::kSchemaVersion}, {"ratchet_version", RATCHET_VERSION},
                          {"exec", command}, {"targets", {host.name}}, {"run_id", rg.run_id}});
    if (w->failed()) {
      std::cerr << "ratchet: error: " << w->failure() << "; nothing was run\n";
      return kExitFailed;
    }
  }
  // Through the same executor as a step's commands: the same connect and
  // command/output/exit events, the same refusals before sending.
  transcript::Writer none;  // records nothing: no --transcript
  auto t = transport::make_ssh_transport(endpoint_for(host, o.base));
  g_exec_interrupted = false;
  engine::Executor ex(*t, w ? *w : none, host.name, &g_exec_interrupted);
  transport::ConnectInfo info;
  if (auto err = ex.connect(&info)) {
    std::cerr << "ratchet: " << util::escaped_line(err->message) << "\n";
    bool key = engine::host_key_failure(*err);
    return finish(key ? kExitHostKey : kExitUnreachable, key ? "host_key" : "unreachable");
  }
  // The audit line (after the command, or after a lock refused), over the same session.
  auto audit = [&](const char* status) {
    if (guards.audit_log.empty()) return;
    engine::AuditFacts f{host.name, status, util::rfc3339(now), "", host.become, host.become_user};
    if (std::string warn = engine::write_audit(ex, w ? *w : none, guards.audit_log, rg, f); !warn.empty())
      std::cerr << util::escaped_line("ratchet: warning: " + host.name + ": " + warn) << "\n";
  };
  if (o.base.lock)
    if (std::string locked = engine::take_lock(ex, w ? *w : none, host.name, guards.lock_path, rg, false);
        !locked.empty()) {
      std::cerr << util::escaped_line(fmt::format("ratchet: {}: {}; nothing was run", host.name, locked)) << "\n";
      audit(g_exec_interrupted.load() ? "interrupted" : "failed");
      t->close();
      return finish(kExitFailed, "failed");
    }
  ex.set_step("exec", false, "");
  ex.set_library(nullptr);  // the words as given: no host library
  steps::Command c;
  c.role = steps::Role::action;
  c.text = command;
  c.timeout = *timeout;
  // ^C / SIGTERM: the remote command's process group is stopped (ssh_exec.cc).
  auto old_int = std::signal(SIGINT, on_exec_signal);
  auto old_term = std::signal(SIGTERM, on_exec_signal);
  auto r = ex.run(c, 0, "");
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  // Over the same session, after ^C too: the lock's release, then the audit line.
  ex.set_library(&steps::wire_library());
  if (o.base.lock)
    if (std::string warn = engine::release_lock(ex, w ? *w : none, host.name, guards.lock_path, rg); !warn.empty())
      std::cerr << util::escaped_line("ratchet: warning: " + host.name + ": " + warn) << "\n";
  audit(r.error == "interrupted" ? "interrupted"
        : r.error.empty() && !r.timed_out && r.signal.empty() && r.exit_code == 0 ? "ok" : "failed");
  t->close();
  // stdout as the host wrote it (like ssh: it may be piped on); stderr is for a
  // person, so no byte of it may drive the terminal.
  std::cout << r.out.data << std::flush;
  std::cerr << util::escape_bytes(r.err.data) << std::flush;
  if (r.error == "interrupted") {
    std::cerr << "ratchet: " << host.name << ": interrupted; the remote command was stopped\n";
    return finish(kExitInterrupted, "interrupted");
  }
  if (!r.error.empty()) {
    std::cerr << util::escaped_line("ratchet: " + host.name + ": " + r.error) << "\n";
    return finish(kExitUnreachable, "unreachable");
  }
  if (r.timed_out) {  // our own deadline ended it: 124, as timeout(1), whatever signal did it
    std::cerr << util::escaped_line(fmt::format("ratchet: {}: timed out after {}{}", host.name, o.timeout,
                                                r.signal.empty() ? "" : " (ended by SIG" + r.signal + ")"))
              << "\n";
    return finish(kExitTimedOut, "failed");
  }
  if (!r.signal.empty()) {
    std::cerr << util::escaped_line(fmt::format("ratchet: {}: killed by SIG{}", host.name, r.signal)) << "\n";
    int n = signal_number(r.signal);
    return finish(128 + (n ? n : 0), "failed");
  }
  return finish(r.exit_code, r.exit_code == 0 ? "ok" : "failed");
}

}  // namespace ratchet::cli
