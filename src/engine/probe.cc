#include "engine/probe.h"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "transcript/run_events.h"
#include "engine/probe_words.h"
#include "engine/ratchet_loop.h"
#include "playbook/when.h"
#include "steps/prepare.h"
#include "util/clock.h"
#include "util/diff.h"
#include "util/shell.h"
#include "util/text.h"

namespace ratchet::engine {

using nlohmann::json;

plan::HostFindings findings_of(const HostProbe& r) {
  return plan::HostFindings{r.host, std::string(name(r.status)), r.reason, r.connected, r.steps, r.ms};
}

namespace {

/// Most bytes of a file's current content a write's diff reads (like capture).
constexpr size_t kDiffBytes = 256 * 1024;
/// Most lines, and bytes a line, of a write's diff as the probe shows it.
constexpr size_t kDiffLines = 400, kDiffCols = 400;
/// Most lines of a failing check's output kept as evidence.
constexpr size_t kOutputLines = 10;

/// Up to kOutputLines lines of `s`.
std::string first_lines(const std::string& s) {
  std::istringstream in(s);
  std::string out, line;
  for (size_t n = 0; n < kOutputLines && std::getline(in, line); ++n) out += line + "\n";
  if (in && std::getline(in, line)) out += "...\n";
  return out;
}

/// A write check's mode, owner and group that differ from what would be set,
/// a line each ("mode 0640 -> 0644"); "" when none does.
std::string meta_lines(const transport::ExecResult& stat, const steps::Expect& e) {
  if (!e.file) return "";
  std::istringstream in(stat.out.data);
  std::string sha, mode, owner, group, out;
  in >> sha >> mode >> owner >> group;
  auto line = [&](const char* what, const std::string& now, const std::string& want) {
    if (!want.empty() && now != want) out += fmt::format("{} {} -> {}\n", what, now.empty() ? "?" : now, want);
  };
  line("mode", mode, e.file->mode);
  line("owner", owner, e.file->owner);
  line("group", group, e.file->group);
  return out;
}

/// `s` without the lines that start with `tag`.
std::string without_lines_tagged(const std::string& s, const std::string& tag) {
  std::istringstream in(s);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind(tag, 0) != 0) out += line + "\n";
  return out;
}

/// A write check's path: the word after ratchet_stat, still quoted as sent.
std::string stat_path(const steps::Command& c) {
  static const std::string fn = "ratchet_stat ";
  return c.text.rfind(fn, 0) == 0 ? c.text.substr(fn.size()) : "";
}

struct HostProber {
  const HostJob& job;
  const ProbeShared& shared;
  Executor& ex;
  /// Earlier steps that would act: id (and register name) -> what they change.
  struct Acting {
    std::string id, register_as;
    std::set<std::string> changes;
  };
  std::vector<Acting> acting;

  transcript::Writer& w() { return *shared.w; }

  void depends(const plan::Step& p, const steps::PreparedStep& ps, StepProbe* sp) {
    std::set<std::string> reads;
    for (const auto& c : ps.rungs.at(0).check) {
      auto r = resources(c);
      reads.insert(r.begin(), r.end());
    }
    for (const auto& a : acting) {
      bool dep = false;
      for (const auto& ref : p.runtime_refs)
        dep |= ref.rfind("steps." + a.id + ".", 0) == 0 ||
               (!a.register_as.empty() && ref.rfind("steps." + a.register_as + ".", 0) == 0);
      for (const auto& r : reads)
        for (const auto& c : a.changes) dep |= overlap(r, c);
      if (dep) sp->depends_on.push_back(a.id);
    }
  }

  /// What a would-act step may change: what each of its actions names, and
  /// what that action's own rung checks (a kill's PID file, a unit). A rung
  /// without an action (a verify with no escalation) changes nothing.
  void note_acting(const plan::Step& p, const steps::PreparedStep& ps) {
    Acting a{p.id, p.register_as, {}};
    for (const auto& r : ps.rungs) {
      if (!r.action) continue;
      for (const auto& c : r.check) {
        auto x = resources(c);
        a.changes.insert(x.begin(), x.end());
      }
      if (r.action) {
        auto x = resources(*r.action);
        a.changes.insert(x.begin(), x.end());
      }
    }
    acting.push_back(std::move(a));
  }

