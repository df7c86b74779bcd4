#include "transcript/run_events.h"

#include <fmt/format.h>

#include "ratchet/version.h"
#include "transcript/value_json.h"

namespace ratchet::transcript {

namespace {

nlohmann::json count_json(const HostCountField& c) {
  if (!c.set) return nullptr;
  if (c.percent) return fmt::format("{}%", c.value);
  return c.value;
}

}  // namespace

void write_run_start(Writer& w, const RunStart& e) {
  using M = RunStart::Mode;
  if (e.mode == M::exec) {
    w.emit(events::kRunStart, {{"schema", kSchemaVersion}, {"ratchet_version", RATCHET_VERSION},
                               {"exec", e.exec}, {"targets", e.targets}, {"run_id", e.run_id}});
    return;
  }
  nlohmann::json vars = to_json(e.vars);
  for (const auto& name : e.secret_names) vars[name] = "***";
  nlohmann::json start = {{"schema", kSchemaVersion}, {"ratchet_version", RATCHET_VERSION},
                          {"run_id", e.run_id},       {"argv", e.argv},
                          {"playbook", e.playbook},   {"playbook_path", e.playbook_path},
                          {"playbook_sha256", e.playbook_sha256}, {"vars", vars},
                          {"targets", e.targets},     {"become_password", e.become_password}};
  if (e.mode == M::probe) {
    start["mode"] = "probe";
    start["policy"] = {{"forks", e.forks}};
  } else {
    start["playbook_source"] = e.playbook_source;
    start["policy"] = {{"strategy", e.strategy}, {"forks", e.forks}, {"serial", count_json(e.serial)},
                       {"max_fail", count_json(e.max_fail)}};
    start["run_by"] = e.run_by;
  }
  if (!e.selection.is_null()) start["selection"] = e.selection;
  if (e.plan)
    start["plan"] = {{"digest", e.plan->digest}, {"path", e.plan->path}, {"made_at", e.plan->made_at},
                     {"made_by", e.plan->made_by}};
  w.emit(events::kRunStart, start);
}

void write_host_library(Writer& w, const std::string& sha256, const std::string& text) {
  w.emit(events::kHostLibrary, {{"sha256", sha256}, {"text", text}});
}

void write_host_end(Writer& w, const HostEnd& e) {
  nlohmann::json ev = {{"host", e.host}, {"status", e.status}, {"counts", nlohmann::json::object()}, {"ms", e.ms}};
  for (const auto& [k, v] : e.counts) ev["counts"][k] = v;
  if (e.reason) ev["reason"] = *e.reason;
  if (e.stopped_at) ev["stopped_at"] = *e.stopped_at;
  w.emit(events::kHostEnd, ev);
}

void write_run_end(Writer& w, const RunEnd& e) {
  nlohmann::json ev = {{"status", e.status}, {"exit_code", e.exit_code}};
  if (e.counts) ev["counts"] = *e.counts;
  if (e.status_by_host) {
    ev["hosts"] = nlohmann::json::object();
    for (const auto& [h, s] : *e.status_by_host) ev["hosts"][h] = s;
  } else {
    ev["hosts"] = e.hosts_per_status;
  }
  if (e.ms) ev["ms"] = *e.ms;
  w.emit(events::kRunEnd, ev);
}

}  // namespace ratchet::transcript
