#pragma once
// The host jobs of a plan: what the engine runs or probes on each host.
#include <vector>

#include "engine/host_run.h"
#include "plan/plan.h"
#include "plan/scope.h"
#include "playbook/model.h"
#include "run/request.h"

namespace ratchet::run {

/// One job per host of `P` (made from pb and inv): its plan, its endpoint
/// (`pinned`: only the keys P saw are accepted) and its template scope with
/// the real `secrets`; `info` null (a probe) leaves run.* a placeholder.
std::vector<engine::HostJob> host_jobs(const playbook::Playbook& pb, const playbook::Inventory* inv,
                                       const std::vector<std::string>& extra_keys, const plan::Plan& P,
                                       const EndpointOf& endpoint, bool pinned, const playbook::Value& secrets,
                                       const plan::RunInfo* info);

}  // namespace ratchet::run
