#pragma once
// verify `gpus_idle` in MIG mode: a `MIG-` UUID in `gpus` is one instance of a
// partitioned GPU, judged on its own (its processes, its memory). What
// nvidia-smi prints for it (docs/playbook.md, "MIG"):
//   nvidia-smi -L     "GPU 0: NVIDIA H100 PCIe (UUID: GPU-...)" then, per instance,
//                     "  MIG 1g.10gb     Device  0: (UUID: MIG-...)"
//   nvidia-smi -q -x  per <gpu>: <mig_devices><mig_device> with <index> (the
//                     "Device N" of -L), <gpu_instance_id>, <compute_instance_id>
//                     and <fb_memory_usage><used>/<total>; <uuid>; <processes>
//                     <process_info> with <gpu_instance_id>, <compute_instance_id>,
//                     <pid>, <process_name>, <used_memory> ("N/A" ids: no instance)
// --query-compute-apps lists MIG processes under the parent GPU's UUID.
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "steps/gpus.h"
#include "steps/holders.h"
#include "util/value.h"

namespace ratchet::steps {

/// One MIG instance (a MIG device): -L's line joined with -q -x's <mig_device>.
struct MigInstance {
  std::string uuid;         ///< "MIG-..."
  std::string parent_uuid;  ///< "GPU-..."
  std::string profile;      ///< "MIG 1g.10gb"
  long long device = 0;     ///< -L's "Device N", -q -x's <index>
  std::optional<long long> gi, ci;                   ///< GPU and compute instance ids; nullopt: N/A
  std::optional<long long> memory_used, memory_total;  ///< MiB; nullopt: N/A or not printed
};

/// One <process_info> of -q -x.
struct MigProcess {
  std::string parent_uuid;
  long long pid = 0;
  std::string name;
  std::optional<long long> gi, ci;  ///< nullopt: "N/A" (no instance it can name)
  std::optional<long long> used_memory;
};

struct MigScan {
  std::vector<MigInstance> instances;
  std::vector<MigProcess> processes;
  /// /dev/nvidia-caps/nvidia-capM's minor M -> {GPU minor N, GPU instance id G},
  /// from /proc/driver/nvidia/capabilities/gpuN/mig/giG[/ciC]/access.
  std::map<long long, std::pair<long long, long long>> caps;
};

/// Reads the lines of `nvidia-smi -L` and of `nvidia-smi -q -x` (one element
/// a line, as nvidia-smi prints it), and the capability lines ("PATH<TAB>MINOR"
/// of /proc/driver/nvidia/capabilities/gpuN/mig/giG[/ciC]/access). A MIG line
/// of -L that cannot be read sets *err; an instance -q -x does not describe
/// keeps N/A ids and memory; a capability line of another shape is skipped.
MigScan parse_mig(const std::vector<std::string>& list, const std::vector<std::string>& xml,
                  const std::vector<std::string>& caps, std::string* err);

/// The instance `uuid` names (any case) and its parent's index in `gpus`;
/// nullopt with *err ("nvidia-smi -L lists no MIG instance ...") when there is none.
std::optional<std::pair<MigInstance, size_t>> find_mig(const MigScan& scan, const std::vector<SmiGpu>& gpus,
                                                       const std::string& uuid, std::string* err);

/// What judge_gpus read of the parent GPU, for judging one of its instances.
struct MigContext {
  const SmiGpu* parent = nullptr;
  const std::vector<SmiApp>* apps = nullptr;              ///< every compute app the driver lists
  const std::vector<Holder>* holders = nullptr;           ///< holders of any device file
  const std::map<long long, Holder>* listed = nullptr;    ///< driver-listed PIDs that are processes here
  const std::set<long long>* selected = nullptr;          ///< PIDs the filters keep
  std::function<bool(const std::string&)> parent_file;    ///< true: a device file of the parent GPU
  long long parent_minor = 0;                             ///< the parent's device minor (capabilities' gpuN)
  std::function<std::string(const Holder&)> left_out;     ///< why the filters leave a process out
  long long max_memory_used_mib = 0;
};

/// The verdict on one instance: its evidence (the per-GPU shape, plus `mig`),
/// why it is busy, why it could not be checked ("" = it could), and the
/// selected processes on it.
struct MigVerdict {
  util::Value evidence;
  std::vector<std::string> busy;
  std::string unknown;
  std::vector<Holder> holders;
};

/// Judges instance `m` alone: the processes the driver attributes to its GPU
/// instance, and its own memory; a process of a sibling instance does not
/// count; a holder of an instance's /dev/nvidia-caps/nvidia-cap* file is that
/// instance's; a process on the parent that the driver attributes to no
/// instance, and a holder of the parent's device file that neither the driver
/// nor a capability file places, make it unknown ("MIG ...: ...").
MigVerdict judge_mig(const MigInstance& m, const MigScan& scan, const MigContext& ctx);

}  // namespace ratchet::steps
