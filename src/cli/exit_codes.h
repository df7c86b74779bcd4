#pragma once
// Process exit codes (README.md, "Exit codes"): run/exit.h's, by the names cli/ uses.
#include "run/exit.h"

namespace ratchet::cli {

using run::kExitFailed;
using run::kExitHostKey;
using run::kExitInterrupted;
using run::kExitOk;
using run::kExitTimedOut;
using run::kExitUnreachable;
using run::kExitUsage;

}  // namespace ratchet::cli
