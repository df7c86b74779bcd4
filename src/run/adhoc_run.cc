#include "run/adhoc_run.h"

#include <csignal>
#include <cstring>
#include <memory>

#include "engine/fleet.h"
#include "engine/host_lock.h"
#include "run/cancel.h"
#include "run/end.h"
#include "run/exit.h"
#include "transcript/run_events.h"
#include "util/clock.h"
#include "util/who.h"

namespace ratchet::run {

namespace {

int signal_number(const std::string& name) {
  for (int s = 1; s < 32; ++s) {
    const char* abbrev = sigabbrev_np(s);
    if (abbrev && name == abbrev) return s;
  }
  return 0;
}

/// The lock (only with --lock) and the audit line (docs/playbook.md, "Lock and audit").
engine::RunGuards adhoc_guards(const Settings& s) {
  engine::RunGuards rg;
  rg.run_id = new_run_id(s.started);
  rg.who = util::who_here();
  rg.break_lock = s.break_lock;
  rg.lock_wait = s.lock_wait;
  rg.mode = "exec";
  return rg;
}

void end_adhoc(const AdhocRequest& r, AdhocRun& out, transcript::Writer* w) {
  if (r.single) {
    out.code = adhoc_exit(out.results[0]);
    out.status = std::string(name(out.results[0].status));
  } else {
    std::vector<engine::HostStatus> statuses;
    for (const auto& a : out.results) statuses.push_back(a.status);
    out.code = exit_code_for(statuses, cancelled());
    out.status = exit_name(out.code);
  }
  if (!w) return;
  std::map<std::string, std::string> hosts;
  for (const auto& a : out.results) hosts[a.host] = std::string(name(a.status));
  end_run(*w, {out.status, out.code, std::nullopt, {}, hosts, std::nullopt});
}

}  // namespace

int adhoc_exit(const engine::AdhocResult& a) {
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

AdhocRun run_adhoc(const AdhocRequest& r) {
  AdhocRun out;
  const auto rg = adhoc_guards(r.settings);
  out.run_id = rg.run_id;
  // --transcript: the same events as a run's, for one step "exec" (docs/transcript.md).
  std::unique_ptr<transcript::Writer> w;
  transcript::Writer none;  // records nothing: no --transcript
  if (!r.settings.transcript.empty()) {
    w = std::make_unique<transcript::Writer>(r.settings.transcript);
    transcript::RunStart start;
    start.mode = transcript::RunStart::Mode::exec;
    start.run_id = rg.run_id;
    start.exec = r.command;
    for (const auto& h : r.hosts) start.targets.push_back(h.name);
    transcript::write_run_start(*w, start);
    if (w->failed()) {
      *r.settings.diag << "ratchet: error: " << w->failure() << "; nothing was run\n";
      out.code = kExitFailed;
      return out;
    }
  }
  out.ran = true;
  engine::AdhocShared shared;
  shared.command = r.command;
  shared.timeout = r.timeout;
  shared.timeout_text = r.timeout_text;
  shared.lock = r.settings.lock;
  shared.guards = &rg;
  shared.started = util::rfc3339(r.settings.started);
  shared.w = w ? w.get() : &none;
  shared.interrupted = &cancel_token();
  out.results.resize(r.hosts.size());
  {
    // ^C / SIGTERM: each remote command's process group is stopped (ssh_exec.cc).
    CancelOnSignals on_signals("ratchet: second interrupt: leaving now; the remote command may run on until its deadline\n");
    engine::for_each_host(r.hosts.size(), r.settings.forks, [&](size_t i) {
      const auto& host = r.hosts[i];
      engine::AdhocResult& a = out.results[i];
      if (cancelled()) {
        a.host = host.name;
        a.status = engine::HostStatus::interrupted;
        a.reason = "not run: interrupted";
      } else {
        auto t = transport::make_ssh_transport(r.settings.endpoint(host));
        a = engine::run_adhoc(host, *t, shared);
      }
      r.host_done(a);
    });
  }
  end_adhoc(r, out, w.get());
  return out;
}

}  // namespace ratchet::run
