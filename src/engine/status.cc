#include "engine/status.h"

namespace ratchet::engine {

std::string_view name(StepStatus s) {
  switch (s) {
    case StepStatus::ok: return "ok";
    case StepStatus::changed: return "changed";
    case StepStatus::escalated: return "escalated";
    case StepStatus::failed: return "failed";
    case StepStatus::skipped: return "skipped";
  }
  return "";
}

std::string_view name(HostStatus s) {
  switch (s) {
    case HostStatus::ok: return "ok";
    case HostStatus::failed: return "failed";
    case HostStatus::unreachable: return "unreachable";
    case HostStatus::host_key: return "host_key";
    case HostStatus::interrupted: return "interrupted";
    case HostStatus::skipped: return "skipped";
  }
  return "";
}

std::optional<StepStatus> parse_step_status(std::string_view s) {
  for (StepStatus x : kStepStatuses)
    if (name(x) == s) return x;
  return std::nullopt;
}

std::optional<HostStatus> parse_host_status(std::string_view s) {
  for (HostStatus x : kHostStatuses)
    if (name(x) == s) return x;
  return std::nullopt;
}

bool counts_as_failed(HostStatus s) {
  return s == HostStatus::failed || s == HostStatus::unreachable || s == HostStatus::host_key;
}

}  // namespace ratchet::engine
