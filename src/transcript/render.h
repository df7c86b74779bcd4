#pragma once
// `ratchet show`: a transcript rendered for a person.
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

/// Per host, per step: status, rung, duration and name; then each command with
/// its role, rung, exit and trimmed output; then the host and run totals. Every
/// kind of events.h has its line; one the table does not know (a newer schema's)
/// is shown as "unknown event NAME (its fields)", never dropped.
std::string render(const std::vector<nlohmann::json>& events, const RenderOptions& opt);

/// Events that pass the host/step filters of `opt` (for `show --json`).
std::vector<nlohmann::json> filter(const std::vector<nlohmann::json>& events,
                                   const RenderOptions& opt);

}  // namespace ratchet::transcript
