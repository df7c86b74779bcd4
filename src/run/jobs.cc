#include "run/jobs.h"

namespace ratchet::run {

std::vector<engine::HostJob> host_jobs(const playbook::Playbook& pb, const playbook::Inventory* inv,
                                       const std::vector<std::string>& extra_keys, const plan::Plan& P,
                                       const EndpointOf& endpoint, bool pinned, const playbook::Value& secrets,
                                       const plan::RunInfo* info) {
  std::vector<engine::HostJob> jobs;
  for (const auto& hp : P.hosts) {
    engine::HostJob j;
    j.pb = &pb;
    j.plan = &hp;
    j.host = hp.host;
    j.endpoint = endpoint(hp.host);
    if (pinned) j.endpoint.pinned_keys = hp.endpoint.known_keys;  // the keys the reviewed plan saw
    j.scope = plan::host_scope(pb, inv, hp.host, extra_keys, secrets, info);
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace ratchet::run
