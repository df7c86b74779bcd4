#include "steps/holders.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "util/clock.h"
#include "util/shell.h"
#include "util/text.h"

namespace ratchet::steps {

static std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t i = s.find(sep, start);
    if (i == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, i - start));
    start = i + 1;
  }
}

static bool to_ll(std::string_view s, long long* v) {
  if (s.empty()) return false;
  long long n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  *v = n;
  return true;
}

std::string decode_file(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '%' && i + 2 < field.size() && hex(field[i + 1]) >= 0 && hex(field[i + 2]) >= 0) {
      out += static_cast<char>(hex(field[i + 1]) * 16 + hex(field[i + 2]));
      i += 2;
    } else {
      out += field[i];
    }
  }
  return out;
}

std::optional<Holder> parse_process_line(std::string_view line) {
  auto f = split(line, '\t');
  if (f.size() < 8) return std::nullopt;
  Holder h;
  if (!to_ll(f[0], &h.pid) || !to_ll(f[2], &h.start_ticks)) return std::nullopt;
  double epoch = 0;
  try {
    epoch = std::stod(std::string(f[3]));
  } catch (...) {
    return std::nullopt;
  }
  h.started = util::rfc3339(util::WallTime(std::chrono::milliseconds(static_cast<long long>(std::llround(epoch * 1000)))));
  h.user = std::string(f[1]);
  h.comm = std::string(f[4]);
  h.cmdline = std::string(f[5]);
  h.state = std::string(f[6]);
  h.owner = parse_owner(f[7]);
  if (!h.owner) return std::nullopt;
  for (size_t i = 8; i < f.size(); ++i)
    if (!f[i].empty()) h.files.push_back(decode_file(f[i]));
  return h;
}

// "node PID target node mount_ns MAJ:MIN [deleted]" (docs/host-library.md): the PID and its node.
static std::optional<std::pair<long long, HeldNode>> parse_node_line(std::string_view line) {
  auto f = split(line, '\t');
  long long pid = 0;
  if ((f.size() != 6 && !(f.size() == 7 && f[6] == "deleted")) || f[0] != "node" || !to_ll(f[1], &pid) ||
      f[2].empty() || f[3].empty() || f[5].empty())
    return std::nullopt;
  HeldNode n{decode_file(f[2]), decode_file(f[3]), f[4] == "-" ? "" : std::string(f[4]), std::string(f[5]),
             f.size() == 7};
  return std::make_pair(pid, std::move(n));
}

// "task PID TID target": a target held through a thread's own descriptor table.
static std::optional<std::pair<long long, HeldThread>> parse_task_line(std::string_view line) {
  auto f = split(line, '\t');
  long long pid = 0, tid = 0;
  if (f.size() != 4 || f[0] != "task" || !to_ll(f[1], &pid) || !to_ll(f[2], &tid) || f[3].empty())
    return std::nullopt;
  return std::make_pair(pid, HeldThread{tid, decode_file(f[3])});
}

std::string node_text(long long pid, const HeldNode& n) {
  return fmt::format("PID {} holds {}{}{}: same device {} as {}", pid, n.deleted ? "the deleted node " : "",
                     util::quoted_name(n.node), n.mount_ns.empty() ? "" : " of mount namespace " + n.mount_ns,
                     n.device, util::quoted_name(n.target));
}

std::string thread_text(long long pid, const HeldThread& t) {
  return fmt::format("PID {} holds {} through its thread {}, which has a descriptor table of its own", pid,
                     util::quoted_name(t.target), t.tid);
}

std::string_view name(FrozenCgroup::Version v) { return v == FrozenCgroup::Version::v1 ? "v1" : "v2"; }

std::string thaw_command(const FrozenCgroup& c) {
  const bool v1 = c.version == FrozenCgroup::Version::v1;
  const std::string file = c.dir + (v1 ? "/freezer.state" : "/cgroup.freeze");
  // A name with a control byte is shown escaped (one line), not as a word to paste.
  const std::string shown = util::quoted_name(file) == file ? util::shell_quote(file) : util::quoted_name(file);
  return fmt::format("echo {} > {}", v1 ? "THAWED" : "0", shown);
}

bool freezer_wchan(std::string_view wchan) {
  return wchan == "__refrigerator" || wchan == "do_freezer_trap" || wchan.rfind("freezer", 0) == 0;
}

