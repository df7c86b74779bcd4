#pragma once
// Runs a playbook's steps on one host over one session, in order.
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/progress.h"
#include "engine/ratchet_loop.h"
#include "playbook/model.h"
#include "transcript/writer.h"
#include "transport/transport.h"

namespace ratchet::engine {

/// Everything one host's run needs.
struct HostJob {
  const playbook::Playbook* pb = nullptr;
  playbook::Host host;
  transport::Endpoint endpoint;
  nlohmann::json scope;  ///< host_scope(...) with run info; steps.* is filled as steps end
};

/// How one host's run ended.
struct HostReport {
  std::string host;
  /// ok | failed | unreachable | host_key | interrupted
  std::string status;
  std::map<std::string, int> counts;  ///< ok, changed, escalated, failed, skipped
};

/// Connects, runs every step (stopping at a failed step unless on_failure =
/// "continue"), records everything in `w`, closes the session.
HostReport run_host(HostJob& job, transport::Transport& t, transcript::Writer& w, Progress& p,
                    const std::atomic<bool>* interrupted, const Sleeper& sleep);

using TransportFactory =
    std::function<std::unique_ptr<transport::Transport>(const transport::Endpoint&)>;

/// Runs `jobs` with at most `forks` hosts at once (one thread per host, each
/// with its own session). Reports come back in the order of `jobs`.
std::vector<HostReport> run_hosts(std::vector<HostJob>& jobs, int forks,
                                  const TransportFactory& make, transcript::Writer& w, Progress& p,
                                  const std::atomic<bool>* interrupted, const Sleeper& sleep);

}  // namespace ratchet::engine
