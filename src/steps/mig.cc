// verify gpus_idle, MIG mode: reading nvidia-smi -L and -q -x into instances
// and their processes, and judging one instance on its own. The layouts follow
// what drivers 470..570 print (seen in NordicHPC/sonar#247, XuehaiPan/nvitop#8,
// NVIDIA/mig-parted#16, DataDog/datadog-agent#33120): see steps/mig.h.
#include "steps/mig.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace ratchet::steps {

namespace {

std::string trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::string lowered(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "13 MiB", "3", "N/A", "[N/A]": the leading number, or nullopt.
std::optional<long long> leading_number(std::string_view s) {
  std::string t = trimmed(s);
  if (t.empty() || !std::isdigit(static_cast<unsigned char>(t[0]))) return std::nullopt;
  long long n = 0;
  size_t i = 0;
  for (; i < t.size() && i < 18 && std::isdigit(static_cast<unsigned char>(t[i])); ++i) n = n * 10 + (t[i] - '0');
  if (i < t.size() && t[i] != ' ') return std::nullopt;
  return n;
}

// One line of -q -x: "<name>", "<name attr=...>", "</name>" or "<name>value</name>".
struct XmlLine {
  enum Kind { open, close, leaf, other } kind = other;
  std::string name, value;
};

XmlLine xml_line(const std::string& raw) {
  std::string s = trimmed(raw);
  XmlLine x;
  if (s.size() < 3 || s.front() != '<' || s.back() != '>' || s[1] == '?' || s[1] == '!') return x;
  if (s[1] == '/') {
    x.kind = XmlLine::close;
    x.name = s.substr(2, s.size() - 3);
    return x;
  }
  size_t end = s.find_first_of(" >/");
  x.name = s.substr(1, end - 1);
  size_t gt = s.find('>');
  std::string closing = "</" + x.name + ">";
  if (s.size() > closing.size() && s.compare(s.size() - closing.size(), closing.size(), closing) == 0) {
    x.kind = XmlLine::leaf;
    x.value = s.substr(gt + 1, s.size() - closing.size() - gt - 1);
  } else if (s[s.size() - 2] != '/') {
    x.kind = XmlLine::open;
  }
  return x;
}

// The MIG lines of -L, by parent UUID and device number.
bool read_list(const std::vector<std::string>& list, MigScan* out, std::string* err) {
  std::string parent;
  for (const auto& raw : list) {
    std::string l = trimmed(raw);
    auto u = l.find("(UUID: ");
    if (u == std::string::npos || l.back() != ')') continue;
    std::string uuid = l.substr(u + 7, l.size() - u - 8);
    if (l.rfind("GPU ", 0) == 0) {
      parent = uuid;
      continue;
    }
    if (l.rfind("MIG ", 0) != 0) continue;
    auto d = l.find("Device ");
    auto colon = l.find(':', d == std::string::npos ? 0 : d);
    std::optional<long long> dev;
    if (d != std::string::npos && colon != std::string::npos) dev = leading_number(trimmed(l.substr(d + 7, colon - d - 7)));
    if (parent.empty() || !dev || uuid.rfind("MIG-", 0) != 0) {
      *err = fmt::format("nvidia-smi -L printed a MIG line ratchet cannot read: \"{}\"", short_line(l));
      return false;
    }
    MigInstance m;
    m.uuid = uuid;
    m.parent_uuid = parent;
    m.profile = trimmed(l.substr(0, d));
    m.device = *dev;
    out->instances.push_back(std::move(m));
  }
  return true;
}

}  // namespace

MigScan parse_mig(const std::vector<std::string>& list, const std::vector<std::string>& xml,
                  const std::vector<std::string>& caps, std::string* err) {
  MigScan out;
  if (!read_list(list, &out, err)) return out;
  for (const auto& c : caps) {  // ".../gpuN/mig/giG[/ciC]/access<TAB>MINOR"
    auto tab = c.find('\t');
    auto g = c.find("/gpu"), gi = c.find("/mig/gi");
    if (tab == std::string::npos || g == std::string::npos || gi == std::string::npos) continue;
    auto n = leading_number(c.substr(g + 4, gi - g - 4)), id = leading_number(c.substr(gi + 7, c.find('/', gi + 7) - gi - 7));
    auto minor = leading_number(c.substr(tab + 1));
    if (n && id && minor) out.caps[*minor] = {*n, *id};
  }
  // -q -x: a <gpu> holds its instances and processes; its <uuid> may come after them.
  std::vector<std::string> path;
  std::map<long long, MigInstance> devices;  // of the current <gpu>, by <index>
  std::vector<MigProcess> procs;             // of the current <gpu>
  MigInstance dev;
  MigProcess proc;
  std::string gpu_uuid;
  auto under = [&](const char* a, const char* b) {
    return path.size() >= 2 && path[path.size() - 2] == a && path.back() == b;
  };
  for (const auto& raw : xml) {
    XmlLine x = xml_line(raw);
    if (x.kind == XmlLine::open) {
      path.push_back(x.name);
      if (x.name == "gpu") devices.clear(), procs.clear(), gpu_uuid.clear();
      if (x.name == "mig_device") dev = MigInstance{};
      if (x.name == "process_info") proc = MigProcess{};
    } else if (x.kind == XmlLine::leaf) {
      if (path.empty()) continue;
      if (path.back() == "gpu" && x.name == "uuid") gpu_uuid = trimmed(x.value);
      if (path.back() == "mig_device") {
        if (x.name == "index") dev.device = leading_number(x.value).value_or(-1);
        if (x.name == "gpu_instance_id") dev.gi = leading_number(x.value);
        if (x.name == "compute_instance_id") dev.ci = leading_number(x.value);
      }
      if (under("mig_device", "fb_memory_usage")) {
        if (x.name == "used") dev.memory_used = leading_number(x.value);
        if (x.name == "total") dev.memory_total = leading_number(x.value);
      }
      if (path.back() == "process_info") {
        if (x.name == "pid") proc.pid = leading_number(x.value).value_or(0);
        if (x.name == "process_name") proc.name = trimmed(x.value);
        if (x.name == "gpu_instance_id") proc.gi = leading_number(x.value);
        if (x.name == "compute_instance_id") proc.ci = leading_number(x.value);
        if (x.name == "used_memory") proc.used_memory = leading_number(x.value);
      }
    } else if (x.kind == XmlLine::close) {
      if (x.name == "mig_device") devices[dev.device] = dev;
      if (x.name == "process_info" && proc.pid > 0) procs.push_back(proc);
      if (x.name == "gpu") {
        for (auto& m : out.instances)
          if (lowered(m.parent_uuid) == lowered(gpu_uuid))
            if (auto it = devices.find(m.device); it != devices.end()) {
              m.gi = it->second.gi, m.ci = it->second.ci;
              m.memory_used = it->second.memory_used, m.memory_total = it->second.memory_total;
            }
        for (auto& p : procs) p.parent_uuid = gpu_uuid, out.processes.push_back(p);
      }
      if (!path.empty() && path.back() == x.name) path.pop_back();
    }
  }
  return out;
}

std::optional<std::pair<MigInstance, size_t>> find_mig(const MigScan& scan, const std::vector<SmiGpu>& gpus,
                                                       const std::string& uuid, std::string* err) {
  for (const auto& m : scan.instances) {
    if (lowered(m.uuid) != lowered(uuid)) continue;
    for (size_t i = 0; i < gpus.size(); ++i)
      if (lowered(gpus[i].uuid) == lowered(m.parent_uuid)) return std::make_pair(m, i);
  }
  std::string have;
  for (const auto& x : scan.instances) have += (have.empty() ? "" : ", ") + x.uuid;
  *err = fmt::format("nvidia-smi -L lists no MIG instance {} ({})", uuid,
                     have.empty() ? "it lists none: is MIG mode on?" : "it lists " + have);
  return std::nullopt;
}

MigVerdict judge_mig(const MigInstance& m, const MigScan& scan, const MigContext& ctx) {
  MigVerdict v;
  const SmiGpu& g = *ctx.parent;
  auto mib = [](const std::optional<long long>& n) { return n ? util::Value(*n) : util::Value(); };
  // The driver's attribution of each PID on the parent GPU.
  std::map<long long, const MigProcess*> on_parent;
  for (const auto& p : scan.processes)
    if (lowered(p.parent_uuid) == lowered(m.parent_uuid)) on_parent[p.pid] = &p;
  auto mine = [&](const MigProcess* p) { return p && p->gi && m.gi && *p->gi == *m.gi && (!p->ci || !m.ci || *p->ci == *m.ci); };
  auto attributed = [&](const MigProcess* p) { return p && p->gi.has_value(); };

  std::vector<std::string> unknown, sel_procs, sel_holders;
  long long left_out_mib = 0;
  std::set<long long> seen;
  util::Value procs = util::Value::array(), holders = util::Value::array();
  auto count = [&](long long pid, const std::string& name, const std::optional<long long>& used) {
    if (!seen.insert(pid).second) return;
    util::Value p = util::Value::table({{"pid", pid}, {"process_name", name}});
    p["used_memory_mib"] = mib(used);
    auto vis = ctx.listed->find(pid);
    const bool selected = vis == ctx.listed->end() || ctx.selected->count(pid) > 0;
    p["visible"] = vis != ctx.listed->end();
    p["selected"] = selected;
    if (vis != ctx.listed->end()) {
      p["user"] = vis->second.user;
      if (!selected) p["left_out"] = ctx.left_out(vis->second);
    }
    if (selected) {
      sel_procs.push_back(fmt::format("PID {} ({})", pid, name.substr(name.find_last_of('/') + 1)));
      v.holders.push_back(vis != ctx.listed->end() ? vis->second : Holder{.pid = pid, .comm = name, .cmdline = name});
    } else if (used) {
      left_out_mib += *used;
    }
    procs.push_back(std::move(p));
  };
  // The driver's view: its compute apps on the parent (or named by the instance), by instance.
  for (const auto& a : *ctx.apps) {
    const std::string u = lowered(a.gpu_uuid);
    if (u != lowered(m.parent_uuid) && u != lowered(m.uuid)) continue;
    auto it = on_parent.find(a.pid);
    const MigProcess* p = it == on_parent.end() ? nullptr : it->second;
    if (u == lowered(m.uuid) || mine(p)) count(a.pid, a.process_name, p ? p->used_memory : a.used_memory);
    else if (!attributed(p))
      unknown.push_back(fmt::format("PID {} ({}) runs on GPU {} but nvidia-smi names no MIG instance for it", a.pid,
                                    a.process_name, g.index));
  }
  for (const auto& [pid, p] : on_parent)
    if (mine(p)) count(pid, p->name, p->used_memory);
  // The kernel's view: a holder of the parent's device file is this
  // instance's when the driver says so, a sibling's when it names another
  // instance, and nobody can tell whose otherwise.
  for (const auto& h : *ctx.holders) {
    std::string file;
    std::optional<long long> cap_gi;  // the GPU instance of a capability file it holds
    for (const auto& f : h.files) {
      if (ctx.parent_file(f)) file = f;
      const std::string b = f.substr(f.find_last_of('/') + 1);
      if (b.rfind("nvidia-cap", 0) != 0) continue;
      auto c = leading_number(b.substr(10));
      auto it = c ? scan.caps.find(*c) : scan.caps.end();
      if (it != scan.caps.end() && it->second.first == ctx.parent_minor) cap_gi = it->second.second, file = f;
    }
    if (file.empty()) continue;
    auto it = on_parent.find(h.pid);
    const MigProcess* p = it == on_parent.end() ? nullptr : it->second;
    const bool here = mine(p) || (!attributed(p) && cap_gi && m.gi && *cap_gi == *m.gi);
    const bool elsewhere = !here && (attributed(p) || cap_gi);
    const bool selected = ctx.selected->count(h.pid) > 0;
    util::Value hj = to_value(h);
    hj["selected"] = selected;
    if (!selected) hj["left_out"] = ctx.left_out(h);
    hj["instance"] = here ? "this" : elsewhere ? "another" : "unknown";
    if (selected && here) {
      sel_holders.push_back(fmt::format("PID {}", h.pid));
      if (!seen.count(h.pid)) v.holders.push_back(h);
    } else if (selected && !elsewhere) {
      unknown.push_back(fmt::format("PID {} ({}) holds {} of GPU {} but nvidia-smi names no MIG instance for it", h.pid,
                                    h.comm, file, g.index));
    }
    if (!elsewhere && (here || selected)) holders.push_back(std::move(hj));  // a sibling's: not this one's
  }
  std::sort(unknown.begin(), unknown.end());
  unknown.erase(std::unique(unknown.begin(), unknown.end()), unknown.end());

  if (!sel_procs.empty())
    v.busy.push_back(fmt::format("{} compute process(es) on this instance ({})", sel_procs.size(),
                                 fmt::join(sel_procs.begin(), sel_procs.begin() + std::min<size_t>(5, sel_procs.size()), ", ")));
  if (!sel_holders.empty())
    v.busy.push_back(fmt::format("{} process(es) of this instance hold the GPU's device file ({})", sel_holders.size(),
                                 fmt::join(sel_holders, ", ")));
  util::Value ev = util::Value::table({{"index", g.index}, {"uuid", m.uuid}, {"selected", true}});
  ev["name"] = fmt::format("{} of GPU {} ({})", m.profile, g.index, g.name);
  ev["memory_used_mib"] = mib(m.memory_used);
  ev["memory_total_mib"] = mib(m.memory_total);
  ev["utilization_pct"] = util::Value();  // nvidia-smi gives none per instance
  util::Value mig = util::Value::table({{"parent_uuid", m.parent_uuid}, {"device", m.device}, {"profile", m.profile}});
  mig["gpu_instance_id"] = mib(m.gi);
  mig["compute_instance_id"] = mib(m.ci);
  ev["mig"] = std::move(mig);
  if (!m.gi) {
    unknown.insert(unknown.begin(), "nvidia-smi -q -x gives no GPU instance id for it");
  } else if (!m.memory_used) {
    unknown.push_back("nvidia-smi -q -x gives no memory used for it");
  } else {
    const long long unexplained = *m.memory_used - left_out_mib;
    ev["memory_unexplained_mib"] = std::max(0LL, unexplained);
    if (unexplained > ctx.max_memory_used_mib)
      v.busy.push_back(fmt::format("{} MiB used{}, above max_memory_used {} MiB", *m.memory_used,
                                   sel_procs.empty() ? " with no compute process of it listed" : "",
                                   ctx.max_memory_used_mib));
  }
  if (!unknown.empty())
    v.unknown = fmt::format("MIG {}: {}", m.uuid, fmt::format("{}", fmt::join(unknown, "; ")));
  ev["processes"] = std::move(procs);
  ev["holders"] = std::move(holders);
  ev["disagreements"] = util::Value::array();
  util::Value reasons = util::Value::array();
  for (const auto& b : v.busy) reasons.push_back(b);
  ev["reasons"] = std::move(reasons);
  ev["idle"] = v.busy.empty() && v.unknown.empty();
  v.evidence = std::move(ev);
  return v;
}

}  // namespace ratchet::steps
