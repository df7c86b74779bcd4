// verify `gpus_idle`: the command, and step three of reading its output
// (steps/gpus_view.h): which GPUs and MIG instances `gpus` names, each one's
// views judged, and the verdict. A selected GPU is idle when the driver lists
// no compute process of the selection on it, no process of the selection
// holds its device file, and the memory used, less what processes the filters
// leave out use, is at most max_memory_used. What nobody could see is never idle.
#include "steps/gpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "steps/gpus_view.h"
#include "steps/mig.h"
#include "util/shell.h"

namespace ratchet::steps {

namespace {

std::string pid_list(const std::vector<std::string>& items) {
  std::string out;
  const size_t shown = 5;
  for (size_t i = 0; i < items.size() && i < shown; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > shown) out += fmt::format(" and {} more", items.size() - shown);
  return out;
}

util::Value strings(const std::vector<std::string>& xs) {
  util::Value out = util::Value::array();
  for (const auto& x : xs) out.push_back(x);
  return out;
}

Verdict cannot(std::string why) {
  Verdict v;
  v.unknown = true;
  v.reason = why.rfind("could not check: ", 0) == 0 ? why : "could not check: " + why;
  return v;
}

// The line of stderr that says why the library could not look, else its first.
std::string library_why(const transport::ExecResult& r) {
  std::istringstream in(r.err.data);
  std::string first;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("ratchet: could not check: ", 0) == 0) return short_line(line.substr(9));
    if (first.empty() && !line.empty()) first = line;
  }
  if (first.rfind("ratchet: ", 0) == 0) first = first.substr(9);
  return short_line(first.empty() ? fmt::format("ratchet_gpus_idle exited {}", r.exit_code) : first);
}

// What `gpus` names in the scan: every GPU, or GPUs by index or UUID and MIG
// instances by UUID.
struct GpuSelection {
  bool all = false;
  std::set<size_t> chosen;                          // indexes into GpuScan::gpus
  std::vector<std::pair<MigInstance, size_t>> mig;  // an instance and its parent's index into GpuScan::gpus
  MigScan mig_scan;
};

// Fills *out from e.gpus; returns why it cannot ("" = it can): a MIG listing
// that cannot be read, or a GPU or instance nvidia-smi does not list.
std::string select_gpus(const GpuScan& s, const Expect::Gpus& e, GpuSelection* out) {
  out->all = e.gpus == std::vector<std::string>{"all"};
  if (!s.mig_list.empty() || !s.mig_xml.empty()) {
    std::string why;
    out->mig_scan = parse_mig(s.mig_list, s.mig_xml, s.mig_caps, &why);
    if (!why.empty()) return why;
  }
  if (out->all) {
    for (size_t i = 0; i < s.gpus.size(); ++i) out->chosen.insert(i);
    return "";
  }
  for (const auto& w : e.gpus) {
    if (is_mig_name(w)) {
      std::string why;
      auto found = find_mig(out->mig_scan, s.gpus, w, &why);
      if (!found) return why;
      out->mig.push_back(*found);
      continue;
    }
    auto idx = read_number(w);
    bool found = false;
    for (size_t i = 0; i < s.gpus.size(); ++i)
      if (idx ? s.gpus[i].index == *idx : ascii_lower(s.gpus[i].uuid) == ascii_lower(w))
        out->chosen.insert(i), found = true;
    if (!found) {
      std::string have;
      for (const auto& g : s.gpus) have += (have.empty() ? "" : ", ") + std::to_string(g.index);
      return fmt::format("nvidia-smi lists no GPU {} (it lists {})", w, have);
    }
  }
  return "";
}

// The verdict as it is judged: why the selection is busy, where the views
// disagree, the first thing about it nobody could see, each holder once.
struct Judging {
  Verdict v;
  std::vector<std::string> reasons, notes;
  std::string unknown_why;  // "" = everything judged could be seen
  std::set<long long> in_holders;
  void add_holder(const Holder& h) {
    if (in_holders.insert(h.pid).second) v.holders.push_back(h);
  }
  void unknown(std::string why) {
    if (unknown_why.empty()) unknown_why = std::move(why);
  }
};

