// The run lock and the audit line on one host (docs/playbook.md, "Lock and
// audit"): host library calls (ratchet_lock_take, ratchet_lock_release,
// ratchet_audit; src/steps/lib/ratchet_lock.sh) over the host's own session.
// The lock's commands are recorded as those of the pseudo step "(lock)", each
// with a `lock` event; the audit line, which carries the digest of the host's
// host_end line, is sent after it and recorded as one `audit` event.
#include <fmt/format.h>

#include <chrono>

#include "engine/host_lock.h"

#include "engine/host_run.h"
#include "transcript/events.h"
#include "util/clock.h"
#include "util/shell.h"

namespace ratchet::engine {

namespace {

constexpr char kLockStep[] = "(lock)";
constexpr char kAuditStep[] = "(audit)";

// A field of the lock's owner line: [A-Za-z0-9._@:-] only (the host splits the line at spaces).
std::string owner_word(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += std::isalnum(c) || c == '.' || c == '_' || c == '@' || c == ':' || c == '-' ? char(c) : '_';
  return out.empty() ? "unknown" : out;
}

// The rest of the first stdout line that starts with `prefix` ("" = none).
std::string line_after(const std::string& out, const std::string& prefix) {
  size_t at = 0;
  while (at < out.size()) {
    size_t end = out.find('\n', at);
    std::string line = out.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "";
}

// An owner line's fields: run, who, since, session PID, its start ticks.
std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> f;
  size_t at = 0;
  while (at <= line.size()) {
    size_t sp = line.find(' ', at);
    f.push_back(line.substr(at, sp == std::string::npos ? std::string::npos : sp - at));
    if (sp == std::string::npos) break;
    at = sp + 1;
  }
  f.resize(5, "?");
  return f;
}

// What a failed lock or audit command said, in one line.
std::string brief(const transport::ExecResult& r) {
  if (!r.error.empty()) return r.error;
  std::string text = !r.out.data.empty() ? r.out.data : r.err.data;
  size_t nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  if (text.size() > 300) text = text.substr(0, 300) + "...";
  std::string status = r.signal.empty() ? fmt::format("exit {}", r.exit_code) : "signal " + r.signal;
  return text.empty() ? status : fmt::format("{} ({})", text, status);
}

}  // namespace

std::string take_lock(Executor& ex, transcript::Writer& w, const std::string& host, const std::string& path,
                      const RunGuards& g, bool again) {
  // Again (after a reboot): this run's own lock, or none; never waited for or broken.
  const long long wait_ms = again ? 0 : g.lock_wait.count();
  ex.set_step(kLockStep, false, "");
  steps::Command c;
  c.role = steps::Role::action;
  c.text = fmt::format("ratchet_lock_take {} {} {} {} {}", util::shell_quote(path), owner_word(g.run_id),
                       owner_word(g.who), g.break_lock && !again ? 1 : 0, wait_ms);
  c.timeout = util::Millis(wait_ms + 30'000);
  const auto r = ex.run(c, 0, "");
  nlohmann::json ev = {{"host", host}, {"action", again ? "take_again" : "take"}, {"path", path}};
  const std::string taken = line_after(r.out.data, "taken "), held = line_after(r.out.data, "held "),
                    stale = line_after(r.out.data, "stale "), broke = line_after(r.out.data, "broke ");
  std::string why;
  if (r.error.empty() && r.exit_code == 0 && !taken.empty()) {
    ev["holder"] = taken;
    if (!broke.empty()) ev["broke"] = broke;
  } else if (r.error == "interrupted") {
    why = "interrupted while taking the lock";
  } else if (r.error.empty() && r.exit_code == 10 && !held.empty()) {
    auto f = fields_of(held);
    std::string waited = wait_ms > 0 ? fmt::format(" (waited {})", util::format_duration(util::Millis(wait_ms))) : "";
    why = f[0] == "?" ? fmt::format("locked: {} exists without an owner file (being taken now, or made by hand: "
                                    "then remove it by hand, --break-lock does not){}", path, waited)
                      : fmt::format("locked by {} since {} (run {}){}", f[1], f[2], f[0], waited);
    ev["holder"] = held;
  } else if (r.error.empty() && r.exit_code == 11 && !stale.empty()) {
    auto f = fields_of(stale);
    why = fmt::format("stale lock {}: held by {} since {} (run {}), whose session (PID {} on the host) is gone; "
                      "--break-lock takes it (first make sure no command of that run still runs there: a "
                      "killed ratchet's last command runs on until its own timeout)", path, f[1], f[2], f[0], f[3]);
    ev["holder"] = stale;
  } else {  // fail closed: a lock nobody could check is not free
    why = fmt::format("could not check the lock {}: {}", path, brief(r));
  }
  if (again && !why.empty()) why = "after the reboot: " + why;
  ev["ok"] = why.empty();
  ev["message"] = why.empty() ? (broke.empty() ? "taken" : "taken: broke the stale lock of " + broke) : why;
  w.emit(transcript::events::kLock, ev);
  return why;
}

std::string release_lock(Executor& ex, transcript::Writer& w, const std::string& host, const std::string& path,
                         const RunGuards& g) {
  ex.set_final(true);  // after ^C too, over the session still open
  ex.set_step(kLockStep, false, "");
  steps::Command c;
  c.role = steps::Role::action;
  c.text = fmt::format("ratchet_lock_release {} {}", util::shell_quote(path), owner_word(g.run_id));
  c.timeout = util::Millis(15'000);
  const auto r = ex.run(c, 0, "");
  ex.set_final(false);
  const bool ok = r.error.empty() && r.exit_code == 0;
  std::string why = ok ? "" : fmt::format("the lock {} was not released: {}", path, brief(r));
  w.emit(transcript::events::kLock,
         {{"host", host}, {"action", "release"}, {"path", path}, {"ok", ok}, {"message", ok ? "released" : why}});
  return why;
}

std::string write_audit(Executor& ex, transcript::Writer& w, const std::string& path, const RunGuards& g,
                        const AuditFacts& f) {
  const std::string& digest = f.digest;
  nlohmann::json line = {{"v", 1},
                         {"run_id", g.run_id},
                         {"mode", g.mode},
                         {"controller", g.who},
                         {"host", f.host},
                         {"playbook", g.playbook},
                         {"playbook_sha256", g.playbook_sha256},
                         {"plan_digest", g.plan_digest},
                         {"start", f.started},
                         {"end", util::rfc3339(std::chrono::system_clock::now())},
                         {"status", f.status},
                         {"digest", digest}};
  w.mask_tree(line);
  line["digest"] = digest;  // a digest is no secret; a mask could cut one
  // One line of ASCII (JSON escapes every control byte), well under PIPE_BUF.
  auto dump = [&] { return line.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace); };
  std::string text = dump();
  if (text.size() > 3000) {
    line["playbook"] = line["playbook"].get<std::string>().substr(0, 200) + "...";
    text = dump();
  }
  steps::Command c;
  c.role = steps::Role::action;
  c.text = fmt::format("ratchet_audit {} {}", util::shell_quote(path), util::shell_quote(text));
  c.timeout = util::Millis(15'000);
  ex.set_final(true);
  ex.set_step(kAuditStep, f.become, f.become_user);
  const auto r = ex.run_unrecorded(c);
  ex.set_final(false);
  const bool ok = r.error.empty() && r.exit_code == 0;
  std::string why;
  nlohmann::json ev = {{"host", f.host}, {"path", path}, {"line", text}, {"digest", digest}, {"ok", ok},
                       {"command", c.text}};
  if (!ok) {
    why = fmt::format("the audit line was not written to {}: {}", path, brief(r));
    ev["warning"] = why;
  }
  w.emit(transcript::events::kAudit, ev);
  return why;
}

// HostRun's part (host_run.h): which host, which path, what holds.

bool HostRun::wants_lock() const {
  return shared_.guards && (shared_.guards->lock_all || job_.plan->guards.lock);
}

std::string HostRun::take_lock(bool again) {
  std::string why = engine::take_lock(*ex_, *shared_.w, job_.host.name, job_.plan->guards.lock_path,
                                      *shared_.guards, again);
  lock_held_ = why.empty();
  return why;
}

void HostRun::release_lock() {
  if (!lock_held_ || !ex_) return;
  lock_held_ = false;
  std::string why = engine::release_lock(*ex_, *shared_.w, job_.host.name, job_.plan->guards.lock_path,
                                         *shared_.guards);
  if (!why.empty()) rep_.warnings.push_back(why);
}

void HostRun::write_audit() {
  const std::string& path = job_.plan->guards.audit_log;
  if (!shared_.guards || !shared_.guards->audit || path.empty() || !ex_) return;
  auto& w = *shared_.w;
  const auto digests = w.host_digests();  // by host name as written: masked
  auto it = digests.find(w.mask(job_.host.name));
  AuditFacts f{job_.host.name, std::string(name(rep_.status)), started_at_,
               it == digests.end() ? "" : it->second, job_.host.become, job_.host.become_user};
  std::string why = engine::write_audit(*ex_, w, path, *shared_.guards, f);
  if (!why.empty()) rep_.warnings.push_back(why);
}

}  // namespace ratchet::engine
