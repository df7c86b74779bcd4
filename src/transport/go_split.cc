#include "transport/go_split.h"

#include <algorithm>

#include "transport/wire.h"

namespace ratchet::transport {

GoSplit::GoSplit(std::string_view go_id) : marker_(go_line(go_id)) {}

void GoSplit::feed(const char* data, size_t n, std::string* out) {
  if (seen_ && !second_pending_) {
    out->append(data, n);
    return;
  }
  std::string buf = std::move(tail_);
  buf.append(data, n);
  tail_.clear();
  size_t from = 0;
  if (!seen_) {
    const size_t at = buf.find(marker_);
    const size_t cut = at != std::string::npos ? at : buf.size() - std::min(buf.size(), marker_.size() - 1);
    if (before_.size() < kKeep) before_.append(buf, 0, std::min(cut, kKeep - before_.size()));
    if (at == std::string::npos) {
      tail_ = buf.substr(cut);  // may still be the marker's start
      return;
    }
    seen_ = true;
    second_pending_ = true;
    from = at + marker_.size();
  }
  // An rc file's `exec 2>&1` sends the stderr go line here too, right after.
  const size_t have = buf.size() - from;
  if (have < marker_.size() && buf.compare(from, have, marker_, 0, have) == 0) {
    tail_ = buf.substr(from);  // could still be it
    return;
  }
  second_pending_ = false;
  if (buf.compare(from, marker_.size(), marker_) == 0) from += marker_.size();
  out->append(buf, from, std::string::npos);
}

void GoSplit::finish(std::string* out) {
  if (!seen_ && before_.size() < kKeep) before_.append(tail_, 0, std::min(tail_.size(), kKeep - before_.size()));
  if (seen_) out->append(tail_);  // the start of a second go line that never came whole: the command's
  tail_.clear();
  second_pending_ = false;
}

namespace {

std::string first_line(const std::string& s) {
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    std::string line = s.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) return line.substr(0, 200);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return "";
}

}  // namespace

std::string not_run_error(const std::string& out_before, const std::string& err_before, std::string_view ended) {
  std::string said = first_line(out_before);
  if (said.empty()) said = first_line(err_before);
  return std::string("the host did not run the command ratchet sent: ") +
         (said.empty() ? "it printed nothing" : "it printed `" + said + "`") + " (" + std::string(ended) +
         "; a forced command, or an rc file or login shell that ran something else)";
}

}  // namespace ratchet::transport
