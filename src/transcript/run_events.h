#pragma once
// The run's own events, one struct each, each written by one function:
// run_start, host_library, host_end, run_end (docs/transcript.md). The
// fields are the schema's (transcript/events.cc); nothing else builds them.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "transcript/writer.h"
#include "util/value.h"

namespace ratchet::transcript {

/// serial / max_fail as the playbook set them: unset (null), a count, or a percent ("25%").
struct HostCountField {
  bool set = false;
  bool percent = false;
  long long value = 0;
};

/// run_start. Which fields are written follows `mode`.
struct RunStart {
  enum class Mode {
    run,    ///< `run` and `apply`: the whole run_start
    probe,  ///< `plan --probe`, apply's probe again: "mode": "probe", no playbook_source, run_by, strategy
    exec,   ///< `exec --transcript`: schema, version, run id, the command and the targets only
  };
  Mode mode = Mode::run;
  std::string run_id;
  std::vector<std::string> argv;     ///< run, probe
  std::string exec;                  ///< exec: the command's words joined
  std::string playbook, playbook_path, playbook_sha256, playbook_source;
  util::Value vars;                  ///< the playbook's vars; each secret's name is written "***"
  std::vector<std::string> secret_names;
  std::vector<std::string> targets;  ///< host names in order
  std::string strategy;              ///< run: "linear" | "free"
  int forks = 0;
  HostCountField serial, max_fail;   ///< run
  bool become_password = false;      ///< run, probe: -K or a password source was given
  std::string run_by;                ///< run: "user@host"
  nlohmann::json selection;          ///< plan::step_selection_json (null = none chosen)
  struct Plan {                      ///< apply: the saved plan it executes
    std::string digest, path, made_at, made_by;
  };
  std::optional<Plan> plan;
};
void write_run_start(Writer& w, const RunStart& e);

/// host_library: the host library's text once per run, with its sha256.
void write_host_library(Writer& w, const std::string& sha256, const std::string& text);

/// host_end: one host ended.
struct HostEnd {
  std::string host;
  std::string status;                ///< engine::HostStatus's name
  std::map<std::string, int> counts; ///< per step status (probe: per verdict); may be empty
  long long ms = 0;
  std::optional<std::string> reason;      ///< written when set (even "")
  std::optional<std::string> stopped_at;  ///< written when set
};
void write_host_end(Writer& w, const HostEnd& e);

/// run_end: the run ended (always its last event).
struct RunEnd {
  std::string status;  ///< "ok", "failed", "unreachable", "host_key", "interrupted" (exec, one host: the host's status)
  int exit_code = 0;
  std::optional<std::map<std::string, int>> counts;  ///< run: step statuses over every host
  /// run, probe: hosts per status; exec: each host's status by host name.
  std::map<std::string, int> hosts_per_status;
  std::optional<std::map<std::string, std::string>> status_by_host;  ///< exec (replaces hosts_per_status)
  std::optional<long long> ms;  ///< run, probe: wall time
};
void write_run_end(Writer& w, const RunEnd& e);

}  // namespace ratchet::transcript
