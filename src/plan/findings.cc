#include "plan/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace ratchet::plan {

namespace {

constexpr std::array<ProbeVerdict, 5> kVerdicts = {ProbeVerdict::ok, ProbeVerdict::would_act,
                                                   ProbeVerdict::could_not_check, ProbeVerdict::not_probed,
                                                   ProbeVerdict::skipped};

/// The same process: its PID and start time (its command line where the
/// start time is not known), so a recycled PID is another process.
bool same_process(const steps::Holder& a, const steps::Holder& b) {
  if (a.pid != b.pid) return false;
  if (!a.started.empty() && !b.started.empty()) return a.start_ticks == b.start_ticks;
  return a.cmdline == b.cmdline;
}

std::string who(const steps::Holder& h) {
  const std::string owner = h.owner ? steps::describe(*h.owner) : "";
  return fmt::format("PID {} {} (user {}{}{}): {}", h.pid, h.comm, h.user.empty() ? "?" : h.user,
                     h.started.empty() ? "" : ", started " + h.started, owner.empty() ? "" : ", " + owner,
                     h.cmdline);
}

std::string words(ProbeVerdict v) {
  std::string s(name(v));
  std::replace(s.begin(), s.end(), '_', ' ');
  return s;
}

void step_changes(const StepFinding& a, const StepFinding& b, std::vector<std::string>* out) {
  auto say = [&](std::string what) { out->push_back(a.id + ": " + std::move(what)); };
  if (a.verdict != b.verdict)
    say(fmt::format("was {}, now {}{}", words(a.verdict), words(b.verdict), b.reason.empty() ? "" : ": " + b.reason));
  for (const auto& h : b.holders)
    if (std::none_of(a.holders.begin(), a.holders.end(), [&](const steps::Holder& x) { return same_process(x, h); }))
      say("new holder " + who(h));
  for (const auto& h : a.holders)
    if (std::none_of(b.holders.begin(), b.holders.end(), [&](const steps::Holder& x) { return same_process(x, h); }))
      say(fmt::format("holder PID {} {} is gone", h.pid, h.comm));
  for (const auto& h : b.holders) {  // the same process, now another program or other files (exec, open)
    auto was = std::find_if(a.holders.begin(), a.holders.end(), [&](const steps::Holder& x) { return same_process(x, h); });
    if (was == a.holders.end()) continue;
    if (was->comm != h.comm || was->cmdline != h.cmdline || was->user != h.user)
      say(fmt::format("holder PID {} is another program now: was {} (user {}): {}; now {}", h.pid, was->comm,
                      was->user.empty() ? "?" : was->user, was->cmdline, who(h)));
    if (was->files != h.files) {
      std::string f;
      for (const auto& x : h.files) f += (f.empty() ? "" : ", ") + x;
      say(fmt::format("holder PID {} {} holds other files now: {}", h.pid, h.comm, f.empty() ? "none" : f));
    }
  }
  for (const auto& kv_now : b.state) {
    const std::string &k = kv_now.first, &v = kv_now.second;
    auto was = std::find_if(a.state.begin(), a.state.end(), [&](const auto& kv) { return kv.first == k; });
    if (was == a.state.end()) say(fmt::format("{} is now {}", k, v.empty() ? "\"\"" : v));
    else if (was->second != v)
      say(fmt::format("{} was {}, now {}", k, was->second.empty() ? "\"\"" : was->second, v.empty() ? "\"\"" : v));
  }
  if (a.would_create != b.would_create)
    say(b.would_create ? "the file is gone (would create it)" : "the file exists now");
  else if (a.diff != b.diff)
    say("the file changed since the probe");
}

}  // namespace

std::string_view name(ProbeVerdict v) {
  switch (v) {
    case ProbeVerdict::ok: return "ok";
    case ProbeVerdict::would_act: return "would_act";
    case ProbeVerdict::could_not_check: return "could_not_check";
    case ProbeVerdict::not_probed: return "not_probed";
    case ProbeVerdict::skipped: return "skipped";
  }
  return "?";  // not reached (-Wswitch)
}

std::optional<ProbeVerdict> parse_probe_verdict(std::string_view s) {
  for (ProbeVerdict v : kVerdicts)
    if (name(v) == s) return v;
  return std::nullopt;
}

std::vector<std::string> changes_since(const HostFindings& then, const HostFindings& now) {
  std::vector<std::string> out;
  if (then.status != now.status)
    out.push_back(fmt::format("host was {}, now {}{}", then.status, now.status,
                              now.reason.empty() ? "" : ": " + now.reason));
  if (now.connected.empty()) return out;  // not reached now: no step to compare
  for (const auto& b : now.steps) {
    auto a = std::find_if(then.steps.begin(), then.steps.end(), [&](const StepFinding& x) { return x.id == b.id; });
    if (a == then.steps.end()) out.push_back(b.id + ": not in the saved probe");
    else step_changes(*a, b, &out);
  }
  for (const auto& a : then.steps)
    if (std::none_of(now.steps.begin(), now.steps.end(), [&](const StepFinding& x) { return x.id == a.id; }))
      out.push_back(a.id + ": not probed now (the probe stopped before it)");
  return out;
}

}  // namespace ratchet::plan