  /// The run-time value (steps.*, run.*) whose placeholder a check holds; "" = none.
  static std::string placeholder_in_check(const plan::Step& p, const steps::PreparedStep& ps) {
    for (const auto& ref : p.runtime_refs) {
      if (ref.rfind("steps.", 0) != 0 && ref.rfind("run.", 0) != 0) continue;  // a secret: real here
      const std::string ph = "<" + ref + ">";
      for (const auto& c : ps.rungs.at(0).check)
        if (c.text.find(ph) != std::string::npos || c.stdin_data.find(ph) != std::string::npos) return ref;
    }
    return "";
  }
  static std::string placeholder_in(const plan::Step& p, const std::string& text) {
    for (const auto& ref : p.runtime_refs)
      if ((ref.rfind("steps.", 0) == 0 || ref.rfind("run.", 0) == 0) && text.find("<" + ref + ">") != std::string::npos)
        return ref;
    return "";
  }

  /// The commands the probe judges: the plan's, or for a step that uses
  /// run-time values, the model rendered with real secrets and placeholders.
  bool commands_for(const plan::Step& p, steps::PreparedStep* out, std::string* err) const {
    if (p.runtime_refs.empty()) {
      *out = p.prepared;
      return true;
    }
    const playbook::Playbook& pb = *job.pb;
    steps::PrepareOptions popt;
    popt.plan = true;  // steps.* and run.* stay placeholders
    popt.files = &pb.files;
    return steps::prepare_step(pb.steps[p.index], job.scope, popt, out, err);
  }

  void service_state(const transport::ExecResult& r, StepProbe* sp) {
    std::istringstream in(r.out.data);
    for (std::string line; std::getline(in, line);) {
      auto eq = line.find('=');
      if (eq == std::string::npos) continue;
      std::string k = line.substr(0, eq), v = line.substr(eq + 1);
      if (k == "reload") k = "NeedDaemonReload";
      if (k == "left") k = "left in cgroup";
      if (k == "user_unit") k = "runs as a user unit of";
      sp->state.push_back({k, w().mask(v)});
    }
  }

  /// A write's target as its check saw it (sha256 of the whole file, mode,
  /// owner, group): what `apply` of a probed plan compares, past the diff's 256 KiB.
  static void file_state(const transport::ExecResult& stat, StepProbe* sp) {
    std::istringstream in(stat.out.data);
    std::string sha, mode, owner, group;
    in >> sha >> mode >> owner >> group;
    if (sha.size() != 64) return;
    sp->state = {{"sha256", sha}, {"mode", mode}, {"owner", owner}, {"group", group}};
  }

  /// The current content of a write's target, read by a probe-only check
  /// (`head -c`: reads, never writes), and the diff to what would be written.
  void write_diff(const plan::Step& p, const steps::Command& stat, const steps::Command& act, StepProbe* sp) {
    std::string path = stat_path(stat);
    if (path.empty()) return;
    std::string ref = placeholder_in(p, act.stdin_data);
    steps::Command read;
    read.role = steps::Role::check;
    read.text = fmt::format("head -c {} -- {}", kDiffBytes + 1, path);
    read.timeout = stat.timeout;
    read.judge = steps::Judge::exit0;
    auto r = ex.run(read, 0, "");
    if (!r.error.empty() || r.timed_out || r.exit_code != 0) {
      sp->diff = fmt::format("(current content unreadable: {})\n",
                             !r.error.empty() ? r.error : r.timed_out ? "timed out" : fmt::format("exit {}", r.exit_code));
      return;
    }
    std::string before = r.out.data;
    std::string note;
    if (before.size() > kDiffBytes) {
      before.resize(kDiffBytes);
      note = fmt::format("(only the first {} bytes of the current file were read)\n", kDiffBytes);
    }
    const std::string file = command_words(path).empty() ? path : command_words(path)[0];
    // Control bytes as \xNN (show's escape style); a reviewer reads at most
    // kDiffLines lines of kDiffCols bytes (a 256 KiB one-line file is one cut line).
    // A line of the new content that holds a secret, and the host's line at
    // the same place (its old value, which no mask knows), show as "***".
    const util::SecretLine secret = [this](const std::string& line) { return w().mask(line) != line; };
    sp->diff = util::trim_lines(util::escape_bytes(w().mask(util::unified_diff_masked(
                                    before, act.stdin_data, file + " (now)", file + " (would be written)", secret))),
                                kDiffLines, kDiffCols) +
               note;
    if (!ref.empty())
      sp->diff += fmt::format("(the new content holds <{}>, known only when it runs)\n", ref);
  }