namespace {

// The frozen cgroups `cs` named ("A and B") and the command that thaws them all.
struct FrozenWords {
  std::string dirs, thaw;
};
FrozenWords frozen_words(const std::vector<FrozenCgroup>& cs) {
  FrozenWords w;
  for (size_t i = 0; i < cs.size(); ++i) {
    w.dirs += (i == 0 ? "" : i + 1 == cs.size() ? " and " : ", ") + util::quoted_name(cs[i].dir);
    w.thaw += (i == 0 ? "" : " && ") + thaw_command(cs[i]);
  }
  return w;
}

// The `frozen` lines of `text` ("frozen PID v1|v2 DIR"), by PID, in order.
std::vector<std::pair<long long, FrozenCgroup>> frozen_lines(std::string_view text) {
  std::vector<std::pair<long long, FrozenCgroup>> out;
  for (auto line : split(text, '\n')) {
    auto f = split(line, '\t');
    long long pid = 0;
    if (f.size() == 4 && f[0] == "frozen" && to_ll(f[1], &pid) && (f[2] == "v1" || f[2] == "v2") && !f[3].empty())
      out.emplace_back(pid, FrozenCgroup{f[2] == "v1" ? FrozenCgroup::Version::v1 : FrozenCgroup::Version::v2,
                                         decode_file(f[3])});
  }
  return out;
}

void add_cgroup(std::vector<FrozenCgroup>* cs, const FrozenCgroup& c) {
  if (std::find(cs->begin(), cs->end(), c) == cs->end()) cs->push_back(c);
}

}  // namespace

std::string unkillable_text(const Unkillable& u) {
  const std::string who = fmt::format("PID {}{} is in state {}", u.pid, u.comm.empty() ? "" : " (" + u.comm + ")", u.state);
  if (!u.frozen.empty()) {
    const FrozenWords w = frozen_words(u.frozen);
    return fmt::format("{} (frozen, wchan {}): its cgroup{} {} {} frozen, so KILL is pending until {} thawed, no "
                       "reboot needed: {}",
                       who, u.wchan, u.frozen.size() == 1 ? "" : "s", w.dirs, u.frozen.size() == 1 ? "is" : "are",
                       u.frozen.size() == 1 ? "it is" : "they are", w.thaw);
  }
  if (freezer_wchan(u.wchan))
    return fmt::format("{} (frozen, wchan {}: the cgroup freezer's wait): KILL is pending until its cgroup is "
                       "thawed, no reboot needed: echo 0 > /sys/fs/cgroup/PATH/cgroup.freeze (cgroup v2) or echo "
                       "THAWED > /sys/fs/cgroup/freezer/PATH/freezer.state (v1), PATH from /proc/{}/cgroup",
                       who, u.wchan, u.pid);
  return fmt::format("{} (uninterruptible, wchan {}): KILL is pending until the kernel releases it; a reboot or a "
                     "driver reset may be needed",
                     who, u.wchan);
}

std::vector<Unkillable> parse_unkillable(std::string_view text) {
  std::vector<Unkillable> out;
  std::map<long long, std::string> comm;
  for (const auto& h : parse_process_lines(text, "alive")) comm[h.pid] = h.comm;
  for (auto line : split(text, '\n')) {
    auto f = split(line, '\t');
    Unkillable u;
    if (f.size() != 4 || f[0] != "unkillable" || !to_ll(f[1], &u.pid) || f[2].empty()) continue;
    u.state = std::string(f[2]);
    u.wchan = f[3].empty() ? "?" : std::string(f[3]);
    if (auto c = comm.find(u.pid); c != comm.end()) u.comm = c->second;
    out.push_back(std::move(u));
  }
  for (auto& [pid, c] : frozen_lines(text))
    for (auto& u : out)
      if (u.pid == pid) add_cgroup(&u.frozen, c);
  return out;
}

std::string frozen_text(const Frozen& f) {
  const FrozenWords w = frozen_words(f.cgroups);
  const bool one = f.cgroups.size() == 1;
  return fmt::format("PID {}{}{} is in the frozen cgroup{} {}: it does not run, so the signal is pending until {} "
                     "thawed: {}",
                     f.pid, f.comm.empty() ? "" : " (" + f.comm + ")", f.state.empty() ? "" : ", in state " + f.state + ",",
                     one ? "" : "s", w.dirs, one ? "it is" : "they are", w.thaw);
}

