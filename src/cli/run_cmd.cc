// `ratchet run`: plan every host first (nothing connects unless all render),
// then run the plan (run/plan_run.h) and print how it went.
#include <fmt/format.h>

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/live_progress.h"
#include "cli/make_plan.h"
#include "cli/printer.h"
#include "cli/recap.h"
#include "cli/run_settings.h"
#include "cli/sign_run.h"
#include "cli/usage.h"
#include "plan/selection.h"
#include "run/plan_run.h"
#include "transcript/writer.h"
#include "util/clock.h"
#include "util/text.h"

namespace ratchet::cli {

namespace {

/// The hash chain's digests after the recap: each host's (of its host_end
/// line), then the final head (of run_end), and how to check the file against one.
std::string digest_lines(const transcript::Writer& w, const std::vector<engine::HostReport>& reps) {
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

/// The lines before the first host starts: the run, the selection, the saved plan.
void print_started(std::ostream& human, const run::PlanRequest& r, const std::string& run_id) {
  const auto& P = *r.plan;
  human << util::escaped_line(fmt::format("run {}: {} on {} host(s), strategy {}, forks {}; transcript {}", run_id,
                                          r.pb->name, P.hosts.size(), playbook::name(P.policy.strategy),
                                          r.settings.forks, r.settings.transcript))
        << "\n" << std::flush;
  // What the selection left out, as plan prints it (a step id or tag is no host's byte; escaped all the same).
  if (std::string sel = plan::selection_lines(P); !sel.empty())
    for (size_t at = 0, nl; at < sel.size(); at = nl + 1) {
      nl = sel.find('\n', at);
      human << util::escaped_line(sel.substr(at, nl - at)) << "\n";
    }
  human << std::flush;
  if (r.applied)
    human << util::escaped_line(fmt::format("applying saved plan {} ({}), made by {} at {}", r.applied->digest,
                                            r.applied->path, P.made.by, P.made.at))
          << "\n" << std::flush;
}

/// --json: the run's summary on stdout, masked; the chain's digests after the mask.
void print_json(const run::PlanResult& R, const run::PlanRequest& r) {
  const auto& w = *R.writer;
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& rep : R.reps) {
    nlohmann::json h = {{"host", rep.host}, {"status", name(rep.status)}, {"counts", rep.counts}, {"ms", rep.ms}};
    if (!rep.reason.empty()) h["reason"] = rep.reason;
    if (!rep.failed_step.empty()) h["failed_step"] = rep.failed_step;
    if (!rep.stopped_at.empty()) h["stopped_at"] = rep.stopped_at;
    nlohmann::json skipped = nlohmann::json::array();
    for (const auto& [id, why] : rep.skipped) skipped.push_back({{"step", id}, {"reason", why}});
    h["skipped"] = skipped;
    if (!rep.cause.empty()) h["cause"] = rep.cause;
    if (!rep.warnings.empty()) h["warnings"] = rep.warnings;
    hosts.push_back(h);
  }
  nlohmann::json sum = {{"run_id", R.run_id}, {"playbook", r.pb->name}, {"transcript", r.settings.transcript},
                        {"status", exit_name(R.code)}, {"exit_code", R.code}, {"ms", R.ms},
                        {"totals", R.totals}, {"host_status", R.host_status}, {"hosts", hosts}};
  if (r.applied) sum["plan_digest"] = r.applied->digest;
  w.mask_tree(sum);
  // A digest is no secret; a mask could cut one.
  if (!w.failed()) {
    const auto digests = w.host_digests();
    for (auto& h : sum["hosts"])
      if (auto it = digests.find(h["host"].get<std::string>()); it != digests.end()) h["digest"] = it->second;
    sum["head"] = w.head();
  }
  std::cout << sum.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

/// After the run: the recap, the digests, the signature (--sign: R.code becomes 1 when
/// signing fails on an ok run), the warnings, the report, the transcript's failure.
void print_ended(std::ostream& human, int human_fd, bool color, run::PlanResult& R, const Options& o,
                 const std::string& path, const std::optional<transcript::SignKey>& sign_key) {
  auto& w = *R.writer;
  size_t cols = 0;  // a terminal: recap reasons cut to its width
  if (winsize ws{}; isatty(human_fd) && ioctl(human_fd, TIOCGWINSZ, &ws) == 0) cols = ws.ws_col;
  human << w.mask(recap_table(R.reps, color, cols))
        << fmt::format("{} (exit {}) in {}; transcript {}\n", exit_name(R.code), R.code,
                       util::format_duration(util::Millis(R.ms)), path)
        << std::flush;
  if (!w.failed()) human << digest_lines(w, R.reps) << std::flush;
  if (sign_key) R.code = sign_at_end(w, *sign_key, R.code, human);  // after run_end: signs its final head
  for (const auto& r : R.reps)  // did not fail the host (the audit line, a lock not released)
    for (const auto& warn : r.warnings)
      std::cerr << util::escaped_line(w.mask(fmt::format("ratchet: warning: {}: {}", r.host, warn))) << "\n";
  // The run's exit code stays the run's: a report that cannot be written is said on stderr.
  if (!o.report.empty()) write_run_report(o.report, path, R.run_id, human);
  if (w.failed())
    std::cerr << "ratchet: error: " << w.failure()
              << "; every host stopped before its next step (the recap says where); the transcript ends there\n";
}

}  // namespace

int cmd_run(const Options& o, const std::vector<std::string>& argv) {
  const auto wall0 = std::chrono::steady_clock::now();
  auto L = load_all(o);
  if (!L) return kExitUsage;
  auto P = make_plan(*L, o);  // every step of every host renders, or nothing connects
  if (!P) return kExitUsage;
  return execute_plan(*L, *P, o, argv, nullptr, wall0);
}

int execute_plan(const Loaded& L, const plan::Plan& P, const Options& o, const std::vector<std::string>& argv,
                 const AppliedPlan* applied, std::chrono::steady_clock::time_point wall0) {
  run::PlanRequest r{&L.pb, L.inv ? &*L.inv : nullptr, L.extra_keys, &P, std::nullopt, settings_of(o, argv)};
  if (applied) r.applied = run::Applied{applied->path, applied->digest};
  if (!parse_run_options(o, P, &r.settings)) return kExitUsage;
  r.settings.transcript = !o.transcript.empty() ? o.transcript
                                                : default_transcript(L.pb.name, util::file_stamp(r.settings.started));
  if (auto why = outputs_problem(o, P, r.settings.transcript, applied ? applied->path : ""); !why.empty())
    return usage_error(o.command.empty() ? "run" : o.command, why);
  std::string sign_err;  // the key that signs at the end (--sign): found before anything connects
  auto sign_key = sign_key_for(o, L, r.settings.transcript, &sign_err);
  if (!sign_err.empty()) return usage_error(o.command.empty() ? "run" : o.command, sign_err);
  // With --json, stdout carries only the summary; people read stderr.
  std::ostream& human = o.json ? std::cerr : std::cout;
  const int human_fd = o.json ? 2 : 1;
  const bool color = use_color(human_fd);
  std::unique_ptr<engine::Progress> progress;
  LiveProgress* live = nullptr;
  run::Display d;
  d.started = [&](const run::Started& s) {
    print_started(human, r, s.run_id);
    std::vector<std::string> names, step_ids;
    for (const auto& hp : P.hosts) names.push_back(hp.host.name);
    if (!P.hosts.empty())  // the steps the selection kept
      for (const auto& st : P.hosts.front().steps) step_ids.push_back(st.id);
    if (use_live(human_fd)) {
      auto lp = std::make_unique<LiveProgress>(names, step_ids, human_fd, color, s.w);
      live = lp.get();
      progress = std::move(lp);
    } else {
      progress = std::make_unique<LinePrinter>(s.w, &human);
    }
    return progress.get();
  };
  d.hosts_done = [&] {
    if (live) live->stop();
  };
  auto R = run::run_plan(r, d, wall0);
  if (!R.ran) return R.code;
  print_ended(human, human_fd, color, R, o, r.settings.transcript, sign_key);
  if (o.json) print_json(R, r);
  return R.code;
}

}  // namespace ratchet::cli
