#include "run/exit.h"

#include <map>

namespace ratchet::run {

int exit_code_for(const std::vector<engine::HostStatus>& statuses, bool interrupted) {
  bool key = false, failed = false, unreachable = false;
  for (auto st : statuses) {
    key |= st == engine::HostStatus::host_key;
    failed |= st == engine::HostStatus::failed;
    unreachable |= st == engine::HostStatus::unreachable;
    interrupted |= st == engine::HostStatus::interrupted;
  }
  if (interrupted) return kExitInterrupted;
  if (key) return kExitHostKey;
  if (failed) return kExitFailed;
  if (unreachable) return kExitUnreachable;
  return kExitOk;
}

std::string exit_name(int code) {
  static const std::map<int, std::string> names_of = {{kExitOk, "ok"},
                                                      {kExitFailed, "failed"},
                                                      {kExitUnreachable, "unreachable"},
                                                      {kExitHostKey, "host_key"},
                                                      {kExitInterrupted, "interrupted"}};
  auto it = names_of.find(code);
  return it == names_of.end() ? "failed" : it->second;
}

}  // namespace ratchet::run
