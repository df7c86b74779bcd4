#pragma once
// How a step and a host ended: the statuses the transcript, the summary and
// `--json` write (docs/transcript.md), as names.
#include <array>
#include <optional>
#include <string_view>

namespace ratchet::engine {

/// How one step ended on one host.
enum class StepStatus {
  ok,         ///< the check held at once: nothing was done
  changed,    ///< the step's own action made the check hold
  escalated,  ///< a rung made the check hold (StepOutcome::rung says which)
  failed,     ///< no rung made it hold, or the check could not look
  skipped,    ///< never ran: a false `when`, or the host stopped before it
};

/// How one host's run ended.
enum class HostStatus {
  ok,           ///< every step ran; none failed and stopped the host
  failed,       ///< a step failed and stopped the host
  unreachable,  ///< no session (DNS, refused, timeout, auth, ...)
  host_key,     ///< the host key did not match known_hosts, or was unknown
  interrupted,  ///< ^C or SIGTERM stopped the run
  skipped,      ///< never started: max_fail stopped the batches
};

inline constexpr std::array<StepStatus, 5> kStepStatuses = {StepStatus::ok, StepStatus::changed, StepStatus::escalated,
                                                          StepStatus::failed, StepStatus::skipped};
inline constexpr std::array<HostStatus, 6> kHostStatuses = {HostStatus::ok,       HostStatus::failed,
                                                          HostStatus::unreachable, HostStatus::host_key,
                                                          HostStatus::interrupted, HostStatus::skipped};

/// The status as written: "ok", "changed", "escalated", "failed", "skipped".
std::string_view name(StepStatus s);
/// "ok", "failed", "unreachable", "host_key", "interrupted", "skipped".
std::string_view name(HostStatus s);

/// The status `s` names exactly, or nullopt.
std::optional<StepStatus> parse_step_status(std::string_view s);
std::optional<HostStatus> parse_host_status(std::string_view s);

/// Whether a host that ended so counts against max_fail (failed, unreachable, host_key).
bool counts_as_failed(HostStatus s);

}  // namespace ratchet::engine
