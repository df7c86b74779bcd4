// verify `gpus_idle`: reading ratchet_gpus_idle's lines (docs/host-library.md)
// into per-GPU evidence and a verdict. The two views:
//   the driver's   nvidia-smi --query-gpu / --query-compute-apps (CSV, noheader, nounits)
//   the kernel's   the holders of the device files (/dev/nvidiaN is the GPU of minor N;
//                  nvidiactl, nvidia-uvm*, nvidia-caps/ are shared by every GPU)
// A selected GPU is idle when the driver lists no compute process of the
// selection on it, no process of the selection holds its device file, and the
// memory used, less what processes the filters leave out use, is at most
// max_memory_used. What nobody could see is never idle.
#include "steps/gpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "steps/holders.h"
#include "steps/mig.h"
#include "util/shell.h"

namespace ratchet::steps {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t b = 0;;) {
    size_t e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) return out;
    b = e + 1;
  }
}

std::optional<long long> number(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  long long n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

// "[N/A]", "N/A", "[Not Supported]", "[Unknown Error]": the driver has no value.
bool not_available(std::string_view s) {
  return s == "N/A" || (s.size() >= 2 && s.front() == '[' && s.back() == ']');
}

// A number, or nullopt for a value the driver does not have; false when neither.
bool value(std::string_view s, std::optional<long long>* out) {
  s = trim(s);
  if (not_available(s)) {
    *out = std::nullopt;
    return true;
  }
  *out = number(s);
  return out->has_value();
}

std::string base_name(const std::string& p) {
  auto i = p.find_last_of('/');
  return i == std::string::npos ? p : p.substr(i + 1);
}

// The minor number of a per-GPU device file (".../nvidia3" -> 3), or nullopt
// for a shared one (nvidiactl, nvidia-uvm, nvidia-caps/...).
std::optional<long long> gpu_minor(const std::string& path) {
  std::string b = base_name(path);
  if (b.size() <= 6 || b.compare(0, 6, "nvidia") != 0) return std::nullopt;
  return number(std::string_view(b).substr(6));
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string pid_list(const std::vector<std::string>& items) {
  std::string out;
  const size_t shown = 5;
  for (size_t i = 0; i < items.size() && i < shown; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > shown) out += fmt::format(" and {} more", items.size() - shown);
  return out;
}

// What ratchet_gpus_idle printed, by tag.
struct Scan {
  std::vector<SmiGpu> gpus;
  std::vector<SmiApp> apps;
  std::map<std::string, long long> minors;  // lower-case uuid -> device minor
  std::vector<Holder> holders;              // every holder, filters not applied
  std::map<long long, Holder> listed;       // driver-listed PIDs that are processes here
  std::set<long long> selected;
  std::map<long long, std::vector<long long>> nspid;
  std::vector<std::string> mig_list, mig_xml, mig_caps;  // nvidia-smi -L, -q -x, capabilities (--mig)
  std::string bad;  // why a line could not be read ("" = every line was)
};

Scan read_scan(const std::string& out) {
  Scan s;
  std::istringstream in(out);
  std::string holder_lines;
  for (std::string line; std::getline(in, line);) {
    auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    std::string tag = line.substr(0, tab);
    std::string_view rest = std::string_view(line).substr(tab + 1);
    std::string why;
    if (tag == "gpu") {
      if (auto g = parse_smi_gpu(rest, &why)) s.gpus.push_back(*g);
      else if (s.bad.empty()) s.bad = "nvidia-smi --query-gpu printed " + why;
    } else if (tag == "app") {
      if (trim(rest) == "No running processes found") continue;
      if (auto a = parse_smi_app(rest, &why)) s.apps.push_back(*a);
      else if (s.bad.empty()) s.bad = "nvidia-smi --query-compute-apps printed " + why;
    } else if (tag == "minor") {
      auto f = split(rest, '\t');
      if (f.size() == 2)
        if (auto m = number(trim(f[1]))) s.minors[lower(std::string(trim(f[0])))] = *m;
    } else if (tag == "holder" || tag == "node") {
      holder_lines += line + "\n";  // read as one, below: a node line belongs to its holder
    } else if (tag == "listed") {
      if (auto h = parse_process_line(rest)) s.listed[h->pid] = *h;
    } else if (tag == "migl") {
      s.mig_list.emplace_back(rest);
    } else if (tag == "migx") {
      s.mig_xml.emplace_back(rest);
    } else if (tag == "migcap") {
      s.mig_caps.emplace_back(rest);
    } else if (tag == "selected") {
      if (auto p = number(trim(rest))) s.selected.insert(*p);
    } else if (tag == "nspid") {
      auto f = split(rest, '\t');
      if (f.size() != 2) continue;
      auto p = number(trim(f[0]));
      if (!p) continue;
      std::vector<long long> ns;
      for (auto w : split(trim(f[1]), ' '))
        if (auto n = number(trim(w))) ns.push_back(*n);
      s.nspid[*p] = ns;
    }
  }
  s.holders = parse_process_lines(holder_lines, "holder");
  return s;
}

// Why the filters leave a visible process out (evidence only: the host
// library's filter decided; this says which rule, as far as it can tell).
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
    std::string a0 = base_name(proc.cmdline.substr(0, proc.cmdline.find(' ')));
    for (const auto& x : expect.exclude) {
      if (x == comm || x.substr(0, 15) == comm || x == a0) return "excluded: " + x;
    }
  }
  return "never selected (PID 1, a kernel thread or ratchet's own session)";
}

