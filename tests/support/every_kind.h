#pragma once
// One step of each kind (run, service, kill, verify, write, copy, fetch), with
// the run's lock and audit line, for the real-host cases that ask "every kind
// behaves as on a plain host" (R06 noexec temp dirs, R27 a BusyBox-only host).
#include <map>
#include <string>
#include <vector>

namespace ratchet::testing {

/// The playbook's files: the steps work under `host_dir` (absolute, as the
/// host sees it, made and writable there before the run); this machine keeps
/// the playbook and the copy source in `local_dir`.
struct EveryKind {
  std::string host_dir;
  std::string local_dir;
  /// When set, the kill and verify steps count only this user's processes
  /// (`user = "..."`): a login that is not root, without become, cannot read
  /// other users' open files, and a scan that counts them fails closed.
  std::string scan_user = "";

  /// Writes local_dir/every-kind.toml (targets ["box"], lock in host_dir/lock,
  /// audit line to host_dir/audit.log) and local_dir/tree; returns the playbook's path.
  std::string playbook() const;
  /// The host path the kill step signals the holders of, and verify then finds free.
  std::string held() const { return host_dir + "/held"; }
  /// Step ids in order with the status each must end with; "" for the service
  /// step (an absent unit): whatever a plain host of the same make gives.
  static const std::vector<std::pair<std::string, std::string>>& expected();
};

/// step id -> step_end status, from a transcript file ("" for a step with no step_end).
std::map<std::string, std::string> step_statuses(const std::string& transcript);

/// step id -> step_end reason ("" when it has none).
std::map<std::string, std::string> step_reasons(const std::string& transcript);

/// The transcript's lines that hold `needle`, except the host_library event
/// (the library's own text names the errors it looks for).
std::vector<std::string> lines_with(const std::string& transcript, const std::string& needle);

}  // namespace ratchet::testing
