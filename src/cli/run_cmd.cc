// `ratchet run`: plan every host first (nothing connects unless all render),
// then run the hosts in parallel and record the transcript.
#include <fmt/format.h>

#include <sys/stat.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <iostream>
#include <random>
#include <thread>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/usage.h"
#include "cli/printer.h"
#include "cli/recap.h"
#include "cli/sign_run.h"
#include "cli/become_password.h"
#include "cli/live_progress.h"
#include "engine/artifacts.h"
#include "engine/fleet.h"
#include "engine/host_run.h"
#include "transcript/value_json.h"
#include "cli/make_plan.h"
#include "plan/selection.h"
#include "plan/codec.h"
#include "ratchet/version.h"
#include "steps/library.h"
#include "transcript/writer.h"
#include "util/clock.h"
#include "util/text.h"

namespace ratchet::cli {

static std::atomic<bool> g_interrupted{false};

static void on_sigint(int) {
  if (g_interrupted.exchange(true)) {  // second ^C: leave now (write(2): async-signal-safe)
    static const char msg[] =
        "ratchet: second interrupt: leaving now; commands still running on hosts run on until their "
        "deadline, and the transcript has no run_end\n";
    (void)!::write(2, msg, sizeof msg - 1);
    std::_Exit(kExitInterrupted);
  }
}

int exit_code_for(const std::vector<engine::HostStatus>& statuses, bool interrupted) {
  bool key = false, failed = false, unreachable = false;
  for (auto st : statuses) {
    key |= st == engine::HostStatus::host_key;
    failed |= st == engine::HostStatus::failed;
    unreachable |= st == engine::HostStatus::unreachable;
    interrupted |= st == engine::HostStatus::interrupted;
  }
  if (interrupted) return kExitInterrupted;
  if (key) return kExitHostKey;
  if (failed) return kExitFailed;
  if (unreachable) return kExitUnreachable;
  return kExitOk;
}

/// The hash chain's digests after the recap: each host's (of its host_end
/// line), then the final head (of run_end), and how to check the file against one.
static std::string digest_lines(const transcript::Writer& w, const std::vector<engine::HostReport>& reps) {
  const auto digests = w.host_digests();  // by host name as written: masked
  std::string out = "host digests (sha256 of each host's host_end line in the transcript's hash chain):\n";
  size_t width = 4;
  for (const auto& r : reps) width = std::max(width, util::columns(util::escaped_line(w.mask(r.host), 40)));
  for (const auto& r : reps) {
    auto it = digests.find(w.mask(r.host));
    std::string name = util::escaped_line(w.mask(r.host), 40);
    out += fmt::format("  {}{} {}\n", name, std::string(width - std::min(width, util::columns(name)), ' '),
                       it == digests.end() ? "(no host_end recorded)" : it->second);
  }
  out += fmt::format("final head (the whole run, up to its run_end): {}\n", w.head());
  // Only a file keeps the transcript: /dev/null, a pipe or a terminal kept nothing to verify.
  struct stat st {};
  if (::stat(w.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return out + util::escaped_line(fmt::format("the transcript went to {}, which keeps no file: nothing can be "
                                                "checked against these digests (give --transcript a file to keep one)",
                                                w.path())) + "\n";
  out += util::escaped_line(fmt::format("check the transcript against it: ratchet show --verify {} --digest {}",
                                        w.path(), w.head())) + "\n";
  return out;
}

std::string exit_name(int code) {
  static const std::map<int, std::string> names_of = {{kExitOk, "ok"},
                                                      {kExitFailed, "failed"},
                                                      {kExitUnreachable, "unreachable"},
                                                      {kExitHostKey, "host_key"},
                                                      {kExitInterrupted, "interrupted"}};
  auto it = names_of.find(code);
  return it == names_of.end() ? "failed" : it->second;
}

int cmd_run(const Options& o, const std::vector<std::string>& argv) {
  const auto wall0 = std::chrono::steady_clock::now();
  auto L = load_all(o);
  if (!L) return kExitUsage;
  auto P = make_plan(*L, o);  // every step of every host renders, or nothing connects
  if (!P) return kExitUsage;
  return execute_plan(*L, *P, o, argv, nullptr, wall0);
}

int execute_plan(const Loaded& loaded, const plan::Plan& P, const Options& o, const std::vector<std::string>& argv,
                 const AppliedPlan* applied, std::chrono::steady_clock::time_point wall0) {
  const Loaded* L = &loaded;
  auto secrets = resolve_secrets(L->pb, false);
  if (!secrets) return kExitUsage;
  for (const auto& it : secrets->as_table())  // masking is by value: a short one hits everywhere
    if (auto n = it.second.as_string().size(); n > 0 && n < 4)
      std::cerr << fmt::format(
          "ratchet: warning: secret `{}` is {} byte{}: every occurrence of it is masked as *** and any command "
          "holding it is refused; a longer value avoids that\n",
          it.first, n, n == 1 ? "" : "s");
  std::string dur_err;
  auto reconnect = o.reconnect_timeout == "0" ? std::optional<util::Millis>(util::Millis(0))
                                              : util::parse_duration(o.reconnect_timeout, &dur_err);
  if (!reconnect)
    return usage_error("run", fmt::format("--reconnect-timeout {}: {} (e.g. 30s, 2m, or 0 for never)",
                                          o.reconnect_timeout, dur_err));
  auto lock_wait = o.lock_wait == "0" ? std::optional<util::Millis>(util::Millis(0))
                                      : util::parse_duration(o.lock_wait, &dur_err);
  if (!lock_wait)
    return usage_error(o.command.empty() ? "run" : o.command,
                       fmt::format("--lock-wait {}: {} (e.g. 5m, or 0 to fail at once)", o.lock_wait, dur_err));
  if ((lock_wait->count() > 0 || o.break_lock) && !o.lock &&
      std::none_of(P.hosts.begin(), P.hosts.end(), [](const plan::HostPlan& hp) { return hp.guards.lock; }))
    return usage_error(o.command.empty() ? "run" : o.command,
                       fmt::format("{} needs a lock to act on, and no host takes one: pass --lock too, or set "
                                   "`lock = true` in the playbook or on the hosts",
                                   o.break_lock ? "--break-lock" : "--lock-wait"));
  std::string pw_err;
  std::optional<std::string> become_password = read_become_password(o, &pw_err);
  if (!pw_err.empty()) {
    std::cerr << "ratchet: error: " << pw_err << "\n";
    return kExitUsage;
  }

  auto now = std::chrono::system_clock::now();
  std::random_device rd;
  engine::RunInfo info{fmt::format("{}-{:04x}", util::file_stamp(now), rd() & 0xffff), util::rfc3339(now)};
  std::string path = !o.transcript.empty()
                         ? o.transcript
                         : default_transcript(L->pb.name, util::file_stamp(now));
  if (std::string hit = clobbered_source(P, path, applied ? applied->path : ""); !hit.empty())
    return usage_error(o.command.empty() ? "run" : o.command,
                       fmt::format("--transcript {} is {}: a transcript goes to a file of its own", path, hit));
  if (!o.report.empty()) {  // checked before anything runs: the report is made from the transcript at the end
    std::string why = report_option_problem(o.report, path);
    if (std::string hit = clobbered_source(P, o.report, applied ? applied->path : ""); why.empty() && !hit.empty())
      why = fmt::format("--report {} is {}: the report goes to a file of its own", o.report, hit);
    if (!why.empty()) return usage_error(o.command.empty() ? "run" : o.command, why);
  }
  std::string sign_err;  // the key that signs at the end (--sign): found before anything connects
  auto sign_key = sign_key_for(o, *L, path, &sign_err);
  if (!sign_err.empty()) return usage_error(o.command.empty() ? "run" : o.command, sign_err);
  transcript::Writer w(path);
  for (const auto& it : secrets->as_table()) w.add_secret(it.second.as_string());
  // Every value a --secret name was given with -e, not only the last that won:
  // run_start's argv holds them all.
  for (const auto& kv : o.extra) {
    auto eq = kv.find('=');
    if (eq != std::string::npos &&
        std::find(o.secret.begin(), o.secret.end(), kv.substr(0, eq)) != o.secret.end())
      w.add_secret(kv.substr(eq + 1));
  }
  // The become password is masked from its first use on (engine/executor.cc).

  nlohmann::json vars = transcript::to_json(L->pb.vars);
  for (const auto& it : secrets->as_table()) vars[it.first] = "***";
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& hp : P.hosts) targets.push_back(hp.host.name);
  const auto& pol = P.policy;
  auto count_json = [](const playbook::HostCount& c) -> nlohmann::json {
    if (!c.set) return nullptr;
    if (c.percent) return fmt::format("{}%", c.value);
    return c.value;
  };
  nlohmann::json start = {{"schema", transcript::kSchemaVersion},
                       {"ratchet_version", RATCHET_VERSION},
                       {"run_id", info.id},
                       {"argv", argv},
                       {"playbook", L->pb.name},
                       {"playbook_path", L->pb.path},
                       {"playbook_sha256", L->pb.sha256},
                       {"playbook_source", L->pb.source},
                       {"vars", vars},
                       {"targets", targets},
                       {"policy", {{"strategy", playbook::name(pol.strategy)}, {"forks", o.forks},
                                   {"serial", count_json(pol.serial)}, {"max_fail", count_json(pol.max_fail)}}},
                       {"become_password", become_password.has_value()},
                       {"run_by", who_here()}};
  // which steps --tags, --skip-tags, --start-at, --step chose
  if (auto sel = plan::step_selection_json(P); !sel.is_null()) start["selection"] = sel;
  if (applied)  // the saved plan this run executes (docs/plan.md)
    start["plan"] = {{"digest", applied->digest}, {"path", applied->path}, {"made_at", P.made.at},
                     {"made_by", P.made.by}};
  w.emit(transcript::events::kRunStart, start);
  // The library's text once, in an event of its own: run_start stays small
  // (schema 2; docs/transcript.md).
  w.emit(transcript::events::kHostLibrary, {{"sha256", steps::host_library_sha256()}, {"text", steps::host_library()}});
  // With --json, stdout carries only the summary; people read stderr.
  std::ostream& human = o.json ? std::cerr : std::cout;
  const int human_fd = o.json ? 2 : 1;
  if (w.failed()) {  // not even run_start went in: run nothing that could not be recorded
    std::cerr << "ratchet: error: " << w.failure() << "; nothing was run (free space or pick another --transcript)\n";
    return kExitFailed;
  }
  human << util::escaped_line(fmt::format("run {}: {} on {} host(s), strategy {}, forks {}; transcript {}",
                                           info.id, L->pb.name, P.hosts.size(), playbook::name(pol.strategy), o.forks, path))
        << "\n" << std::flush;
  // What the selection left out, as plan prints it (a step id or tag is no host's byte; escaped all the same).
  if (std::string sel = plan::selection_lines(P); !sel.empty())
    for (size_t at = 0, nl; at < sel.size(); at = nl + 1) {
      nl = sel.find('\n', at);
      human << util::escaped_line(sel.substr(at, nl - at)) << "\n";
    }
  human << std::flush;
  if (applied)
    human << util::escaped_line(fmt::format("applying saved plan {} ({}), made by {} at {}", applied->digest,
                                            applied->path, P.made.by, P.made.at))
          << "\n" << std::flush;

  std::vector<engine::HostJob> jobs;
  std::vector<std::string> names;
  for (const auto& hp : P.hosts) {
    engine::HostJob j;
    j.pb = &L->pb;
    j.plan = &hp;
    j.host = hp.host;
    j.endpoint = endpoint_for(hp.host, o);
    if (applied) j.endpoint.pinned_keys = hp.endpoint.known_keys;  // the keys the reviewed plan saw
    j.scope = engine::host_scope(L->pb, L->inv ? &*L->inv : nullptr, hp.host, L->extra_keys, *secrets, &info);
    jobs.push_back(std::move(j));
    names.push_back(hp.host.name);
  }
  const bool color = use_color(human_fd);
  std::unique_ptr<engine::Progress> progress;
  LiveProgress* live = nullptr;
  if (use_live(human_fd)) {
    std::vector<std::string> step_ids;
    if (!P.hosts.empty())  // the steps the selection kept
      for (const auto& st : P.hosts.front().steps) step_ids.push_back(st.id);
    auto lp = std::make_unique<LiveProgress>(names, step_ids, human_fd, color, &w);
    live = lp.get();
    progress = std::move(lp);
  } else {
    progress = std::make_unique<LinePrinter>(&w, &human);
  }
  engine::RunShared shared;
  shared.w = &w;
  shared.progress = progress.get();
  shared.interrupted = &g_interrupted;
  shared.sleep = [](util::Millis d) {
    // in slices, so ^C is noticed within 200 ms
    auto end = std::chrono::steady_clock::now() + d;
    while (!g_interrupted.load() && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          end - std::chrono::steady_clock::now(), std::chrono::milliseconds(200)));
  };
  shared.become_password = become_password ? &*become_password : nullptr;
  shared.reconnect_timeout = *reconnect;
  shared.artifacts = o.artifacts.empty() ? engine::default_artifacts(path, info.id) : o.artifacts;
  engine::FleetPolicy policy{P.policy, o.forks};
  // The lock and the audit line on each host (docs/playbook.md, "Lock and audit").
  engine::RunGuards guards;
  guards.run_id = info.id;
  guards.who = who_here();  // who runs it now (a saved plan's made.by may be another)
  guards.lock_all = o.lock;
  guards.break_lock = o.break_lock;
  guards.lock_wait = *lock_wait;
  guards.mode = applied ? "apply" : "run";
  guards.playbook = L->pb.name;
  guards.playbook_sha256 = L->pb.sha256;
  guards.plan_digest = applied ? applied->digest : plan::digest_of(plan::plan_json(P, true));
  shared.guards = &guards;

  auto old = std::signal(SIGINT, on_sigint);
  auto old_term = std::signal(SIGTERM, on_sigint);
  auto reps = engine::run_fleet(
      jobs, policy, [](const transport::Endpoint& e) { return transport::make_ssh_transport(e); }, shared);
  std::signal(SIGINT, old);
  std::signal(SIGTERM, old_term);
  if (live) live->stop();

  // Reasons quote host output: masked whole here, before any cut to a width.
  for (auto& r : reps) r.reason = w.mask(r.reason);
  std::vector<engine::HostStatus> statuses;
  for (const auto& r : reps) statuses.push_back(r.status);
  int code = exit_code_for(statuses, g_interrupted.load());
  // The transcript broke mid-run: the hosts stopped before their next step.
  if (w.failed() && (code == kExitOk || code == kExitUnreachable)) code = kExitFailed;
  std::map<std::string, int> totals;
  std::map<std::string, int> host_status;
  for (const auto& r : reps) {
    host_status[std::string(name(r.status))]++;
    for (const auto& [k, v] : r.counts) totals[k] += v;
  }
  long long wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - wall0).count();
  w.emit(transcript::events::kRunEnd, {{"status", exit_name(code)}, {"exit_code", code}, {"counts", totals},
                     {"hosts", host_status}, {"ms", wall_ms}});