util::Value strings(const std::vector<std::string>& xs) {
  util::Value out = util::Value::array();
  for (const auto& x : xs) out.push_back(x);
  return out;
}

std::string pid_namespace_note(const Scan& s, long long pid) {
  auto it = s.nspid.find(pid);
  if (it == s.nspid.end() || it->second.size() < 2) return "";
  return fmt::format("PID {} is in another PID namespace (a container: PID {} there)", pid, it->second.back());
}

}  // namespace

bool is_mig_name(const std::string& name) { return lower(name.substr(0, 4)) == "mig-"; }

std::optional<SmiGpu> parse_smi_gpu(std::string_view line, std::string* err) {
  auto f = split(line, ',');
  auto bad = [&](const char* what) {
    *err = fmt::format("a line ratchet cannot read ({}): \"{}\"", what, short_line(std::string(trim(line))));
    return std::nullopt;
  };
  if (f.size() < 6) return bad("not index, uuid, name, memory.used, memory.total, utilization.gpu");
  SmiGpu g;
  auto idx = number(trim(f[0]));
  if (!idx) return bad("index is not a number");
  g.index = *idx;
  g.uuid = std::string(trim(f[1]));
  if (g.uuid.empty() || g.uuid.find(' ') != std::string::npos) return bad("no uuid");
  std::string name;
  for (size_t i = 2; i + 3 < f.size(); ++i) name += (i > 2 ? "," : "") + std::string(f[i]);
  g.name = std::string(trim(name));
  const size_t n = f.size();
  if (!value(f[n - 3], &g.memory_used)) return bad("memory.used is not a number");
  if (!value(f[n - 2], &g.memory_total)) return bad("memory.total is not a number");
  if (!value(f[n - 1], &g.utilization)) return bad("utilization.gpu is not a number");
  return g;
}

std::optional<SmiApp> parse_smi_app(std::string_view line, std::string* err) {
  auto f = split(line, ',');
  auto bad = [&](const char* what) {
    *err = fmt::format("a line ratchet cannot read ({}): \"{}\"", what, short_line(std::string(trim(line))));
    return std::nullopt;
  };
  if (f.size() < 4) return bad("not gpu_uuid, pid, process_name, used_memory");
  SmiApp a;
  a.gpu_uuid = std::string(trim(f[0]));
  if (a.gpu_uuid.empty()) return bad("no gpu_uuid");
  auto pid = number(trim(f[1]));
  if (!pid || *pid < 1) return bad("pid is not a number");
  a.pid = *pid;
  std::string name;
  for (size_t i = 2; i + 1 < f.size(); ++i) name += (i > 2 ? "," : "") + std::string(f[i]);
  a.process_name = std::string(trim(name));
  if (!value(f.back(), &a.used_memory)) return bad("used_memory is not a number");
  return a;
}

Command build_gpus_idle(const playbook::VerifyAction& a, const BuildContext& ctx) {
  Expect::Gpus g;
  g.gpus = a.gpus.or_else({"all"});
  g.max_memory_used_mib = a.max_memory_used.or_else(kDefaultMaxMemoryUsedMib);
  g.user = a.user.or_else({});
  g.exclude = a.exclude.or_else({});
  const std::string smi = a.nvidia_smi.or_else("nvidia-smi");
  std::string text = "ratchet_gpus_idle";
  if (smi != "nvidia-smi") text += " --smi " + util::shell_quote(smi);
  if (a.smi_timeout.given) text += fmt::format(" --smi-timeout {}", (*a.smi_timeout).count());
  // A MIG instance asked for: the library also prints nvidia-smi -L and -q -x.
  for (const auto& w : g.gpus)
    if (is_mig_name(w)) {
      text += " --mig";
      break;
    }
  text += filter_flags(a.user, a.exclude, a.missing_ok) + " -- " + util::shell_join(a.gpu_devices.or_else({"/dev/nvidia*"}));
  Expect e;
  e.gpus = std::move(g);
  return check_command(std::move(text), ctx.timeout, Judge::gpus, std::move(e));
}

