#include "report/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>

#include "transcript/events.h"
#include "transcript/value_json.h"
#include "util/owner_words.h"
#include "util/text.h"

namespace ratchet::report {

using nlohmann::json;
namespace ev = transcript::events;

namespace {

// A transcript may be hand-edited or foreign: every field is read by its type,
// and one of another type is as good as absent.
std::string str(const json& e, const char* k) {
  auto it = e.find(k);
  return it != e.end() && it->is_string() ? it->get<std::string>() : "";
}

long long integer(const json& e, const char* k, long long dflt = 0) {
  auto it = e.find(k);
  return it != e.end() && it->is_number_integer() ? it->get<long long>() : dflt;
}

std::optional<bool> boolean(const json& e, const char* k) {
  auto it = e.find(k);
  if (it == e.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

/// A scalar as text: strings as they are, anything else as compact JSON.
std::string text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::vector<Holder> holders(const json& e, const char* k) {
  std::vector<Holder> out;
  auto it = e.find(k);
  if (it == e.end() || !it->is_array()) return out;
  for (const auto& h : *it) {
    if (!h.is_object()) continue;
    Holder x;
    auto get = [&](const char* f) { return h.contains(f) ? text(h[f]) : std::string(); };
    x.pid = get("pid"), x.user = get("user"), x.comm = get("comm"), x.cmdline = get("cmdline");
    x.started = get("started");
    x.state = get("state");
    if (h.contains("owner")) x.owner = util::owner_words(transcript::from_json(h["owner"]));
    if (auto f = h.find("files"); f != h.end() && f->is_array())
      for (const auto& p : *f) x.files += (x.files.empty() ? "" : "\n") + text(p);
    if (auto ns = h.find("nodes"); ns != h.end() && ns->is_array())
      for (const auto& n : *ns) {
        if (!n.is_object()) continue;
        HeldNode hn;
        hn.target = str(n, "target"), hn.node = str(n, "node"), hn.device = str(n, "device");
        hn.mount_ns = n.contains("mount_ns") ? text(n["mount_ns"]) : "";
        hn.deleted = boolean(n, "deleted").value_or(false);
        x.nodes.push_back(std::move(hn));
      }
    if (auto ts = h.find("threads"); ts != h.end() && ts->is_array())
      for (const auto& t : *ts)
        if (t.is_object()) x.threads.push_back({t.contains("tid") ? text(t["tid"]) : "", str(t, "target")});
    out.push_back(std::move(x));
  }
  return out;
}

Evidence evidence(const json& e) {
  Evidence x;
  x.rung = static_cast<int>(integer(e, "rung"));
  x.role = str(e, "role"), x.note = str(e, "note");
  x.holds = boolean(e, "holds"), x.ok = boolean(e, "ok");
  x.could_not_check = boolean(e, "could_not_check").value_or(false);
  x.holders = holders(e, "holders"), x.signalled = holders(e, "signalled");
  static const char* const kShown[] = {"event",
                                       "t",
                                       "prev",
                                       "host",
                                       "step",
                                       "rung",
                                       "role",
                                       "note",
                                       "holds",
                                       "ok",
                                       "could_not_check",
                                       "holders",
                                       "signalled"};
  for (auto it = e.begin(); it != e.end(); ++it)
    if (std::find_if(std::begin(kShown), std::end(kShown),
                     [&](const char* s) { return it.key() == s; }) == std::end(kShown))
      x.other.emplace_back(it.key(), text(it.value()));
  return x;
}

Output output(const json& e) {
  Output o;
  o.stream = str(e, "stream");
  o.bytes = integer(e, "bytes");
  o.dropped = integer(e, "dropped");
  o.redacted = boolean(e, "redacted").value_or(false);
  if (auto d = e.find("data"); d != e.end() && d->is_string()) {
    o.data = d->get<std::string>();
  } else if (auto b = e.find("data_b64"); b != e.end() && b->is_string()) {
    o.binary = true;
    if (!util::unbase64(b->get<std::string>(), &o.data)) o.data = "(data_b64 that is not base64)";
  }
  return o;
}

/// The host of `name`, added at the end when the run has not seen it yet.
Host& host_of(Run& r, const std::string& name) {
  for (auto& h : r.hosts)
    if (h.name == name) return h;
  r.hosts.push_back(Host{});
  r.hosts.back().name = name;
  return r.hosts.back();
}

/// The host's open step of id `id` (the last one begun), or nullptr.
Step* step_of(Host& h, const std::string& id) {
  for (auto it = h.steps.rbegin(); it != h.steps.rend(); ++it)
    if (it->id == id) return &*it;
  return nullptr;
}

/// The last command of `s` at rung `rung` still waiting for its exit.
Command* open_command(Step* s, int rung) {
  if (!s) return nullptr;
  for (auto it = s->commands.rbegin(); it != s->commands.rend(); ++it)
    if (it->rung == rung) return it->ended ? nullptr : &*it;
  return nullptr;
}

void add_event(Run& r, const json& e, long long t) {
  const std::string name = str(e, "event");
  if (name == ev::kRunStart) {
    r.run_id = str(e, "run_id"), r.mode = str(e, "mode"), r.playbook = str(e, "playbook");
    r.playbook_path = str(e, "playbook_path"), r.playbook_sha256 = str(e, "playbook_sha256");
    r.ratchet_version = str(e, "ratchet_version"), r.exec = str(e, "exec"),
    r.run_by = str(e, "run_by");
    r.t_start = t;
    if (auto a = e.find("argv"); a != e.end() && a->is_array())
      for (const auto& w : *a) r.argv += (r.argv.empty() ? "" : " ") + text(w);
    if (auto p = e.find("plan"); p != e.end() && p->is_object()) {
      r.plan_digest = str(*p, "digest"), r.plan_path = str(*p, "path");
      r.plan_made_by = str(*p, "made_by"), r.plan_made_at = str(*p, "made_at");
    }
    if (auto ts = e.find("targets"); ts != e.end() && ts->is_array())
      for (const auto& h : *ts)
        if (h.is_string()) host_of(r, h.get<std::string>());
    return;
  }
  if (name == ev::kRunEnd) {
    r.ended = true;
    r.status = str(e, "status"), r.exit_code = integer(e, "exit_code", -1), r.ms = integer(e, "ms");
    return;
  }
  if (name == ev::kHostLibrary || name == ev::kBatchStart) return;
  if (!ev::find(name)) {
    if (std::find(r.unknown.begin(), r.unknown.end(), name) == r.unknown.end())
      r.unknown.push_back(name);
    return;
  }
  const std::string hn = str(e, "host");
  if (hn.empty()) return;
  Host& h = host_of(r, hn);
  const std::string sid = str(e, "step");
  const int rung = static_cast<int>(integer(e, "rung"));
  if (name == ev::kConnect) {
    if (boolean(e, "after_reboot").value_or(false)) {
      h.marks.push_back({Mark::Kind::back_after_reboot, t, true, "", "back after reboot"});
      return;
    }
    h.connected = true;
    h.address = str(e, "address"), h.user = str(e, "user"), h.fingerprint = str(e, "fingerprint");
    h.auth_method = str(e, "auth_method"), h.port = integer(e, "port"),
    h.connect_ms = integer(e, "ms");
    h.t_connect = t;
    if (auto v = e.find("via"); v != e.end() && v->is_array())
      for (const auto& hop : *v) h.via += (h.via.empty() ? "" : ", ") + text(hop);
  } else if (name == ev::kUnreachable) {
    h.unreachable_cause = str(e, "cause"), h.unreachable_message = str(e, "message");
  } else if (name == ev::kReconnect) {
    bool ok = boolean(e, "ok").value_or(false);
    h.marks.push_back({Mark::Kind::reconnect, t, ok, sid,
                       fmt::format("reconnect attempt {}: {}", integer(e, "attempt"),
                                   ok ? "connected" : str(e, "message"))});
  } else if (name == ev::kRebootWait) {
    h.marks.push_back({Mark::Kind::reboot_wait, t, false, sid,
                       fmt::format("waiting for the reboot, attempt {}: {}", integer(e, "attempt"),
                                   str(e, "message"))});
  } else if (name == ev::kStepStart) {
    Step s;
    s.id = sid, s.name = str(e, "name"), s.kind = str(e, "kind"), s.t_start = t;
    h.steps.push_back(std::move(s));
  } else if (name == ev::kCommand) {
    Step* s = step_of(h, sid);
    if (!s) return;
    Command c;
    c.rung = rung, c.role = str(e, "role"), c.command = str(e, "command"), c.t = t;
    c.timeout_ms = integer(e, "timeout_ms");
    s->commands.push_back(std::move(c));
  } else if (name == ev::kOutput) {
    if (Command* c = open_command(step_of(h, sid), rung)) c->outputs.push_back(output(e));
  } else if (name == ev::kExit) {
    if (Command* c = open_command(step_of(h, sid), rung)) {
      c->ended = true;
      if (auto it = e.find("code"); it != e.end() && it->is_number_integer())
        c->code = it->get<long long>();
      c->signal = str(e, "signal"), c->error = str(e, "error"), c->warning = str(e, "warning");
      c->ms = integer(e, "ms"), c->timed_out = boolean(e, "timed_out").value_or(false);
    }
  } else if (name == ev::kEvidence) {
    if (Step* s = step_of(h, sid)) s->evidence.push_back(evidence(e));
  } else if (name == ev::kStepEnd) {
    if (Step* s = step_of(h, sid)) {
      s->status = str(e, "status"), s->rung = rung, s->ms = integer(e, "ms"),
      s->reason = str(e, "reason");
      s->t_end = t;
    }
  } else if (name == ev::kHostEnd) {
    h.ended = true;
    h.status = str(e, "status"), h.reason = str(e, "reason"), h.stopped_at = str(e, "stopped_at");
    h.ms = integer(e, "ms"), h.t_end = t;
    if (auto c = e.find("counts"); c != e.end() && c->is_object())
      for (auto it = c->begin(); it != c->end(); ++it)
        if (it->is_number_integer()) h.counts.emplace_back(it.key(), it->get<long long>());
  }
}

/// Milliseconds since the epoch of an event's `t` ("2026-11-30T05:03:18.821Z"); nullopt when not
/// that form.
std::optional<long long> event_ms(const json& e) {
  std::string t = str(e, "t");
  int y, mo, d, hh, mm, ss, ms = 0, n = 0;
  if (std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &hh, &mm, &ss, &n) != 6)
    return std::nullopt;
  if (t.size() > static_cast<size_t>(n) && t[n] == '.') {
    int frac = 0, digits = 0;
    for (size_t k = n + 1;
         k < t.size() && std::isdigit(static_cast<unsigned char>(t[k])) && digits < 3;
         ++k, ++digits)
      frac = frac * 10 + (t[k] - '0');
    while (digits++ < 3) frac *= 10;
    ms = frac;
  }
  std::tm tm{};
  tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d, tm.tm_hour = hh, tm.tm_min = mm,
  tm.tm_sec = ss;
  return static_cast<long long>(timegm(&tm)) * 1000 + ms;
}

}  // namespace

static std::vector<std::vector<json>> split_runs(const std::vector<json>& events) {
  std::vector<std::vector<json>> runs;
  for (const auto& e : events) {
    if (str(e, "event") == ev::kRunStart) runs.emplace_back();
    if (!runs.empty()) runs.back().push_back(e);
  }
  return runs;
}

static Run build_run(const std::vector<json>& events) {
  Run r;
  r.events = events.size();
  for (const auto& e : events) {
    if (!e.is_object()) continue;
    long long t = event_ms(e).value_or(0);
    if (t > r.t_last) r.t_last = t;
    add_event(r, e, t);
  }
  if (r.t_start == 0) r.t_start = r.t_last;
  return r;
}

std::vector<Run> build_runs(const transcript::ReadResult& read) {
  std::vector<Run> out;
  for (const auto& run : split_runs(read.events)) out.push_back(build_run(run));
  return out;
}

}  // namespace ratchet::report
