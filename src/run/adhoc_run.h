#pragma once
// `exec`'s run: one ad hoc command on each host, at most `forks` at once,
// under the run's cancel token, with the lock, the audit line and (with a
// transcript) run_start and run_end.
#include <functional>
#include <string>
#include <vector>

#include "engine/adhoc.h"
#include "playbook/model.h"
#include "run/request.h"

namespace ratchet::run {

struct AdhocRequest {
  std::vector<playbook::Host> hosts;
  bool single = false;        ///< one host named: its exit status is the run's
  std::string command;        ///< the words as given, joined with spaces
  util::Millis timeout{60'000};
  std::string timeout_text = "60s";  ///< --timeout as given
  Settings settings;          ///< settings.transcript: "" records nothing
  /// Each host's result as it ends, on that host's thread (calls may overlap).
  std::function<void(const engine::AdhocResult&)> host_done = [](const engine::AdhocResult&) {};
};

struct AdhocRun {
  bool ran = false;     ///< false: run_start could not be written (said on settings.diag; code 1)
  int code = 0;         ///< one host: as adhoc_exit(); several: as a run (0, 1, 3, 4, 130)
  std::string status;   ///< run_end's: one host: its status; several: exit_name(code)
  std::string run_id;
  std::vector<engine::AdhocResult> results;  ///< in the hosts' order
};

AdhocRun run_adhoc(const AdhocRequest& r);

/// One host's exit code as `exec` on it alone returns it: the command's exit
/// status, 128 + N for signal N, 124 its timeout, 3 no session, 4 a host key, 1 no lock, 130 ^C.
int adhoc_exit(const engine::AdhocResult& a);

}  // namespace ratchet::run
