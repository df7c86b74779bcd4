#pragma once
// Reads a transcript back, including one whose last line was cut off.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ratchet::transcript {

struct ReadResult {
  std::vector<nlohmann::json> events;  ///< every complete, parsable line, in order
  bool cut_off = false;   ///< the file ends inside a line (the writer was stopped)
  std::string note;       ///< where and how it ends, for people ("" = complete)
  std::string error;      ///< the file could not be read at all ("" = fine)
};

/// Reads `path`. A last line without its newline, or that does not parse, is
/// reported in `note` (with its line number and byte offset), not thrown.
/// A bad line in the middle is skipped and named in `note` as well.
ReadResult read_transcript(const std::string& path);

}  // namespace ratchet::transcript
