#pragma once
// Reads a transcript back, including one whose last line was cut off.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ratchet::transcript {

struct ReadResult {
  std::vector<nlohmann::json> events;  ///< every complete, parsable line, in order
  bool cut_off = false;   ///< the file ends inside a line (the writer was stopped)
  std::string note;       ///< where and how it ends, for people ("" = complete)
  std::string error;      ///< the file could not be read at all ("" = fine)
  /// Why the file is not a transcript ("" = it is, or it is empty): its first
  /// bytes are not the start of a run_start event (looks_like_run_start()).
  std::string not_transcript;
  /// Events of a kind events.h knows with a field of another type than its row
  /// says (events::Check::read), as "line N: event `exit`: field `ms` must be an
  /// integer"; they are kept in `events` and shown as written.
  std::vector<std::string> problems;
};

/// One line of a transcript parsed as JSON, or a discarded value when it does
/// not parse or nests deeper than any event does (64 levels).
nlohmann::json parse_line(std::string_view line);

/// Whether `first_line` (a file's first line, whole or cut off anywhere) is,
/// or begins, a run_start event: it parses as an object whose "event" is
/// "run_start", or its bytes are a prefix of (or begin with) `{"event":"run_start"`
/// as this writer puts it, or `{"argv":[` as writers before schema 2 did.
bool looks_like_run_start(const std::string& first_line);

/// Reads `path`. A last line without its newline, or that does not parse, is
/// reported in `note` (with its line number and byte offset), not thrown.
/// A bad line in the middle is skipped and named in `note` as well. Events are
/// read even when `not_transcript` is set (the caller decides).
ReadResult read_transcript(const std::string& path);

}  // namespace ratchet::transcript