// Memory used that processes the filters leave out do not explain, against
// max_memory_used: why it keeps the GPU busy, or nullopt. Sets the evidence's
// memory_unexplained_mib. g.memory_used is known.
std::optional<std::string> memory_reason(const SmiGpu& g, const GpuViews& views, long long max_mib, util::Value* ev) {
  long long unexplained = *g.memory_used - views.left_out_mib;
  (*ev)["memory_unexplained_mib"] = std::max(0LL, unexplained);
  if (unexplained <= max_mib) return std::nullopt;
  if (!views.any_process)
    return fmt::format("{} MiB used with no compute process listed, above max_memory_used {} MiB "
                       "(a leaked context?)", *g.memory_used, max_mib);
  if (views.left_out_mib == 0)
    return fmt::format("{} MiB used, above max_memory_used {} MiB", *g.memory_used, max_mib);
  return fmt::format("{} MiB used, {} MiB of it not by processes the filters leave out, above "
                     "max_memory_used {} MiB", *g.memory_used, unexplained, max_mib);
}

// Judges GPU i of the scan: its evidence goes into the verdict; when it is
// selected, also why it is busy, its disagreements and its holders.
void judge_gpu(const GpuScan& s, size_t i, long long minor, bool selected, const Expect::Gpus& e, Judging* j) {
  const SmiGpu& g = s.gpus[i];
  GpuViews views = associate_gpu(s, i, minor, e);
  util::Value& ev = views.evidence;
  ev["selected"] = selected;
  std::vector<std::string> why;
  if (!views.selected_procs.empty())
    why.push_back(fmt::format("{} compute process(es) listed by the driver ({})", views.selected_procs.size(),
                              pid_list(views.selected_procs)));
  if (!views.selected_holders.empty())
    why.push_back(fmt::format("{} process(es) hold its device file ({})", views.selected_holders.size(),
                              pid_list(views.selected_holders)));
  if (!g.memory_used) {
    if (selected) j->unknown(fmt::format("GPU {}: nvidia-smi gives no memory.used", g.index));
  } else if (auto m = memory_reason(g, views, e.max_memory_used_mib, &ev)) {
    why.push_back(*m);
  }
  ev["disagreements"] = strings(views.disagree);
  ev["idle"] = why.empty() && g.memory_used.has_value();
  ev["reasons"] = strings(why);
  if (selected) {
    for (const auto& h : views.holders) j->add_holder(h);
    if (!why.empty()) j->reasons.push_back(fmt::format("GPU {}: {}", g.index, fmt::join(why, ", ")));
    for (const auto& d : views.disagree) j->notes.push_back(fmt::format("GPU {}: {}", g.index, d));
  }
  j->v.gpus.push_back(std::move(ev));
}

// Holders of the selection whose device files are no one GPU's (nvidiactl,
// nvidia-uvm, nvidia-caps/): they keep every GPU in use, so they count when
// every GPU is asked for.
void judge_shared_holders(const GpuScan& s, const GpuMinors& minors, Judging* j) {
  std::vector<std::string> shared;
  for (const auto& h : s.holders) {
    const long long pid = h.pid;
    if (!s.selected.count(pid)) continue;
    bool owns_gpu = false;
    std::string files;
    for (const auto& fp : h.files) {
      auto m = gpu_minor(fp);
      owns_gpu |= m && minors.gpu_at.count(*m);
      files += (files.empty() ? "" : " ") + path_base_name(fp);
    }
    if (owns_gpu) continue;
    shared.push_back(fmt::format("PID {}: {}", pid, files));
    j->add_holder(h);
  }
  if (!shared.empty())
    j->reasons.push_back(
        fmt::format("{} process(es) hold device files every GPU shares ({})", shared.size(), pid_list(shared)));
}

