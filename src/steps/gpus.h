#pragma once
// verify `gpus_idle`: the driver's view of each GPU (nvidia-smi) beside the
// kernel's (who holds its device files, ratchet's own /proc scan), judged per
// GPU. The host library prints both (ratchet_gpus_idle, docs/host-library.md);
// this module reads them (gpus_view.cc), puts each GPU's two side by side and
// finds where they disagree (gpus_associate.cc), and gives the verdict (gpus.cc;
// the steps: gpus_view.h).
#include <optional>
#include <string>
#include <string_view>

#include "steps/action.h"
#include "steps/kinds.h"

namespace ratchet::steps {

/// Default of `max_memory_used` (MiB): memory a GPU may show used with no
/// process of the selection on it (the driver's own reservation).
inline constexpr long long kDefaultMaxMemoryUsedMib = 512;

/// One line of `nvidia-smi --query-gpu=index,uuid,name,memory.used,memory.total,
/// utilization.gpu --format=csv,noheader,nounits`, e.g.
/// "0, GPU-5f1e0b6c-2d0e-4b7e-9d42-1c1b3d7b9a10, NVIDIA H200, 0, 143771, 0".
struct SmiGpu {
  long long index = 0;
  std::string uuid;
  std::string name;
  std::optional<long long> memory_used;   ///< MiB; nullopt: "[N/A]"
  std::optional<long long> memory_total;  ///< MiB
  std::optional<long long> utilization;   ///< percent
};

/// One line of `nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory
/// --format=csv,noheader,nounits`, e.g. "GPU-5f1e..., 561, /usr/bin/python3, 866".
struct SmiApp {
  std::string gpu_uuid;
  long long pid = 0;
  std::string process_name;
  std::optional<long long> used_memory;  ///< MiB; nullopt: "[N/A]" (no permission, MIG)
};

/// True when `name` (an item of `gpus`) names a MIG instance: "MIG-..." (any case).
bool is_mig_name(const std::string& name);

/// Parses one --query-gpu line; nullopt with *err when it is not of that shape.
/// A name holding ", " is kept whole (the fields around it are fixed).
std::optional<SmiGpu> parse_smi_gpu(std::string_view line, std::string* err);

/// Parses one --query-compute-apps line; nullopt with *err when it is not of that shape.
std::optional<SmiApp> parse_smi_app(std::string_view line, std::string* err);

/// verify's `gpus_idle` check command (ratchet_gpus_idle) from its resolved keys:
/// gpus, max_memory_used, gpu_devices, nvidia_smi, smi_timeout, user, exclude,
/// missing_ok. Each nvidia-smi call is bounded on the host (ratchet_smi).
Command build_gpus_idle(const playbook::VerifyAction& a, const BuildContext& ctx);

/// Judges ratchet_gpus_idle's output (Judge::gpus): the verdict, the selected
/// processes as holders, and the per-GPU evidence in Verdict::gpus.
Verdict judge_gpus(const Command& c, const transport::ExecResult& r);

}  // namespace ratchet::steps
