#include "engine/ratchet_loop.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include <fmt/format.h>

#include "util/clock.h"

namespace ratchet::engine {

steps::Verdict check_rung0(const steps::PreparedStep& ps, Executor& ex, const std::string& selection,
                           std::vector<transport::ExecResult>* results, steps::KillRound* round) {
  steps::Verdict all;
  all.holds = true;
  for (const auto& c : ps.rungs.at(0).check) {
    auto r = ex.run(c, 0, c.stdin_from_action ? selection : "");
    auto v = steps::judge_check(c, r);
    if (c.judge == steps::Judge::kill) {
      if (round) steps::explain_respawns(round, r.out.data, &v);
      // Before a kill: whose owner would bring it back (a respawn's reason says so already).
      if (!v.holds && !v.unknown)
        for (const auto& h : v.holders) {
          const bool told = round && std::any_of(round->respawned.begin(), round->respawned.end(),
                                                 [&](const steps::Respawn& x) { return x.now.pid == h.pid; });
          if (std::string w = steps::kill_undone_note(h); !w.empty() && !told) v.reason += "; " + w;
        }
    }
    if (results) results->push_back(r);
    for (const auto& h : v.holders) all.holders.push_back(h);
    for (const auto& g : v.gpus.as_list()) all.gpus.push_back(g);
    if (!v.holds) {
      all.holds = false;
      all.unknown |= v.unknown;  // one condition nobody saw: the whole check is unknown
      all.reason += (all.reason.empty() ? "" : "; ") + v.reason;
    } else if (!v.reason.empty() && all.holds) {
      all.reason += (all.reason.empty() ? "" : "; ") + v.reason;
    }
    if (ex.interrupted()) {
      all.holds = false;
      all.unknown = true;
      all.reason = "interrupted";
      break;
    }
  }
  if (!all.holders.empty() || !all.reason.empty() || !all.gpus.empty()) {
    util::Value ev = util::Value::table({{"role", name(steps::Role::check)}, {"holds", all.holds}});
    if (all.unknown) ev["could_not_check"] = true;
    if (!all.holders.empty()) ev["holders"] = steps::to_value(all.holders);
    if (!all.gpus.empty()) ev["gpus"] = all.gpus;
    if (!all.reason.empty()) ev["note"] = all.reason;
    ex.evidence(0, std::move(ev));
  }
  return all;
}

namespace {

util::Value frozen_cgroups_value(const std::vector<steps::FrozenCgroup>& cs);

util::Value unkillable_value(const std::vector<steps::Unkillable>& us) {
  util::Value out = util::Value::array();
  for (const auto& u : us) {
    util::Value v = util::Value::table({{"pid", u.pid}, {"comm", u.comm}, {"state", u.state}, {"wchan", u.wchan}});
    if (!u.frozen.empty()) v["frozen"] = frozen_cgroups_value(u.frozen);
    out.push_back(std::move(v));
  }
  return out;
}

util::Value frozen_cgroups_value(const std::vector<steps::FrozenCgroup>& cs) {
  util::Value frozen = util::Value::array();
  for (const auto& c : cs)
    frozen.push_back(util::Value::table(
        {{"version", std::string(steps::name(c.version))}, {"cgroup", c.dir}, {"thaw", steps::thaw_command(c)}}));
  return frozen;
}

util::Value traced_value(const std::vector<steps::Traced>& ts) {
  util::Value out = util::Value::array();
  for (const auto& t : ts) {
    util::Value v = util::Value::table(
        {{"pid", t.pid}, {"comm", t.comm}, {"tracer_pid", t.tracer_pid}, {"tracer_comm", t.tracer_comm}});
    if (t.tracer_pid == 0) v["tracer"] = "outside this PID namespace";
    out.push_back(std::move(v));
  }
  return out;
}

util::Value frozen_value(const std::vector<steps::Frozen>& fs) {
  util::Value out = util::Value::array();
  for (const auto& f : fs)
    out.push_back(util::Value::table(
        {{"pid", f.pid}, {"comm", f.comm}, {"state", f.state}, {"frozen", frozen_cgroups_value(f.cgroups)}}));
  return out;
}

// The process lines of a kill action (tag "signalled"), untagged, to feed the
// kill check on stdin: those PIDs must be gone (same PID and start time).
std::string selection_of(const std::string& action_out) {
  std::istringstream in(action_out);
  std::string line, out;
  while (std::getline(in, line)) {
    static const std::string tag = "signalled\t";
    if (line.rfind(tag, 0) == 0) out += line.substr(tag.size()) + "\n";
  }
  return out;
}

struct Loop {
  const steps::PreparedStep& ps;
  Executor& ex;
  const Sleeper& sleep;
  StepOutcome o;
  std::string selection;  // stdin for a kill check
  steps::KillRound round;  // the last kill action: whom it signalled, and which of them came back
  std::string action_error;  // why the last action failed ("" = it did not)
  std::string action_reason;
  std::string action_note;  // a passing action's note (a warning), for a run step's reason
  bool acted = false;     // once an action ran, o.out/o.err keep its output
  std::string stuck;      // survivors of KILL in state D (the last kill action): no rung or retry ends them
  std::string traced;     // survivors in tracing stop (the last kill action): only their tracer resumes them
  std::string frozen;     // survivors in a frozen cgroup (the last kill action): the signal waits for a thaw

