// verify `gpus_idle`, step two: each GPU's two views side by side
// (steps/gpus_view.h). A compute process the driver lists is matched with the
// holders of that GPU's own device file, by PID; each one that only one view
// shows is a disagreement, kept as evidence.
#include <fmt/format.h>

#include <algorithm>

#include "steps/gpus_view.h"

namespace ratchet::steps {

namespace {

util::Value mib_or_null(const std::optional<long long>& n) { return n ? util::Value(*n) : util::Value(); }

std::string pid_namespace_note(const GpuScan& s, long long pid) {
  auto it = s.nspid.find(pid);
  if (it == s.nspid.end() || it->second.size() < 2) return "";
  return fmt::format("PID {} is in another PID namespace (a container: PID {} there)", pid, it->second.back());
}

// The kernel's view of one GPU: PID -> the device file of minor `minor` it holds.
std::map<long long, std::string> held_files(const GpuScan& s, long long minor) {
  std::map<long long, std::string> file_of;
  for (const auto& h : s.holders) {
    for (const auto& fp : h.files) {
      auto m = gpu_minor(fp);
      if (m && *m == minor) {
        file_of[h.pid] = fp;
        break;
      }
    }
  }
  return file_of;
}

// The driver's view of GPU `g`: each compute process it lists there (the
// evidence's `processes`), with what the kernel says of it. Fills out's
// selected_procs, disagree, holders, left_out_mib and any_process, and the
// PIDs listed on it.
util::Value driver_view(const GpuScan& s, const SmiGpu& g, const std::map<long long, std::string>& file_of,
                        const Expect::Gpus& e, GpuViews* out, std::set<long long>* listed_here) {
  util::Value procs = util::Value::array();
  for (const auto& a : s.apps) {
    if (ascii_lower(a.gpu_uuid) != ascii_lower(g.uuid)) continue;
    out->any_process = true;
    listed_here->insert(a.pid);
    util::Value p = util::Value::table({{"pid", a.pid}, {"process_name", a.process_name}});
    p["used_memory_mib"] = mib_or_null(a.used_memory);
    auto vis = s.listed.find(a.pid);
    std::string label = fmt::format("PID {} ({})", a.pid, path_base_name(a.process_name));
    bool selected;
    if (vis == s.listed.end()) {
      // Not a process here: whose it is cannot be told, so it is never left out.
      p["visible"] = false;
      selected = true;
      out->disagree.push_back(fmt::format("{} is listed by the driver on GPU {} but is no process here "
                                          "(another PID namespace, or it exited)", label, g.index));
    } else {
      const Holder& pl = vis->second;
      p["visible"] = true;
      p["user"] = pl.user;
      p["cmdline"] = pl.cmdline;
      p["started"] = pl.started;
      selected = s.selected.count(a.pid) > 0;
      if (!selected) p["left_out"] = why_left_out(pl, e);
      if (!file_of.count(a.pid))
        out->disagree.push_back(fmt::format("{} is listed by the driver on GPU {} but holds none of its device files",
                                            label, g.index));
    }
    p["holds_device_file"] = file_of.count(a.pid) > 0;
    p["selected"] = selected;
    if (auto ns = pid_namespace_note(s, a.pid); !ns.empty()) {
      p["pid_namespace"] = ns;
      out->disagree.push_back(ns);
    }
    if (!selected && a.used_memory) out->left_out_mib += *a.used_memory;
    if (selected) {
      out->selected_procs.push_back(label);
      // A holder of the device file is added by kernel_view, with its files.
      if (!file_of.count(a.pid))
        out->holders.push_back(vis != s.listed.end()
                                   ? vis->second
                                   : Holder{.pid = a.pid, .comm = a.process_name, .cmdline = a.process_name});
    }
    procs.push_back(std::move(p));
  }
  return procs;
}

// The kernel's view of GPU `g`: each holder of its device file (the
// evidence's `holders`), with what the driver says of it. Fills out's
// selected_holders, disagree and holders.
util::Value kernel_view(const GpuScan& s, const SmiGpu& g, const std::map<long long, std::string>& file_of,
                        const std::set<long long>& listed_here, const Expect::Gpus& e, GpuViews* out) {
  util::Value holders = util::Value::array();
  for (const auto& h : s.holders) {
    const long long pid = h.pid;
    auto file = file_of.find(pid);
    if (file == file_of.end()) continue;
    util::Value hj = to_value(h);
    bool selected = s.selected.count(pid) > 0;
    hj["selected"] = selected;
    hj["listed_by_driver"] = listed_here.count(pid) > 0;
    if (!selected) hj["left_out"] = why_left_out(h, e);
    if (!listed_here.count(pid))
      out->disagree.push_back(
          fmt::format("PID {} ({}) holds {} but the driver lists no compute process for it on GPU {}", pid, h.comm,
                      file->second, g.index));
    if (auto ns = pid_namespace_note(s, pid); !ns.empty()) {
      hj["pid_namespace"] = ns;
      if (!listed_here.count(pid)) out->disagree.push_back(ns);
    }
    if (selected) {
      out->selected_holders.push_back(fmt::format("PID {}", pid));
      out->holders.push_back(h);
    }
    holders.push_back(std::move(hj));
  }
  return holders;
}

}  // namespace

GpuMinors gpu_minors(const GpuScan& s) {
  GpuMinors m;
  m.of.resize(s.gpus.size());
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    auto it = s.minors.find(ascii_lower(s.gpus[i].uuid));
    m.of[i] = it != s.minors.end() ? it->second : s.gpus[i].index;
    m.gpu_at[m.of[i]] = i;
  }
  return m;
}

std::string why_left_out(const Holder& proc, const Expect::Gpus& expect) {
  const std::string& user = proc.user;
  if (!expect.user.empty()) {
    bool in = false;
    std::string names;
    for (const auto& n : expect.user) {
      in |= n == user;
      names += (names.empty() ? "" : ", ") + n;
    }
    if (!in) return fmt::format("user {}, not {}", user, names);
  }
  if (!expect.exclude.empty()) {
    const std::string& comm = proc.comm;
    std::string a0 = path_base_name(proc.cmdline.substr(0, proc.cmdline.find(' ')));
    for (const auto& x : expect.exclude) {
      if (x == comm || x.substr(0, 15) == comm || x == a0) return "excluded: " + x;
    }
  }
  return "never selected (PID 1, a kernel thread or ratchet's own session)";
}

GpuViews associate_gpu(const GpuScan& s, size_t i, long long minor, const Expect::Gpus& e) {
  const SmiGpu& g = s.gpus[i];
  GpuViews out;
  util::Value& ev = out.evidence;
  ev = util::Value::table({{"index", g.index}, {"uuid", g.uuid}, {"name", g.name}, {"minor", minor}});
  ev["minor_from"] = s.minors.count(ascii_lower(g.uuid)) ? "driver" : "index";
  ev["memory_used_mib"] = mib_or_null(g.memory_used);
  ev["memory_total_mib"] = mib_or_null(g.memory_total);
  ev["utilization_pct"] = mib_or_null(g.utilization);

  const std::map<long long, std::string> file_of = held_files(s, minor);
  std::set<long long> listed_here;
  ev["processes"] = driver_view(s, g, file_of, e, &out, &listed_here);
  ev["holders"] = kernel_view(s, g, file_of, listed_here, e, &out);
  std::sort(out.disagree.begin(), out.disagree.end());
  out.disagree.erase(std::unique(out.disagree.begin(), out.disagree.end()), out.disagree.end());
  return out;
}

}  // namespace ratchet::steps
