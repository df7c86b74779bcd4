#include "steps/respawn.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace ratchet::steps {

namespace {

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  while (true) {
    size_t i = line.find('\t');
    out.push_back(line.substr(0, i));
    if (i == std::string_view::npos) return out;
    line.remove_prefix(i + 1);
  }
}

bool number(std::string_view s, long long* v) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size() && *v >= 0;
}

template <typename F>
void each_line(std::string_view text, F f) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    f(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// What to stop instead of signalling again: the owner that brings it back.
std::string stop_what(const Respawn& r) {
  const Owner& o = *r.now.owner;
  if (r.by_owner && restarts(o)) {
    if (o.kind == OwnerKind::unit) return "stop the unit instead";
    if (o.kind == OwnerKind::container) return "stop the container instead";
    return "stop the pod's workload instead";
  }
  if (r.by_parent) return fmt::format("stop its supervisor PID {} ({}) instead", r.by.ppid, r.by.comm);
  if (r.by_owner && o.kind == OwnerKind::unit) return "stop the unit instead";
  return "stop what starts it instead";
}

// True for an owner that was read: not the root cgroup (none), not unreadable.
bool owner_known(const Owner& o) { return o.kind != OwnerKind::none && o.kind != OwnerKind::unknown; }

// The words of the unreadable owner in a respawn of unknown owner.
std::string unknown_owner_words(const Respawn& r) {
  if (r.now.owner && r.now.owner->kind == OwnerKind::unknown) return describe(*r.now.owner);
  return "could not tell the owner of the signalled holder";
}

}  // namespace

std::map<long long, Parent> parse_parents(std::string_view out) {
  std::map<long long, Parent> ps;
  each_line(out, [&](std::string_view line) {
    auto f = fields(line);
    long long pid = 0, ppid = 0;
    if (f.size() != 4 || f[0] != "parent" || !number(f[1], &pid) || !number(f[2], &ppid)) return;
    ps.emplace(pid, Parent{ppid, std::string(f[3])});
  });
  return ps;
}

KillRound parse_kill_round(std::string_view action_out) {
  KillRound k;
  k.signalled = parse_process_lines(action_out, "signalled");
  k.parents = parse_parents(action_out);
  each_line(action_out, [&](std::string_view line) {
    auto f = fields(line);
    long long t = 0;
    if (f.size() == 2 && f[0] == "clock" && number(f[1], &t)) k.clock_ticks = t;
  });
  return k;
}

std::vector<Respawn> find_respawns(const KillRound& round, const std::vector<Holder>& alive,
                                   const std::map<long long, Parent>& parents_now) {
  std::vector<Respawn> out;
  for (const auto& h : alive) {
    const bool signalled = std::any_of(round.signalled.begin(), round.signalled.end(), [&](const Holder& s) {
      return s.pid == h.pid && s.start_ticks == h.start_ticks;
    });
    if (signalled || h.started.empty()) continue;
    if (round.clock_ticks >= 0 && h.start_ticks < round.clock_ticks) continue;  // there before the signal
    Respawn r{h, {}, false, false};
    if (auto p = parents_now.find(h.pid); p != parents_now.end()) r.by = p->second;
    for (const auto& s : round.signalled) {
      if (s.cmdline != h.cmdline) continue;
      auto sp = round.parents.find(s.pid);
      if (r.by.ppid > 0 && sp != round.parents.end() && sp->second.ppid == r.by.ppid) r.by_parent = true;
      if (s.owner && h.owner && owner_known(*s.owner) && *s.owner == *h.owner) r.by_owner = true;
      // Either owner unreadable: whether the same owner started it cannot be told.
      if ((s.owner && s.owner->kind == OwnerKind::unknown) || (h.owner && h.owner->kind == OwnerKind::unknown))
        r.owner_unknown = true;
    }
    if (r.by_parent || r.by_owner || r.owner_unknown) out.push_back(std::move(r));
  }
  return out;
}

std::string respawn_text(const Respawn& r) {
  if (!r.by_parent && !r.by_owner)  // r.owner_unknown: neither "respawned" nor "not respawned"
    return fmt::format("PID {} ({}) started after the signal with a signalled holder's command line: whether its "
                       "owner started it again cannot be told ({})",
                       r.now.pid, r.now.comm, unknown_owner_words(r));
  std::string by;
  if (r.by_parent) by = fmt::format("PID {} ({})", r.by.ppid, r.by.comm);
  if (r.by_owner) by += (by.empty() ? "" : " / ") + describe(*r.now.owner);
  return fmt::format("PID {} ({}) started after the signal: respawned by {}; {}", r.now.pid, r.now.comm, by,
                     stop_what(r));
}

std::string survivors_text(const std::vector<Holder>& alive, std::string_view what) {
  constexpr size_t kNamed = 5, kCommand = 60;
  std::string out = fmt::format("{} {} process(es) still alive", alive.size(), what);
  for (size_t i = 0; i < alive.size() && i < kNamed; ++i) {
    std::string cmd = alive[i].cmdline.empty() ? alive[i].comm : alive[i].cmdline;
    if (cmd.size() > kCommand) cmd = cmd.substr(0, kCommand - 3) + "...";
    out += fmt::format("{}PID {} ({})", i == 0 ? ": " : ", ", alive[i].pid, cmd);
  }
  if (alive.size() > kNamed) out += fmt::format(" and {} more", alive.size() - kNamed);
  return out;
}

void explain_respawns(KillRound* round, std::string_view check_out, Verdict* v) {
  if (v->holds || v->unknown || v->holders.empty()) return;
  round->respawned = find_respawns(*round, v->holders, parse_parents(check_out));
  if (round->respawned.empty()) return;
  std::string why;
  for (const auto& r : round->respawned) why += (why.empty() ? "" : "; ") + respawn_text(r);
  std::vector<Holder> others;
  for (const auto& h : v->holders)
    if (std::none_of(round->respawned.begin(), round->respawned.end(), [&](const Respawn& r) { return r.now.pid == h.pid; }))
      others.push_back(h);
  if (!others.empty()) why += "; " + survivors_text(others, "other selected");
  v->reason = why;
}

std::string kill_undone_note(const Holder& h) {
  if (h.owner && h.owner->kind == OwnerKind::unknown)  // fail closed: never read as "no supervisor"
    return fmt::format("PID {}: {}: whether a supervisor will undo the kill cannot be told", h.pid, describe(*h.owner));
  if (!h.owner || !restarts(*h.owner)) return "";
  const Owner& o = *h.owner;
  // A system unit by its name alone: "belongs to sglang.service (Restart=always)".
  std::string who = o.kind == OwnerKind::unit && o.scope == "system" ? o.name + " (Restart=" + o.restart + ")"
                                                                       : describe(o);
  const char* stop = o.kind == OwnerKind::unit        ? "stop the unit"
                     : o.kind == OwnerKind::container ? "stop the container"
                                                      : "stop the pod's workload";
  // A container whose restart policy its runtime's files do not say: it may come back.
  const char* undone = o.kind == OwnerKind::container && o.restart.empty() ? "may be" : "will be";
  return fmt::format("PID {} belongs to {}: a kill {} undone; {}", h.pid, who, undone, stop);
}

}  // namespace ratchet::steps