// One MIG instance asked for, judged on its own (steps/mig.h); `parent` is
// its GPU's index into the scan, of device minor `parent_minor`.
void judge_mig_instance(const GpuScan& s, const GpuSelection& sel, const MigInstance& m, size_t parent,
                        long long parent_minor, const Expect::Gpus& e, Judging* j) {
  MigContext mc;
  mc.parent = &s.gpus[parent];
  mc.apps = &s.apps;
  mc.holders = &s.holders;
  mc.listed = &s.listed;
  mc.selected = &s.selected;
  mc.parent_file = [parent_minor](const std::string& f) { return gpu_minor(f) == parent_minor; };
  mc.parent_minor = parent_minor;
  mc.left_out = [&e](const Holder& h) { return why_left_out(h, e); };
  mc.max_memory_used_mib = e.max_memory_used_mib;
  MigVerdict mv = judge_mig(m, sel.mig_scan, mc);
  if (!mv.busy.empty()) j->reasons.push_back(fmt::format("MIG {}: {}", m.uuid, fmt::join(mv.busy, ", ")));
  if (!mv.unknown.empty()) j->unknown(mv.unknown);
  for (const auto& h : mv.holders) j->add_holder(h);
  j->v.gpus.push_back(std::move(mv.evidence));
}

// The verdict: busy when anything selected is (with the disagreements, what
// could not be seen and a blind scan said beside it); else could not check
// when anything could not be seen; else idle, the disagreements as its note.
Verdict verdict(Judging j, bool blind, const transport::ExecResult& r) {
  Verdict& v = j.v;
  const std::string disagreement =
      j.notes.empty() ? "" : fmt::format("driver and kernel disagree: {}", fmt::join(j.notes, "; "));
  if (!j.reasons.empty()) {
    v.holds = false;
    v.reason = fmt::format("{}", fmt::join(j.reasons, "; "));
    if (!disagreement.empty()) v.reason += "; " + disagreement;
    if (!j.unknown_why.empty()) v.reason += "; and could not check: " + j.unknown_why;
    if (blind) v.reason += "; and " + library_why(r);
    return std::move(v);
  }
  if (!j.unknown_why.empty() || blind) {
    Verdict u = cannot(!j.unknown_why.empty() ? j.unknown_why : library_why(r));
    u.gpus = std::move(v.gpus);
    u.holders = std::move(v.holders);
    return u;
  }
  v.holds = true;
  v.reason = disagreement;
  return std::move(v);
}

}  // namespace

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
  if (r.exit_code != 0 && r.exit_code != 5) return cannot(library_why(r));
  const bool blind = r.exit_code == 5;
  const GpuScan s = read_gpu_scan(r.out.data);
  if (!s.bad.empty()) return cannot(s.bad);
  if (s.gpus.empty()) return cannot(blind ? library_why(r) : "nvidia-smi lists no GPU");

  const Expect::Gpus e = c.expect.gpus.value_or(Expect::Gpus{{"all"}, kDefaultMaxMemoryUsedMib, {}, {}});
  // With a MIG instance asked for, the library stops at the -L or -q -x call
  // that could not be read, before the holder scan: nothing else was seen.
  if (blind && s.mig_xml.empty() && std::any_of(e.gpus.begin(), e.gpus.end(), is_mig_name))
    return cannot(library_why(r));
  GpuSelection sel;
  if (std::string why = select_gpus(s, e, &sel); !why.empty()) return cannot(why);

  const GpuMinors minors = gpu_minors(s);
  Judging j;
  for (size_t i = 0; i < s.gpus.size(); ++i) judge_gpu(s, i, minors.of[i], sel.chosen.count(i) > 0, e, &j);
  if (sel.all) judge_shared_holders(s, minors, &j);
  for (const auto& [m, parent] : sel.mig) judge_mig_instance(s, sel, m, parent, minors.of[parent], e, &j);
  return verdict(std::move(j), blind, r);
}

}  // namespace ratchet::steps