  StepProbe probe_step(const plan::Step& p) {
    StepProbe sp;
    sp.id = p.id;
    sp.name = p.name;
    sp.kind = p.kind;
    const playbook::Step& model = job.pb->steps.at(p.index);
    auto t0 = std::chrono::steady_clock::now();
    steps::PreparedStep ps;
    bool have_ps = false;
    w().emit(transcript::events::kStepStart,
             {{"host", job.host.name}, {"step", p.id}, {"kind", playbook::name(p.kind)}, {"name", p.name}});
    auto done = [&](ProbeVerdict v, std::string why) {
      sp.verdict = v;
      // The verdict already says it: no "could not check: could not check: ...".
      const std::string said = "could not check: ";
      if (v == ProbeVerdict::could_not_check && why.rfind(said, 0) == 0) why.erase(0, said.size());
      sp.no_remedy = v == ProbeVerdict::would_act && sp.action.empty() && sp.rung.empty() && !sp.no_check;
      sp.reason = w().mask(std::move(why));
      sp.ms = util::ms_since(t0);
      json end = {{"host", job.host.name}, {"step", p.id}, {"status", name(v)}, {"rung", 0}, {"ms", sp.ms}};
      if (!sp.reason.empty()) end["reason"] = sp.reason;
      w().emit(transcript::events::kStepEnd, end);
      if (v == ProbeVerdict::would_act && have_ps) note_acting(p, ps);
      return sp;
    };
    if (!model.probe) return done(ProbeVerdict::not_probed, "probe = false: its check was not run");
    if (!p.when.empty()) {
      bool go = true;
      std::string why;
      if (!playbook::eval_when(p.when, job.scope, &go, &why))
        return done(ProbeVerdict::could_not_check, "when: " + why);
      if (!go) return done(ProbeVerdict::skipped, fmt::format("when: {} is false", p.when));
    }
    if (!ex.lost().empty()) return done(ProbeVerdict::could_not_check, "the session is lost: " + ex.lost());
    std::string err;
    if (!commands_for(p, &ps, &err)) return done(ProbeVerdict::could_not_check, err);
    have_ps = true;
    const steps::Rung& own = ps.rungs.at(0);
    if (own.action) sp.action = w().mask(own.action->text);
    if (!own.action && ps.rungs.size() > 1 && ps.rungs[1].action)
      sp.rung = w().mask(ps.rungs[1].action->text);
    depends(p, ps, &sp);
    if (ps.action_is_result) {  // run without a check: nothing to send
      sp.no_check = true;
      return done(ProbeVerdict::would_act, "no check: runs every time");
    }
    if (p.kind == playbook::Kind::reboot)
      return done(ProbeVerdict::would_act, "a reboot step reboots every time it runs");
    if (p.kind == playbook::Kind::fetch)
      return done(ProbeVerdict::would_act, "a fetch step downloads what its patterns match every time it runs");
    if (std::string ref = placeholder_in_check(p, ps); !ref.empty())
      return done(ProbeVerdict::could_not_check,
                  fmt::format("its check uses <{}>, known only when it runs: not sent", ref));

    ex.set_step(p.id, p.become, p.become_user, p.capture);
    if (std::string why = ex.ensure_become(0); !why.empty()) return done(ProbeVerdict::could_not_check, why);
    bool secret_input = false;
    for (const auto& r : ps.rungs)
      if (r.action && w().mask(r.action->stdin_data) != r.action->stdin_data) secret_input = true;
    ex.set_redact_output(secret_input);
    std::vector<transport::ExecResult> results;
    steps::Verdict v = check_rung0(ps, ex, "", &results);
    sp.holders = v.holders;
    for (size_t i = 0; i < results.size() && i < own.check.size(); ++i) {
      const auto& c = own.check[i];
      const auto& r = results[i];
      if (c.judge == steps::Judge::service) service_state(r, &sp);
      if ((c.judge == steps::Judge::exit0 || c.judge == steps::Judge::matches) && !v.holds && !secret_input) {
        // holder lines are shown as holders, not as output
        std::string out = first_lines(without_lines_tagged(r.out.data, "holder\t"));
        if (!r.err.data.empty()) out += util::indent_lines(first_lines(r.err.data), "stderr: ");
        sp.output += util::escape_bytes(w().mask(out));
      }
    }
    ProbeVerdict verdict = v.holds && !own.always_act ? ProbeVerdict::ok : ProbeVerdict::would_act;
    if (v.unknown || ex.interrupted() || !ex.lost().empty()) verdict = ProbeVerdict::could_not_check;
    std::string why = v.reason;
    if (own.always_act && verdict == ProbeVerdict::would_act)
      why = "restarted / reloaded: acts every time" + (v.reason.empty() ? "" : " (now: " + v.reason + ")");
    if (verdict == ProbeVerdict::would_act && !own.check.empty() && own.check[0].judge == steps::Judge::write &&
        own.action) {
      if (v.reason == "file does not exist") sp.would_create = true;
      else {
        if (!results.empty()) file_state(results[0], &sp);
        if (v.reason.find("content differs") != std::string::npos) write_diff(p, own.check[0], *own.action, &sp);
        if (!results.empty()) sp.diff = meta_lines(results[0], own.check[0].expect) + sp.diff;
      }
    }
    ex.set_redact_output(false);
    return done(verdict, why);
  }
};

}  // namespace