std::vector<Frozen> parse_frozen(std::string_view text) {
  std::vector<Frozen> out;
  const auto stuck = parse_unkillable(text);
  std::map<long long, Holder> alive;
  for (auto& h : parse_process_lines(text, "alive")) alive.emplace(h.pid, std::move(h));
  for (auto& [p, c] : frozen_lines(text)) {
    const long long pid = p;  // (a lambda may not capture a structured binding)
    if (std::any_of(stuck.begin(), stuck.end(), [&](const Unkillable& u) { return u.pid == pid; })) continue;
    auto f = std::find_if(out.begin(), out.end(), [&](const Frozen& x) { return x.pid == pid; });
    if (f == out.end()) {
      Frozen n{pid, "", "", {}};
      if (auto a = alive.find(pid); a != alive.end()) n.comm = a->second.comm, n.state = a->second.state;
      out.push_back(std::move(n));
      f = out.end() - 1;
    }
    add_cgroup(&f->cgroups, c);
  }
  return out;
}

std::string traced_text(const Traced& t) {
  const std::string who = fmt::format("PID {}{}", t.pid, t.comm.empty() ? "" : " (" + t.comm + ")");
  if (t.tracer_pid == 0)
    return who + " is stopped by a tracer outside this PID namespace (TracerPid reads 0 here): CONT does not resume "
                 "it; detach or end the tracer where it runs";
  return fmt::format("{} is stopped by its tracer PID {} ({}): CONT does not resume it; detach or end the tracer", who,
                     t.tracer_pid, t.tracer_comm);
}

