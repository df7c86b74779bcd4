#pragma once
// `ratchet show`: a transcript rendered for a person.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ratchet::transcript {

struct RenderOptions {
  std::string host;         ///< only this host ("" = all)
  std::string step;         ///< only this step id ("" = all)
  size_t output_lines = 4;  ///< lines of output kept per command and stream
  bool commands = true;     ///< list each command under its step
};

/// Per run of the file, per host, per step: status, rung, duration and name; then
/// each command with its role, rung, exit and trimmed output; then the host and
/// run totals. A host is headed "host NAME", or "probe ID on host NAME (read-only)"
/// / "run ID on host NAME" for a probe and in a file of several runs. Every
/// kind of events.h has its line; one the table does not know (a newer schema's)
/// is shown as "unknown event NAME (its fields)", never dropped.
std::string render(const std::vector<nlohmann::json>& events, const RenderOptions& opt);

/// render() one event at a time, as a run writes them (`show --follow`): the
/// same lines, but hosts interleave, so a "host NAME" line comes before a
/// host's lines whenever another host or the run printed last.
class Stream {
 public:
  explicit Stream(RenderOptions opt);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  /// The lines event `e` adds, escaped as render()'s; "" when it adds none yet
  /// (a command's line waits for its exit) or does not pass the filters.
  std::string add(const nlohmann::json& e);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// Events that pass the host/step filters of `opt` (for `show --json`).
std::vector<nlohmann::json> filter(const std::vector<nlohmann::json>& events,
                                   const RenderOptions& opt);

}  // namespace ratchet::transcript
