#include "engine/scope.h"

#include <fmt/format.h>

#include "playbook/inventory.h"
#include "ratchet/version.h"

namespace ratchet::engine {

using nlohmann::json;

json host_scope(const playbook::Playbook& pb, const playbook::Inventory* inv,
                const playbook::Host& host, const std::vector<std::string>& extra_keys,
                const json& secrets, const RunInfo* run) {
  json s = pb.vars.is_object() ? pb.vars : json::object();
  if (inv) {
    json hv = playbook::host_scope_vars(*inv, host);
    if (hv.is_object()) s.update(hv);
  } else if (host.vars.is_object()) {
    s.update(host.vars);
  }
  for (const auto& k : extra_keys)
    if (pb.vars.contains(k)) s[k] = pb.vars[k];
  if (secrets.is_object()) s.update(secrets);
  s["host"] = {{"name", host.name}, {"address", playbook::connect_name(host)}};
  s["playbook"] = {{"name", pb.name}, {"sha256", pb.sha256}, {"path", pb.path}};
  s["ratchet"] = {{"version", RATCHET_VERSION}};
  if (run) s["run"] = {{"id", run->id}, {"started", run->started}};
  s["steps"] = json::object();
  return s;
}

}  // namespace ratchet::engine