std::vector<Traced> parse_traced(std::string_view text) {
  std::vector<Traced> out;
  std::map<long long, std::string> comm;
  for (const auto& h : parse_process_lines(text, "alive")) comm[h.pid] = h.comm;
  for (auto line : split(text, '\n')) {
    auto f = split(line, '\t');
    Traced t;
    if (f.size() != 4 || f[0] != "traced" || !to_ll(f[1], &t.pid) || !to_ll(f[2], &t.tracer_pid)) continue;
    if (t.tracer_pid == 0 && f[3] != "-") continue;  // 0 only as "outside": "traced PID 0 -"
    t.tracer_comm = t.tracer_pid == 0 ? "" : f[3].empty() ? "?" : std::string(f[3]);
    if (auto c = comm.find(t.pid); c != comm.end()) t.comm = c->second;
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Holder> parse_process_lines(std::string_view text, std::string_view tag) {
  std::vector<Holder> out;
  std::set<long long> seen;
  std::vector<std::pair<long long, HeldNode>> nodes;
  std::vector<std::pair<long long, HeldThread>> threads;
  for (auto line : split(text, '\n')) {
    if (auto n = parse_node_line(line)) {
      nodes.push_back(std::move(*n));
      continue;
    }
    if (auto t = parse_task_line(line)) {
      threads.push_back(std::move(*t));
      continue;
    }
    if (!tag.empty()) {
      if (line.size() <= tag.size() || line.substr(0, tag.size()) != tag || line[tag.size()] != '\t')
        continue;
      line.remove_prefix(tag.size() + 1);
    }
    auto h = parse_process_line(line);
    if (!h || !seen.insert(h->pid).second) continue;
    out.push_back(std::move(*h));
  }
  for (auto& [pid, n] : nodes)
    for (auto& h : out)
      if (h.pid == pid && std::find(h.nodes.begin(), h.nodes.end(), n) == h.nodes.end()) h.nodes.push_back(n);
  for (auto& [pid, t] : threads)
    for (auto& h : out)
      if (h.pid == pid && std::find(h.threads.begin(), h.threads.end(), t) == h.threads.end()) h.threads.push_back(t);
  return out;
}

util::Value to_value(const Holder& h) {
  util::Value files = util::Value::array();
  for (const auto& f : h.files) files.push_back(f);
  util::Value v = util::Value::table({{"pid", h.pid}, {"user", h.user}, {"comm", h.comm}, {"cmdline", h.cmdline},
                                      {"files", std::move(files)}});
  if (!h.started.empty()) {
    v["start_ticks"] = h.start_ticks;
    v["started"] = h.started;
  }
  if (!h.state.empty()) v["state"] = h.state;
  if (h.owner) v["owner"] = to_value(*h.owner);
  if (!h.nodes.empty()) {
    util::Value nodes = util::Value::array();
    for (const auto& n : h.nodes) {
      util::Value nv = util::Value::table({{"target", n.target}, {"node", n.node}, {"device", n.device}});
      if (!n.mount_ns.empty()) nv["mount_ns"] = n.mount_ns;
      if (n.deleted) nv["deleted"] = true;
      nodes.push_back(std::move(nv));
    }
    v["nodes"] = std::move(nodes);
  }
  if (!h.threads.empty()) {
    util::Value threads = util::Value::array();
    for (const auto& t : h.threads) threads.push_back(util::Value::table({{"tid", t.tid}, {"target", t.target}}));
    v["threads"] = std::move(threads);
  }
  return v;
}

// The inverse of to_value's `nodes` member: false when it is not of that shape.
static bool nodes_from(const util::Value& v, std::vector<HeldNode>* out) {
  if (!v.is_array() || v.empty()) return false;
  for (const auto& nv : v.as_list()) {
    if (!nv.is_table()) return false;
    for (const auto& kv : nv.as_table())
      if (kv.first != "target" && kv.first != "node" && kv.first != "device" && kv.first != "mount_ns" &&
          kv.first != "deleted")
        return false;
    const util::Value &t = nv["target"], &n = nv["node"], &d = nv["device"], &ns = nv["mount_ns"], &del = nv["deleted"];
    if (!t.is_string() || !n.is_string() || !d.is_string() || !(ns.is_null() || ns.is_string())) return false;
    if (ns.is_string() && ns.as_string().empty()) return false;  // to_value leaves it out then
    if (!del.is_null() && !(del.is_bool() && del.as_bool())) return false;  // only `true` is written
    out->push_back({t.as_string(), n.as_string(), ns.is_null() ? "" : ns.as_string(), d.as_string(), !del.is_null()});
  }
  return true;
}

// The inverse of to_value's `threads` member: false when it is not of that shape.
static bool threads_from(const util::Value& v, std::vector<HeldThread>* out) {
  if (!v.is_array() || v.empty()) return false;
  for (const auto& tv : v.as_list()) {
    if (!tv.is_table() || tv.as_table().size() != 2) return false;
    const util::Value &tid = tv["tid"], &t = tv["target"];
    if (!tid.is_int() || !t.is_string()) return false;
    out->push_back({tid.as_int(), t.as_string()});
  }
  return true;
}

util::Value to_value(const std::vector<Holder>& hs) {
  util::Value out = util::Value::array();
  for (const auto& h : hs) out.push_back(to_value(h));
  return out;
}

std::optional<Holder> holder_from(const util::Value& v) {
  if (!v.is_table()) return std::nullopt;
  for (const auto& kv : v.as_table())
    if (kv.first != "pid" && kv.first != "user" && kv.first != "comm" && kv.first != "cmdline" &&
        kv.first != "files" && kv.first != "start_ticks" && kv.first != "started" && kv.first != "state" &&
        kv.first != "owner" && kv.first != "nodes" && kv.first != "threads")
      return std::nullopt;
  const util::Value &pid = v["pid"], &user = v["user"], &comm = v["comm"], &cmdline = v["cmdline"],
                    &files = v["files"], &ticks = v["start_ticks"], &started = v["started"];
  if (!pid.is_int() || !user.is_string() || !comm.is_string() || !cmdline.is_string() || !files.is_array())
    return std::nullopt;
  if (ticks.is_null() != started.is_null() || (!ticks.is_null() && (!ticks.is_int() || !started.is_string())))
    return std::nullopt;
  Holder h;
  h.pid = pid.as_int();
  h.user = user.as_string();
  h.comm = comm.as_string();
  h.cmdline = cmdline.as_string();
  for (const auto& f : files.as_list()) {
    if (!f.is_string()) return std::nullopt;
    h.files.push_back(f.as_string());
  }
  if (const util::Value* st = v.find("state")) {
    if (!st->is_string() || st->as_string().empty()) return std::nullopt;
    h.state = st->as_string();
  }
  if (const util::Value* ow = v.find("owner")) {
    h.owner = owner_from(*ow);
    if (!h.owner) return std::nullopt;
  }
  if (const util::Value& nodes = v["nodes"]; !nodes.is_null() && !nodes_from(nodes, &h.nodes)) return std::nullopt;
  if (const util::Value& th = v["threads"]; !th.is_null() && !threads_from(th, &h.threads)) return std::nullopt;
  if (!ticks.is_null()) {
    h.start_ticks = ticks.as_int();
    h.started = started.as_string();
    if (h.started.empty()) return std::nullopt;  // to_value leaves both out then
  }
  return h;
}

}  // namespace ratchet::steps
