#pragma once
// Internal to verify `gpus_idle` (steps/gpus.h), in three steps:
//   read       ratchet_gpus_idle's lines into the two views (gpus_view.cc)
//   associate  one GPU's two views side by side (gpus_associate.cc)
//   judge      which GPUs were asked for, and the verdict (gpus.cc)
// The two views:
//   the driver's   nvidia-smi --query-gpu / --query-compute-apps (CSV, noheader, nounits)
//   the kernel's   the holders of the device files (/dev/nvidiaN is the GPU of minor N;
//                  nvidiactl, nvidia-uvm*, nvidia-caps/ are shared by every GPU)
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "steps/action.h"
#include "steps/gpus.h"
#include "steps/holders.h"
#include "util/value.h"

namespace ratchet::steps {

/// What ratchet_gpus_idle printed, by tag (docs/host-library.md).
struct GpuScan {
  std::vector<SmiGpu> gpus;
  std::vector<SmiApp> apps;
  std::map<std::string, long long> minors;  ///< lower-case uuid -> device minor
  std::vector<Holder> holders;              ///< every holder, filters not applied
  std::map<long long, Holder> listed;       ///< driver-listed PIDs that are processes here
  std::set<long long> selected;             ///< PIDs the filters keep
  std::map<long long, std::vector<long long>> nspid;     ///< PID -> its NSpid (more than one: a container)
  std::vector<std::string> mig_list, mig_xml, mig_caps;  ///< nvidia-smi -L, -q -x, capabilities (--mig)
  std::string bad;  ///< why a line could not be read ("" = every line was)
};

/// Reads ratchet_gpus_idle's stdout into its views. A line of another tag, or
/// without a tab, is skipped; the first gpu or app line that cannot be read
/// sets `bad`.
GpuScan read_gpu_scan(const std::string& out);

/// 1 to 18 decimal digits as a number; nullopt for anything else.
std::optional<long long> read_number(std::string_view s);

/// `s` with ASCII letters in lower case (UUIDs compare so).
std::string ascii_lower(std::string s);

/// The last component of a path ("/usr/bin/python3" -> "python3").
std::string path_base_name(const std::string& p);

/// The minor number of a per-GPU device file (".../nvidia3" -> 3), or nullopt
/// for a shared one (nvidiactl, nvidia-uvm, nvidia-caps/...).
std::optional<long long> gpu_minor(const std::string& path);

/// Each GPU's device minor: the kernel driver's (the scan's `minor` lines),
/// else its index (docs/playbook.md).
struct GpuMinors {
  std::vector<long long> of;           ///< by index into GpuScan::gpus
  std::map<long long, size_t> gpu_at;  ///< minor -> index into GpuScan::gpus
};
GpuMinors gpu_minors(const GpuScan& s);

/// One GPU's two views side by side.
struct GpuViews {
  /// Its part of Verdict::gpus: index, uuid, name, minor, minor_from, memory,
  /// utilization, `processes` (the driver's) and `holders` (the kernel's). The
  /// judge adds selected, memory_unexplained_mib, disagreements, idle, reasons.
  util::Value evidence;
  std::vector<std::string> selected_procs;    ///< "PID 561 (python3)": listed by the driver, kept by the filters
  std::vector<std::string> selected_holders;  ///< "PID 561": holders of its device file, kept by the filters
  std::vector<std::string> disagree;          ///< where the views disagree, sorted, each once
  std::vector<Holder> holders;                ///< the kept processes on it, in the verdict's order
  long long left_out_mib = 0;                 ///< memory the driver lists for processes the filters leave out
  bool any_process = false;                   ///< the driver lists a compute process on it
};

/// Puts GPU `i` of `s` (device minor `minor`) beside the processes the driver
/// lists on it and the holders of its own device file; `e`'s filters say why a
/// process is left out.
GpuViews associate_gpu(const GpuScan& s, size_t i, long long minor, const Expect::Gpus& e);

/// Why the filters leave a visible process out (evidence only: the host
/// library's filter decided; this says which rule, as far as it can tell).
std::string why_left_out(const Holder& proc, const Expect::Gpus& expect);

}  // namespace ratchet::steps