  size_t cols = 0;  // a terminal: recap reasons cut to its width
  if (winsize ws{}; isatty(human_fd) && ioctl(human_fd, TIOCGWINSZ, &ws) == 0) cols = ws.ws_col;
  human << w.mask(recap_table(reps, color, cols))
        << fmt::format("{} (exit {}) in {}; transcript {}\n", exit_name(code), code,
                       util::format_duration(util::Millis(wall_ms)), path)
        << std::flush;
  if (!w.failed()) human << digest_lines(w, reps) << std::flush;
  if (sign_key) code = sign_at_end(w, *sign_key, code, human);  // after run_end: signs its final head
  for (const auto& r : reps)  // did not fail the host (the audit line, a lock not released)
    for (const auto& warn : r.warnings)
      std::cerr << util::escaped_line(w.mask(fmt::format("ratchet: warning: {}: {}", r.host, warn))) << "\n";
  // The run's exit code stays the run's: a report that cannot be written is said on stderr.
  if (!o.report.empty()) write_run_report(o.report, path, info.id, human);
  if (w.failed())
    std::cerr << "ratchet: error: " << w.failure()
              << "; every host stopped before its next step (the recap says where); the transcript ends there\n";
  if (o.json) {
    nlohmann::json hosts = nlohmann::json::array();
    for (const auto& r : reps) {
      nlohmann::json h = {{"host", r.host}, {"status", name(r.status)}, {"counts", r.counts}, {"ms", r.ms}};
      if (!r.reason.empty()) h["reason"] = r.reason;
      if (!r.failed_step.empty()) h["failed_step"] = r.failed_step;
      if (!r.stopped_at.empty()) h["stopped_at"] = r.stopped_at;
      nlohmann::json skipped = nlohmann::json::array();
      for (const auto& [id, why] : r.skipped) skipped.push_back({{"step", id}, {"reason", why}});
      h["skipped"] = skipped;
      if (!r.cause.empty()) h["cause"] = r.cause;
      if (!r.warnings.empty()) h["warnings"] = r.warnings;
      hosts.push_back(h);
    }
    nlohmann::json sum = {{"run_id", info.id}, {"playbook", L->pb.name}, {"transcript", path},
                          {"status", exit_name(code)}, {"exit_code", code}, {"ms", wall_ms},
                          {"totals", totals}, {"host_status", host_status}, {"hosts", hosts}};
    if (applied) sum["plan_digest"] = applied->digest;
    w.mask_tree(sum);
    // The chain's digests after the mask (a digest is no secret; a mask could cut one).
    if (!w.failed()) {
      const auto digests = w.host_digests();
      for (auto& h : sum["hosts"])
        if (auto it = digests.find(h["host"].get<std::string>()); it != digests.end()) h["digest"] = it->second;
      sum["head"] = w.head();
    }
    std::cout << sum.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  }
  return code;
}

}  // namespace ratchet::cli
