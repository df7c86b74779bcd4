#pragma once
// The events of one name in a transcript, for end-to-end assertions.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "transcript/reader.h"

namespace ratchet::testing {

/// The events of `tr` whose "event" is `name`, in order.
inline std::vector<nlohmann::json> events_named(const transcript::ReadResult& tr, const std::string& name) {
  std::vector<nlohmann::json> out;
  for (const auto& e : tr.events)
    if (e["event"] == name) out.push_back(e);
  return out;
}

/// The same, read from the transcript file at `path`.
inline std::vector<nlohmann::json> events_named(const std::string& path, const std::string& name) {
  return events_named(transcript::read_transcript(path), name);
}

}  // namespace ratchet::testing