HostProbe probe_host(const HostJob& job, transport::Transport& t, const ProbeShared& shared) {
  HostProbe rep;
  rep.host = job.host.name;
  auto t0 = std::chrono::steady_clock::now();
  auto& w = *shared.w;
  Executor ex(t, w, job.host.name, shared.interrupted);
  transport::ConnectInfo info;
  if (auto err = ex.connect(&info)) {
    rep.status = host_key_failure(*err) ? HostStatus::host_key : HostStatus::unreachable;
    rep.reason = err->message;
    rep.cause = transport::cause_name(err->kind);
    rep.ms = util::ms_since(t0);
    transcript::write_host_end(w, {rep.host, std::string(name(rep.status)), {}, rep.ms, rep.reason, std::nullopt});
    return rep;
  }
  rep.connected = fmt::format("{}@{}:{}", info.user, info.address, info.port);
  for (const auto& hop : info.via) rep.connected += " via " + hop;
  ex.set_become_password(shared.become_password);
  ex.set_reconnect(util::Millis(0), nullptr);  // a snapshot: a lost session is not retried
  HostProber pr{job, shared, ex, {}};
  std::map<std::string, int> counts;
  for (const auto& p : job.plan->steps) {
    if (shared.interrupted && shared.interrupted->load()) {
      // Every step is listed: the ones after ^C say they were not probed.
      rep.status = HostStatus::interrupted;
      StepProbe sp;
      sp.id = p.id;
      sp.name = p.name;
      sp.kind = p.kind;
      sp.verdict = ProbeVerdict::not_probed;
      sp.reason = "interrupted before it";
      rep.steps.push_back(std::move(sp));
      counts[std::string(name(ProbeVerdict::not_probed))]++;
      continue;
    }
    rep.steps.push_back(pr.probe_step(p));
    const StepProbe& sp = rep.steps.back();
    counts[std::string(name(sp.verdict))]++;
    if (sp.verdict == ProbeVerdict::could_not_check && rep.status == HostStatus::ok) {
      rep.status = HostStatus::failed;
      rep.reason = sp.id + ": " + sp.reason;
    }
  }
  t.close();
  rep.ms = util::ms_since(t0);
  transcript::HostEnd end{rep.host, std::string(name(rep.status)), counts, rep.ms, std::nullopt, std::nullopt};
  if (!rep.reason.empty()) end.reason = rep.reason;
  transcript::write_host_end(w, end);
  return rep;
}

std::vector<HostProbe> probe_fleet(const std::vector<HostJob>& jobs, int forks, const TransportFactory& make,
                                   const ProbeShared& shared) {
  std::vector<HostProbe> out(jobs.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      auto t = make(jobs[i].endpoint);
      out[i] = probe_host(jobs[i], *t, shared);
    }
  };
  std::vector<std::thread> pool;
  const size_t n = std::min(jobs.size(), static_cast<size_t>(std::max(1, forks)));
  for (size_t k = 0; k < n; ++k) pool.emplace_back(worker);
  for (auto& th : pool) th.join();
  return out;
}

}  // namespace ratchet::engine
