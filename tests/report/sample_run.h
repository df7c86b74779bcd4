#pragma once
// Writes a run's transcript with the real writer (so its hash chain is real)
// for the report's tests: hosts, each with steps whose names and output the
// test picks (hostile bytes included).
#include <string>
#include <vector>

#include "transcript/events.h"
#include "transcript/writer.h"

namespace ratchet::testing {

struct SampleStep {
  std::string id, name, status = "ok", stdout_data = "fine\n";
  int code = 0;
  nlohmann::json holder_nodes = nullptr;    ///< the check's holder's `nodes` (left out when null)
  nlohmann::json holder_threads = nullptr;  ///< its `threads` (left out when null)
};

/// A run of `steps` on each of `hosts` into `path` (appended), with run id
/// `run_id`; without run_end (nor host_end) when `cut`.
inline void write_sample_run(const std::string& path, const std::vector<std::string>& hosts,
                             const std::vector<SampleStep>& steps, const std::string& run_id = "r1",
                             bool cut = false) {
  namespace ev = transcript::events;
  using nlohmann::json;
  transcript::Writer w(path);
  w.emit(ev::kRunStart, {{"schema", 2},
                         {"ratchet_version", "test"},
                         {"targets", hosts},
                         {"run_id", run_id},
                         {"playbook", "sample"},
                         {"playbook_path", "/tmp/sample.toml"},
                         {"playbook_sha256", std::string(64, 'a')},
                         {"run_by", "tester@box"}});
  for (const auto& h : hosts) {
    w.emit(ev::kConnect, {{"host", h},
                          {"address", "127.0.0.1"},
                          {"port", 22},
                          {"user", "root"},
                          {"fingerprint", "SHA256:x"},
                          {"auth_method", "publickey (agent)"},
                          {"ms", 5}});
    for (const auto& s : steps) {
      w.emit(ev::kStepStart, {{"host", h}, {"step", s.id}, {"kind", "run"}, {"name", s.name}});
      w.emit(ev::kCommand, {{"host", h},
                            {"step", s.id},
                            {"rung", 0},
                            {"role", "action"},
                            {"command", "echo " + s.id},
                            {"sent", "echo"},
                            {"timeout_ms", 1000}});
      if (!s.stdout_data.empty())
        w.emit(ev::kOutput, {{"host", h},
                             {"step", s.id},
                             {"rung", 0},
                             {"stream", "stdout"},
                             {"bytes", s.stdout_data.size()},
                             {"data", s.stdout_data}});
      w.emit(ev::kExit, {{"host", h},
                         {"step", s.id},
                         {"rung", 0},
                         {"ms", 3},
                         {"timed_out", false},
                         {"code", s.code}});
      json holder = {{"pid", 7},
                     {"user", "u<1>"},
                     {"comm", "c&d"},
                     {"cmdline", "<img src=x onerror=alert(1)>"},
                     {"files", json::array({"/dev/nvidia0"})}};
      if (!s.holder_nodes.is_null()) holder["nodes"] = s.holder_nodes;
      if (!s.holder_threads.is_null()) holder["threads"] = s.holder_threads;
      w.emit(ev::kEvidence,
             {{"host", h},
              {"step", s.id},
              {"rung", 0},
              {"role", "check"},
              {"holds", s.status != "failed"},
              {"note", "note of " + s.id},
              {"holders", json::array({holder})}});
      w.emit(ev::kStepEnd,
             {{"host", h}, {"step", s.id}, {"status", s.status}, {"rung", 0}, {"ms", 3}});
    }
    if (!cut)
      w.emit(ev::kHostEnd,
             {{"host", h}, {"status", "ok"}, {"counts", {{"ok", steps.size()}}}, {"ms", 9}});
  }
  if (!cut)
    w.emit(ev::kRunEnd,
           {{"status", "ok"}, {"exit_code", 0}, {"hosts", {{"ok", hosts.size()}}}, {"ms", 10}});
}

}  // namespace ratchet::testing
