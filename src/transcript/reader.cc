#include "transcript/reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "transcript/events.h"
#include "transcript/sign.h"

namespace ratchet::transcript {

static constexpr int kMaxDepth = 64;  // nesting accepted in one event line

// Our events nest a few levels; a hostile line nested thousands deep is
// refused before the parser and the destructor recurse through it.
nlohmann::json parse_line(std::string_view line) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t k = 0; k < line.size(); ++k) {
    char c = line[k];
    if (in_string) {
      if (c == '\\') ++k;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest > kMaxDepth ? nlohmann::json(nlohmann::json::value_t::discarded)
                             : nlohmann::json::parse(line, nullptr, false);
}

/// Whether `e`'s "event" is the string `name` (a hostile line may hold any type).
static bool is_event(const nlohmann::json& e, std::string_view name) {
  auto it = e.find("event");
  return it != e.end() && it->is_string() && it->get_ref<const std::string&>() == name;
}

bool looks_like_run_start(const std::string& first_line) {
  static const std::string ours = fmt::format(R"({{"event":"{}")", events::kRunStart);
  for (std::string_view start : {std::string_view(ours), std::string_view(R"({"argv":[)")}) {
    size_t n = std::min(start.size(), first_line.size());
    if (n > 0 && first_line.compare(0, n, start.substr(0, n)) == 0) return true;
  }
  auto j = parse_line(first_line);
  return !j.is_discarded() && j.is_object() && is_event(j, events::kRunStart);
}

ReadResult read_transcript(const std::string& path) {
  ReadResult r;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {  // ifstream "opens" a directory and reads nothing
    r.error = fmt::format("cannot read transcript {}: {}", path, std::strerror(EISDIR));
    return r;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    r.error = fmt::format("cannot read transcript {}: {}", path, std::strerror(errno));
    return r;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (!text.empty()) {
    std::string first = text.substr(0, std::min(text.find('\n'), text.size()));
    if (!looks_like_run_start(first))
      r.not_transcript = "its first bytes are not the start of a run_start event (a transcript begins "
                         "{\"event\":\"run_start\", ...)";
  }
  size_t start = 0, line_no = 0;
  std::vector<std::string> notes;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    bool complete = end != std::string::npos;
    if (!complete) end = text.size();
    ++line_no;
    std::string line = text.substr(start, end - start);
    if (!line.empty()) {
      auto j = parse_line(line);
      if (j.is_discarded() || !j.is_object() || !complete) {
        if (!complete) {
          r.cut_off = true;
          notes.push_back(fmt::format(
              "transcript ends mid-line at line {} (byte {}): the run was cut off there", line_no, start));
        } else {
          notes.push_back(fmt::format("line {} (byte {}) is not a JSON object; skipped", line_no, start));
        }
      } else {
        auto name = j.find("event");
        if (name != j.end() && name->is_string())
          if (std::string why = events::check_event(name->get_ref<const std::string&>(), j, events::Check::read);
              !why.empty())
            r.problems.push_back(fmt::format("line {}: {}", line_no, why));
        r.events.push_back(std::move(j));
      }
    }
    start = end + 1;
  }
  // A hostile line may hold "event" of any type; only the string "run_end" ends a run.
  // A run's `signature` follows its run_end (run --sign): the run finished.
  const bool ended = !r.events.empty() &&
                     (is_event(r.events.back(), events::kRunEnd) ||
                      (is_event(r.events.back(), events::kSignature) && r.events.size() > 1 &&
                       is_event(r.events[r.events.size() - 2], events::kRunEnd)));
  if (!r.cut_off && !r.events.empty() && !ended)
    notes.push_back(fmt::format("transcript has no run_end after {} events: the run did not finish",
                                r.events.size()));
  for (size_t i = 0; i < notes.size(); ++i) r.note += (i ? "\n" : "") + notes[i];
  return r;
}

}  // namespace ratchet::transcript