  void note_holders(const std::vector<steps::Holder>& h) {
    if (o.holders.empty() && !h.empty()) o.holders = h;
  }

  steps::Verdict check_once() {
    std::vector<transport::ExecResult> results;
    auto all = check_rung0(ps, ex, selection, &results, &round);
    if (!results.empty()) {
      o.rc = results.back().exit_code;
      if (!acted) o.out = results.back().out.data, o.err = results.back().err.data;
    }
    o.holders_left = all.holders;
    if (o.gpus.empty()) o.gpus = all.gpus;
    o.gpus_after = all.gpus;
    return all;
  }

  steps::Verdict check_with_retries(const steps::Rung& r) {
    auto v = check_once();
    for (int i = 0; i < r.retries && !v.holds && !ex.interrupted(); ++i) {
      sleep(r.delay);
      v = check_once();
    }
    return v;
  }

  void act(const steps::Rung& r, int k) {
    act_one(*r.action, k);
    // copy: each further entry in order, while each succeeds.
    for (const auto& c : r.more_actions) {
      if (!action_error.empty() || ex.interrupted()) break;
      act_one(c, k);
    }
  }

  void act_one(const steps::Command& c, int k) {
    auto res = ex.run(c, k, c.stdin_data);
    o.rc = res.exit_code;
    acted = true;
    o.out = res.out.data;
    o.err = res.err.data;
    auto v = steps::judge_action(c, res, ps.expect_exit);
    std::string warn;  // a kill a supervisor will undo: said before the check finds it back
    if (c.judge == steps::Judge::kill_action) {
      selection = selection_of(res.out.data);
      auto before = std::move(round.respawned);
      round = steps::parse_kill_round(res.out.data);
      for (const auto& h : round.signalled) {
        std::string w = steps::kill_undone_note(h);
        for (const auto& r : before)
          if (w.empty() && r.now.pid == h.pid && r.now.start_ticks == h.start_ticks)
            w = fmt::format("PID {} ({}) was respawned after the last signal: this one is likely undone too", h.pid, h.comm);
        if (!w.empty()) warn += (warn.empty() ? "" : "; ") + w;
      }
      stuck.clear();
      for (const auto& u : v.unkillable) stuck += (stuck.empty() ? "" : "; ") + steps::unkillable_text(u);
      traced.clear();
      for (const auto& t : v.traced) traced += (traced.empty() ? "" : "; ") + steps::traced_text(t);
      frozen.clear();
      for (const auto& f : v.frozen) frozen += (frozen.empty() ? "" : "; ") + steps::frozen_text(f);
      // A kill step's holders are what its own action selected (tree included).
      if (k == 0) o.holders = v.holders;
      else note_holders(v.holders);
    }
    if (!v.holders.empty() || !v.holds || !v.reason.empty()) {
      util::Value ev = util::Value::table({{"role", name(steps::Role::action)}, {"ok", v.holds}});
      if (!v.holders.empty()) ev["signalled"] = steps::to_value(v.holders);
      if (!v.unkillable.empty()) ev["unkillable"] = unkillable_value(v.unkillable);
      if (!v.traced.empty()) ev["traced"] = traced_value(v.traced);
      if (!v.frozen.empty()) ev["frozen"] = frozen_value(v.frozen);
      const std::string note = v.reason.empty() ? warn : warn.empty() ? v.reason : v.reason + "; " + warn;
      if (!note.empty()) ev["note"] = note;
      ex.evidence(k, std::move(ev));
    }
    action_reason = v.holds ? "" : v.reason;
    action_note = v.holds ? v.reason : "";
    action_error = v.holds ? "" : fmt::format("{} failed: {}", k == 0 ? "action" : fmt::format("rung {}", k), v.reason);
  }
};

}  // namespace

StepOutcome run_ratchet(const steps::PreparedStep& ps, Executor& ex, const Sleeper& sleep) {
  auto t0 = std::chrono::steady_clock::now();
  Loop L{ps, ex, sleep, {}, {}, {}, {}, {}, {}, false};
  StepOutcome& o = L.o;
  auto finish = [&](StepStatus status, int rung) {
    o.status = status;
    o.rung = rung;
    o.ms = util::ms_since(t0);
    return o;
  };
  const steps::Rung& own = ps.rungs.at(0);

  if (ps.action_is_result) {  // run without a check: its exit status is the result
    L.act(own, 0);
    o.reason = L.action_reason;
    const bool ok = o.reason.empty() && !ex.interrupted();
    if (ok) o.reason = L.action_note;
    return finish(ok ? StepStatus::changed : StepStatus::failed, 0);
  }
  if (!own.always_act) {
    // A step with no action of its own (verify) waits for its state with
    // `retries`/`delay` before any rung; others act at once.
    auto v = own.action ? L.check_once() : L.check_with_retries(own);
    L.note_holders(v.holders);
    if (v.holds) {
      o.reason = v.reason;
      return finish(StepStatus::ok, 0);
    }
    o.reason = v.reason;
    // A check that could not look says nothing of the state: no action on that.
    if (v.unknown) return finish(StepStatus::failed, 0);
  }
  int last = 0;
  for (size_t k = 0; k < ps.rungs.size(); ++k) {
    const steps::Rung& r = ps.rungs[k];
    if (!r.action) continue;  // verify: no action of its own
    if (ex.interrupted()) break;
    last = static_cast<int>(k);
    L.act(r, last);
    if (r.settle.count() > 0) sleep(r.settle);
    // A survivor of KILL in state D: no retry and no rung can end it (one check says what is left).
    auto v = L.stuck.empty() ? L.check_with_retries(r) : L.check_once();
    if (v.holds) {
      // Notes of the passing check ("nothing to kill") would mislead here; a
      // warning of the action (write: what it could not keep) stays.
      o.reason = L.action_note.rfind("warning: ", 0) == 0 ? L.action_note : "";
      return finish(k == 0 ? StepStatus::changed : StepStatus::escalated, last);
    }
    o.reason = L.action_error.empty() ? v.reason : L.action_error + "; then the check: " + v.reason;
    // An action that refused for the reason the check then gave (systemd not running): said once.
    if (v.unknown && !L.action_error.empty() && L.action_error.find(v.reason) != std::string::npos) o.reason = v.reason;
    if (!L.stuck.empty()) {
      o.reason = L.stuck + "; then the check: " + v.reason;
      break;
    }
    // A survivor its tracer keeps stopped: said first (a stronger rung, KILL, may still end it).
    if (!L.traced.empty() && L.action_error.empty()) o.reason = L.traced + "; then the check: " + v.reason;
    // A survivor in a frozen cgroup: the thaw said first (KILL ends it in a v2 freeze, not in v1's).
    if (!L.frozen.empty() && L.action_error.empty())
      o.reason = L.frozen + "; " + (L.traced.empty() ? "then the check: " + v.reason : o.reason);
    if (v.unknown) break;  // no stronger rung on a state nobody could check
  }
  return finish(StepStatus::failed, last);
}

}  // namespace ratchet::engine
