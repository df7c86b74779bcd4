#pragma once
// Text of verify gpus_idle's per-GPU evidence (steps/gpus.h): a Markdown table
// for templates (`{{ steps.X.gpus }}`) and one line per GPU for `ratchet show`.
#include <string>
#include <vector>

#include "util/value.h"

namespace ratchet::util {

/// True when `v` is per-GPU evidence: a non-empty array of objects, each with
/// `index`, `uuid` and `processes`.
bool is_gpu_evidence(const Value& v);

/// The evidence as a Markdown table, one row per GPU (index and UUID, name,
/// memory used / total, utilization, the driver's compute processes, the
/// holders of its device file, the verdict), then one "- GPU N: ..." line per
/// disagreement between the driver and the kernel.
std::string gpu_table(const Value& gpus);

/// One line per GPU, for a terminal: "GPU 0 NVIDIA H200 (GPU-5f1e0b6c...): busy,
/// 2 process(es), 1732 / 143771 MiB, 0 %: ...".
std::vector<std::string> gpu_lines(const Value& gpus);

}  // namespace ratchet::util
