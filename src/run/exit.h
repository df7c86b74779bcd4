#pragma once
// Process exit codes (README.md, "Exit codes") and how a run's hosts make one.
// When several apply, the first of 130, 4, 1, 3 wins.
#include <string>
#include <vector>

#include "engine/status.h"

namespace ratchet::run {

inline constexpr int kExitOk = 0;           ///< every step ok/changed/escalated
inline constexpr int kExitFailed = 1;       ///< a step failed
inline constexpr int kExitUsage = 2;        ///< usage or playbook error; nothing connected
inline constexpr int kExitUnreachable = 3;  ///< a host unreachable or auth failed
inline constexpr int kExitHostKey = 4;      ///< host key verification failed
inline constexpr int kExitTimedOut = 124;   ///< exec: its --timeout ended the command (as timeout(1))
inline constexpr int kExitInterrupted = 130;

/// The exit code for hosts that ended so: 130, 4, 1, 3 in that order of
/// precedence, else 0 (README.md, "Exit codes").
int exit_code_for(const std::vector<engine::HostStatus>& statuses, bool interrupted);
/// The run_end / --json status for an exit code: "ok", "failed", "unreachable", "host_key", "interrupted".
std::string exit_name(int code);

}  // namespace ratchet::run
