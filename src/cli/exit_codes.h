#pragma once
// Process exit codes (README.md, "Exit codes"). When several apply, the first of
// 130, 4, 1, 3 wins.

namespace ratchet::cli {

inline constexpr int kExitOk = 0;           ///< every step ok/changed/escalated
inline constexpr int kExitFailed = 1;       ///< a step failed
inline constexpr int kExitUsage = 2;        ///< usage or playbook error; nothing connected
inline constexpr int kExitUnreachable = 3;  ///< a host unreachable or auth failed
inline constexpr int kExitHostKey = 4;      ///< host key verification failed
inline constexpr int kExitTimedOut = 124;  ///< exec: its --timeout ended the command (as timeout(1))
inline constexpr int kExitInterrupted = 130;

}  // namespace ratchet::cli
