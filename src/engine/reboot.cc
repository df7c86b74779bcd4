// kind = "reboot" on one host: read the boot id, start the reboot, drop the
// session, reconnect with backoff (session.h) until the host answers with a NEW
// boot id (all bounded by reboot_timeout), then run the test_command until it
// passes. Every command goes through the executor, as a step's do.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "engine/host_run.h"
#include "engine/session.h"
#include "transcript/record.h"

namespace ratchet::engine {

namespace {

long long steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string brief(const transport::ExecResult& r) {
  if (!r.error.empty()) return r.error;
  std::string err = trimmed(r.err.data);
  if (err.size() > 200) err = err.substr(0, 200) + "...";
  std::string status = r.signal.empty() ? fmt::format("exit {}", r.exit_code) : "signal " + r.signal;
  return err.empty() ? status : fmt::format("{}: {}", status, err);
}

}  // namespace

StepOutcome HostRun::run_reboot(const steps::PreparedStep& ps) {
  StepOutcome o;
  o.status = StepStatus::failed;
  const steps::Rung& r = ps.rungs.at(0);
  const auto start_at = std::chrono::steady_clock::now();
  const auto deadline_at = start_at + r.reboot_timeout;
  const long long start = std::chrono::duration_cast<std::chrono::milliseconds>(start_at.time_since_epoch()).count();
  const long long deadline = start + r.reboot_timeout.count();
  auto& w = *shared_.w;
  const std::string& host = job_.host.name;
  auto interrupted = [&] { return shared_.interrupted && shared_.interrupted->load(); };

  auto before = ex_->run(r.check.at(0), 0, "");
  std::string old_id = trimmed(before.out.data);
  if (before.exit_code != 0 || old_id.empty()) {
    o.reason = fmt::format("reboot: cannot read the boot id before rebooting ({})", brief(before));
    return o;
  }
  auto act = ex_->run(*r.action, 0, "");
  o.rc = act.exit_code;
  if (act.exit_code != 0) {
    o.reason = fmt::format("reboot: the reboot command failed ({})", brief(act));
    return o;
  }
  t_.close();  // the host is going down; every later command needs a new session

  // Each try: a session, then a NEW boot id over it (the same one: the host
  // never went down yet). Paced as every reconnect is (session.h), from 1 s.
  std::string last = "no answer yet";
  std::string new_id, key_refused;
  int attempt = 0;
  auto on_try = [&](int n, const std::optional<transport::ConnectError>& err, const transport::ConnectInfo& info) {
    if (err) {
      last = err->message;
      w.emit(transcript::events::kRebootWait, {{"host", host}, {"step", ex_->step()}, {"attempt", n},
                             {"cause", transport::cause_name(err->kind)}, {"message", err->message}});
      if (!host_key_failure(*err)) return Next::again;
      key_refused = "reboot: the host came back with a host key that known_hosts does not hold: " + err->message;
      return Next::stop;
    }
    steps::Command wait = r.after.at(0);
    wait.timeout = util::Millis(std::max<long long>(1'000, deadline - steady_ms()));
    auto res = ex_->run(wait, 0, "");
    std::string id = trimmed(res.out.data);
    if (res.exit_code == 0 && !id.empty() && id != old_id) {
      new_id = id;
      w.emit(transcript::events::kConnect, transcript::connect_fields(host, info, true));
      return Next::done;
    }
    if (res.exit_code == 0 && id == old_id) {
      last = "the host never went down (same boot id): did the reboot command fail? it needs root, so "
             "set become = true or log in as root";
    } else {
      last = fmt::format("boot wait failed ({})", brief(res));
    }
    w.emit(transcript::events::kRebootWait, {{"host", host}, {"step", ex_->step()}, {"attempt", n}, {"message", last}});
    t_.close();
    return Next::again;
  };
  Backoff pace;
  pace.first = util::Millis(1'000);
  pace.wait_first = true;        // the host needs time to go down
  pace.try_at_deadline = false;  // a try needs time left for the boot wait
  reconnect_with_backoff(t_, deadline_at, pace, shared_.sleep, shared_.interrupted, on_try, &attempt);
  if (!key_refused.empty()) {
    o.reason = key_refused;
    return o;
  }
  if (new_id.empty()) {
    o.reason = interrupted() ? "interrupted while waiting for the host to come back"
                             : fmt::format("reboot: the host did not come back within {} ({} attempts; last: {})",
                                           util::format_duration(r.reboot_timeout), attempt, last);
    return o;
  }
  const long long back_ms = steady_ms() - start;
  if (r.after.size() > 1) {
    const steps::Command& test = r.after[1];
    for (;;) {
      auto res = ex_->run(test, 0, "");
      if (res.exit_code == 0 && res.error.empty()) {
        o.out = res.out.data;
        break;
      }
      if (interrupted() || steady_ms() + ps.rungs[0].delay.count() >= deadline) {
        o.reason = fmt::format("reboot: the host is back but test_command did not pass within {} ({})",
                               util::format_duration(r.reboot_timeout), brief(res));
        o.rc = res.exit_code;
        return o;
      }
      shared_.sleep(ps.rungs[0].delay);
    }
  }
  ex_->evidence(0, util::Value::table({{"boot_id_before", old_id}, {"boot_id_after", new_id}, {"back_ms", back_ms},
                                       {"attempts", attempt}}));
  o.status = StepStatus::changed;
  o.rc = 0;
  o.reason = fmt::format("rebooted; back after {} ms", back_ms);
  return o;
}

}  // namespace ratchet::engine
