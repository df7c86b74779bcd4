#pragma once
// Who runs this process, here.
#include <string>

namespace ratchet::util {

/// "user@hostname" of whoever runs ratchet here (a plan's made.by, the lock's
/// holder, run_start's run_by); "unknown" for either part not found.
std::string who_here();

}  // namespace ratchet::util
