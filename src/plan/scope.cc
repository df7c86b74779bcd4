#include "plan/scope.h"

#include <fmt/format.h>

#include "playbook/inventory.h"
#include "ratchet/version.h"

namespace ratchet::plan {

using playbook::Value;

Value host_scope(const playbook::Playbook& pb, const playbook::Inventory* inv,
                 const playbook::Host& host, const std::vector<std::string>& extra_keys,
                 const Value& secrets, const RunInfo* run) {
  Value s = pb.vars.is_table() ? pb.vars : Value::table();
  s.merge(inv ? playbook::host_scope_vars(*inv, host) : host.vars);
  for (const auto& k : extra_keys)
    if (pb.vars.contains(k)) s[k] = pb.vars[k];
  s.merge(secrets);
  s["host"] = Value::table({{"name", host.name}, {"address", playbook::connect_name(host)}});
  s["playbook"] = Value::table({{"name", pb.name}, {"sha256", pb.sha256}, {"path", pb.path}});
  s["ratchet"] = Value::table({{"version", RATCHET_VERSION}});
  if (run) s["run"] = Value::table({{"id", run->id}, {"started", run->started}});
  s["steps"] = Value::table();
  return s;
}

}  // namespace ratchet::plan