Verdict judge_gpus(const Command& c, const transport::ExecResult& r) {
  auto cannot = [](std::string why) {
    Verdict v;
    v.unknown = true;
    v.reason = why.rfind("could not check: ", 0) == 0 ? why : "could not check: " + why;
    return v;
  };
  // The line of stderr that says why the library could not look, else its first.
  auto library_why = [&]() {
    std::istringstream in(r.err.data);
    std::string first;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("ratchet: could not check: ", 0) == 0) return short_line(line.substr(9));
      if (first.empty() && !line.empty()) first = line;
    }
    if (first.rfind("ratchet: ", 0) == 0) first = first.substr(9);
    return short_line(first.empty() ? fmt::format("ratchet_gpus_idle exited {}", r.exit_code) : first);
  };
  if (r.exit_code != 0 && r.exit_code != 5) return cannot(library_why());
  const bool blind = r.exit_code == 5;
  Scan s = read_scan(r.out.data);
  if (!s.bad.empty()) return cannot(s.bad);
  if (s.gpus.empty()) {
    if (blind) return cannot(library_why());
    return cannot("nvidia-smi lists no GPU");
  }

  const Expect::Gpus e = c.expect.gpus.value_or(Expect::Gpus{{"all"}, kDefaultMaxMemoryUsedMib, {}, {}});
  const long long max_mib = e.max_memory_used_mib;
  const bool all = e.gpus == std::vector<std::string>{"all"};
  std::set<size_t> chosen;  // indexes into s.gpus
  std::vector<std::pair<MigInstance, size_t>> chosen_mig;  // an instance and its parent's index into s.gpus
  MigScan mig;
  // With a MIG instance asked for, the library stops at the -L or -q -x call
  // that could not be read, before the holder scan: nothing else was seen.
  if (blind && s.mig_xml.empty() && std::any_of(e.gpus.begin(), e.gpus.end(), is_mig_name))
    return cannot(library_why());
  if (!s.mig_list.empty() || !s.mig_xml.empty()) {
    std::string why;
    mig = parse_mig(s.mig_list, s.mig_xml, s.mig_caps, &why);
    if (!why.empty()) return cannot(why);
  }
  if (all) {
    for (size_t i = 0; i < s.gpus.size(); ++i) chosen.insert(i);
  } else {
    for (const auto& w : e.gpus) {
      if (is_mig_name(w)) {
        std::string why;
        auto found = find_mig(mig, s.gpus, w, &why);
        if (!found) return cannot(why);
        chosen_mig.push_back(*found);
        continue;
      }
      auto idx = number(w);
      bool found = false;
      for (size_t i = 0; i < s.gpus.size(); ++i)
        if (idx ? s.gpus[i].index == *idx : lower(s.gpus[i].uuid) == lower(w)) chosen.insert(i), found = true;
      if (!found) {
        std::string have;
        for (const auto& g : s.gpus) have += (have.empty() ? "" : ", ") + std::to_string(g.index);
        return cannot(fmt::format("nvidia-smi lists no GPU {} (it lists {})", w, have));
      }
    }
  }

  // The GPU each holder's device files belong to, by minor (the kernel
  // driver's, else the index: docs/playbook.md).
  std::map<long long, size_t> by_minor;
  std::vector<long long> minor_of(s.gpus.size());
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    auto m = s.minors.find(lower(s.gpus[i].uuid));
    minor_of[i] = m != s.minors.end() ? m->second : s.gpus[i].index;
    by_minor[minor_of[i]] = i;
  }

  Verdict v;
  std::vector<std::string> reasons, notes;
  std::set<long long> in_holders;
  auto add_holder = [&](const Holder& h) {
    if (in_holders.insert(h.pid).second) v.holders.push_back(h);
  };
  auto mib_or_null = [](const std::optional<long long>& n) { return n ? util::Value(*n) : util::Value(); };
  bool unknown_memory = false;
  std::string unknown_why;

  for (size_t i = 0; i < s.gpus.size(); ++i) {
    const SmiGpu& g = s.gpus[i];
    const bool sel_gpu = chosen.count(i) > 0;
    util::Value ev = util::Value::table({{"index", g.index}, {"uuid", g.uuid}, {"name", g.name},
                                         {"minor", minor_of[i]}, {"selected", sel_gpu}});
    ev["minor_from"] = s.minors.count(lower(g.uuid)) ? "driver" : "index";
    ev["memory_used_mib"] = mib_or_null(g.memory_used);
    ev["memory_total_mib"] = mib_or_null(g.memory_total);
    ev["utilization_pct"] = mib_or_null(g.utilization);

    // The kernel's view: holders of this GPU's own device file.
    std::map<long long, std::string> file_of;  // pid -> the device file held
    util::Value holders = util::Value::array();
    for (const auto& h : s.holders) {
      for (const auto& fp : h.files) {
        auto m = gpu_minor(fp);
        if (m && *m == minor_of[i]) {
          file_of[h.pid] = fp;
          break;
        }
      }
    }
    // The driver's view.
    util::Value procs = util::Value::array();
    std::vector<std::string> sel_procs, disagree;
    long long left_out_mib = 0;
    bool any_proc = false;
    std::set<long long> listed_here;
    for (const auto& a : s.apps) {
      if (lower(a.gpu_uuid) != lower(g.uuid)) continue;
      any_proc = true;
      listed_here.insert(a.pid);
      util::Value p = util::Value::table({{"pid", a.pid}, {"process_name", a.process_name}});
      p["used_memory_mib"] = mib_or_null(a.used_memory);
      auto vis = s.listed.find(a.pid);
      std::string label = fmt::format("PID {} ({})", a.pid, base_name(a.process_name));
      bool selected;
      if (vis == s.listed.end()) {
        // Not a process here: whose it is cannot be told, so it is never left out.
        p["visible"] = false;
        selected = true;
        disagree.push_back(fmt::format("{} is listed by the driver on GPU {} but is no process here "
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
          disagree.push_back(fmt::format("{} is listed by the driver on GPU {} but holds none of its device files",
                                         label, g.index));
      }
      p["holds_device_file"] = file_of.count(a.pid) > 0;
      p["selected"] = selected;
      if (auto ns = pid_namespace_note(s, a.pid); !ns.empty()) {
        p["pid_namespace"] = ns;
        disagree.push_back(ns);
      }
      if (!selected && a.used_memory) left_out_mib += *a.used_memory;
      if (selected) {
        sel_procs.push_back(label);
        // A holder of the device file is added below, with its files.
        if (sel_gpu && !file_of.count(a.pid))
          add_holder(vis != s.listed.end() ? vis->second
                                           : Holder{.pid = a.pid, .comm = a.process_name, .cmdline = a.process_name});
      }
      procs.push_back(std::move(p));
    }
    std::vector<std::string> sel_holders;
    for (const auto& h : s.holders) {
      const long long pid = h.pid;
      if (!file_of.count(pid)) continue;
      util::Value hj = to_value(h);
      bool selected = s.selected.count(pid) > 0;
      hj["selected"] = selected;
      hj["listed_by_driver"] = listed_here.count(pid) > 0;
      if (!selected) hj["left_out"] = why_left_out(h, e);
      if (!listed_here.count(pid))
        disagree.push_back(fmt::format("PID {} ({}) holds {} but the driver lists no compute process for it on GPU {}",
                                       pid, h.comm, file_of[pid], g.index));
      if (auto ns = pid_namespace_note(s, pid); !ns.empty()) {
        hj["pid_namespace"] = ns;
        if (!listed_here.count(pid)) disagree.push_back(ns);
      }
      if (selected) {
        sel_holders.push_back(fmt::format("PID {}", pid));
        if (sel_gpu) add_holder(h);
      }
      holders.push_back(std::move(hj));
    }
    std::sort(disagree.begin(), disagree.end());
    disagree.erase(std::unique(disagree.begin(), disagree.end()), disagree.end());

    std::vector<std::string> why;
    if (!sel_procs.empty())
      why.push_back(fmt::format("{} compute process(es) listed by the driver ({})", sel_procs.size(), pid_list(sel_procs)));
    if (!sel_holders.empty())
      why.push_back(fmt::format("{} process(es) hold its device file ({})", sel_holders.size(), pid_list(sel_holders)));
    if (!g.memory_used) {
      if (sel_gpu && !unknown_memory) {
        unknown_memory = true;
        unknown_why = fmt::format("GPU {}: nvidia-smi gives no memory.used", g.index);
      }
    } else {
      long long unexplained = *g.memory_used - left_out_mib;
      ev["memory_unexplained_mib"] = std::max(0LL, unexplained);
      if (unexplained > max_mib) {
        if (!any_proc)
          why.push_back(fmt::format("{} MiB used with no compute process listed, above max_memory_used {} MiB "
                                    "(a leaked context?)", *g.memory_used, max_mib));
        else if (left_out_mib == 0)
          why.push_back(fmt::format("{} MiB used, above max_memory_used {} MiB", *g.memory_used, max_mib));
        else
          why.push_back(fmt::format("{} MiB used, {} MiB of it not by processes the filters leave out, above "
                                    "max_memory_used {} MiB", *g.memory_used, unexplained, max_mib));
      }
    }
    ev["processes"] = std::move(procs);
    ev["holders"] = std::move(holders);
    ev["disagreements"] = strings(disagree);
    ev["idle"] = why.empty() && g.memory_used.has_value();
    ev["reasons"] = strings(why);
    if (sel_gpu) {
      std::string joined;
      for (const auto& w : why) joined += (joined.empty() ? "" : ", ") + w;
      if (!why.empty()) reasons.push_back(fmt::format("GPU {}: {}", g.index, joined));
      for (const auto& d : disagree) notes.push_back(fmt::format("GPU {}: {}", g.index, d));
    }
    v.gpus.push_back(std::move(ev));
  }

  // Holders of the selection whose device files are no one GPU's (nvidiactl,
  // nvidia-uvm, nvidia-caps/): they keep every GPU in use, so they count when
  // every GPU is asked for.
  if (all) {
    std::vector<std::string> shared;
    for (const auto& h : s.holders) {
      const long long pid = h.pid;
      if (!s.selected.count(pid)) continue;
      bool owns_gpu = false;
      std::string files;
      for (const auto& fp : h.files) {
        auto m = gpu_minor(fp);
        owns_gpu |= m && by_minor.count(*m);
        files += (files.empty() ? "" : " ") + base_name(fp);
      }
      if (owns_gpu) continue;
      shared.push_back(fmt::format("PID {}: {}", pid, files));
      add_holder(h);
    }
    if (!shared.empty())
      reasons.push_back(fmt::format("{} process(es) hold device files every GPU shares ({})", shared.size(),
                                    pid_list(shared)));
  }

  // Each MIG instance asked for, on its own (steps/mig.h).
  for (const auto& [m, pi] : chosen_mig) {
    MigContext mc;
    mc.parent = &s.gpus[pi];
    mc.apps = &s.apps;
    mc.holders = &s.holders;
    mc.listed = &s.listed;
    mc.selected = &s.selected;
    const long long pm = minor_of[pi];
    mc.parent_file = [pm](const std::string& f) { return gpu_minor(f) == pm; };
    mc.parent_minor = pm;
    mc.left_out = [&e](const Holder& h) { return why_left_out(h, e); };
    mc.max_memory_used_mib = max_mib;
    MigVerdict mv = judge_mig(m, mig, mc);
    if (!mv.busy.empty()) reasons.push_back(fmt::format("MIG {}: {}", m.uuid, fmt::join(mv.busy, ", ")));
    if (!mv.unknown.empty() && !unknown_memory) {
      unknown_memory = true;
      unknown_why = mv.unknown;
    }
    for (const auto& h : mv.holders) add_holder(h);
    v.gpus.push_back(std::move(mv.evidence));
  }

  auto join = [](const std::vector<std::string>& xs) {
    std::string out;
    for (const auto& x : xs) out += (out.empty() ? "" : "; ") + x;
    return out;
  };
  std::string disagreement = notes.empty() ? "" : "driver and kernel disagree: " + join(notes);
  if (!reasons.empty()) {
    v.holds = false;
    v.reason = join(reasons);
    if (!disagreement.empty()) v.reason += "; " + disagreement;
    if (unknown_memory) v.reason += "; and could not check: " + unknown_why;
    if (blind) v.reason += "; and " + library_why();
    return v;
  }
  if (unknown_memory || blind) {
    Verdict u = cannot(unknown_memory ? unknown_why : library_why());
    u.gpus = std::move(v.gpus);
    u.holders = std::move(v.holders);
    return u;
  }
  v.holds = true;
  v.reason = disagreement;
  return v;
}

}  // namespace ratchet::steps
