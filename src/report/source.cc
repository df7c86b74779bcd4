#include "report/source.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "transcript/chain.h"
#include "transcript/events.h"
#include "transcript/reader.h"

namespace ratchet::report {

namespace {

/// The line numbers (from 1) of the file's complete run_start lines, in order.
std::vector<size_t> run_start_lines(const std::string& text) {
  std::vector<size_t> out;
  size_t start = 0, line = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // a cut last line is no event
    ++line;
    auto j = transcript::parse_line(std::string_view(text).substr(start, end - start));
    if (j.is_object()) {
      auto e = j.find("event");
      if (e != j.end() && e->is_string() && *e == transcript::events::kRunStart)
        out.push_back(line);
    }
    start = end + 1;
  }
  return out;
}

/// The N of a problem that begins "line N:", else 0.
size_t problem_line(const std::string& p) {
  size_t n = 0;
  return std::sscanf(p.c_str(), "line %zu:", &n) == 1 ? n : 0;
}

void judge_chain(const std::string& text, size_t first_line, Source* s) {
  const auto check = transcript::verify_chain(text);
  for (const auto& r : check.runs) {
    if (r.first_line != first_line) continue;
    s->chain = ChainState::intact;
    s->head = r.head;
    s->chain_text =
        fmt::format("intact: lines {}-{}, final head {}", r.first_line, r.last_line, r.head);
    for (const auto& h : r.hosts) s->host_digests.emplace_back(h.host, h.digest);
    return;
  }
  std::string from = fmt::format("the run from line {} has no run_end", first_line);
  for (const auto& c : check.cut)
    if (c.find(from) != std::string::npos) {
      s->chain = ChainState::cut;
      s->chain_text = "cut: " + c;
      return;
    }
  const std::string& p = check.problem;
  if (p.rfind("ends after", 0) == 0) {
    s->chain = ChainState::cut;
    s->chain_text = "cut: the file " + p;
  } else if (size_t n = problem_line(p); n != 0 && n < first_line) {
    s->chain = ChainState::broken;
    s->chain_text = fmt::format("not checked: the chain breaks before this run ({})", p);
  } else {
    s->chain = ChainState::broken;
    s->chain_text =
        "broken: " + (p.empty() ? std::string("this run is not among the chains found") : p);
  }
}

}  // namespace

LoadError load_source(const std::string& path, const std::string& run_id, Source* out,
                      std::string* err) {
  auto r = transcript::read_transcript(path);
  if (!r.error.empty()) {
    *err = r.error;
    return LoadError::usage;
  }
  if (!r.not_transcript.empty()) {
    *err = fmt::format("{} is not a ratchet transcript: {}", path, r.not_transcript);
    return LoadError::usage;
  }
  auto runs = build_runs(r);
  if (runs.empty()) {
    *err = fmt::format("{} holds no complete event{}", path,
                       r.note.empty() ? "" : " (" + r.note + ")");
    return LoadError::no_event;
  }
  size_t pick = runs.size() - 1;
  if (!run_id.empty()) {
    std::vector<std::string> ids;
    pick = runs.size();
    for (size_t k = 0; k < runs.size(); ++k) {
      if (runs[k].run_id == run_id) pick = k;
      if (!runs[k].run_id.empty()) ids.push_back(runs[k].run_id);
    }
    if (pick == runs.size()) {
      std::string list;
      for (const auto& i : ids) list += (list.empty() ? "" : ", ") + i;
      *err = fmt::format("--run {}: no run of that id in {} (it has: {})", run_id, path,
                         list.empty() ? "no run ids" : list);
      return LoadError::usage;
    }
  }
  out->path = path;
  out->run = std::move(runs[pick]);
  out->run_index = pick + 1;
  out->runs = runs.size();
  out->cut_note = r.note;
  out->problems = r.problems.size();
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  auto starts = run_start_lines(text);
  judge_chain(text, pick < starts.size() ? starts[pick] : 0, out);
  return LoadError::none;
}

}  // namespace ratchet::report
