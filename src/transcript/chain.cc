#include "transcript/chain.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "transcript/events.h"
#include "transcript/reader.h"
#include "transcript/sign.h"
#include "util/hash.h"

namespace ratchet::transcript {

std::string line_digest(std::string_view line) { return util::sha256_hex(line); }

std::string Chain::prev_for(std::string_view event) const {
  return event == events::kRunStart ? std::string() : head_;
}

void Chain::written(std::string_view event, std::string_view host, std::string_view line) {
  if (event == events::kRunStart) hosts_.clear();  // a new run: a chain of its own
  // A `signature` line (after run_end, transcript/sign.h) is no part of the
  // run: head() stays the run's final head, the digest of its run_end.
  if (event == events::kSignature) return;
  head_ = line_digest(line);
  if (event == events::kHostEnd) hosts_[std::string(host)] = head_;
}

namespace {

/// The string at `key` in object `j`, or nullptr (absent, or of another type).
const std::string* string_at(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

/// verify_chain()'s walk through the lines, one run open at a time.
struct Walk {
  ChainCheck out;
  bool in_run = false;
  RunDigests run;
  std::string last_digest;  // of the line before
  size_t signature_line = 0;  // the last `signature` line seen (transcript/sign.h)

  /// The problem with complete line `n`, or "".
  std::string line(size_t n, std::string_view text) {
    if (text.empty()) return fmt::format("line {}: empty line", n);
    const auto j = parse_line(text);
    if (j.is_discarded() || !j.is_object()) return fmt::format("line {}: not a JSON object", n);
    const std::string* ev = string_at(j, "event");
    if (!ev) return fmt::format("line {}: no event name", n);
    const std::string digest = line_digest(text);
    const auto prev = j.find("prev");
    if (*ev == events::kRunStart) {
      // A run stopped before its end (killed, power lost), then another appended:
      // the stopped one is named, the next is checked on its own.
      if (in_run)
        out.cut.push_back(fmt::format("line {}: run_start, but the run from line {} has no run_end (it ends after line {})",
                                      n, run.first_line, n - 1));
      if (prev != j.end()) return fmt::format("line {}: run_start carries prev (a chain begins at run_start)", n);
      in_run = true;
      run = RunDigests{};
      run.first_line = n;
      if (const std::string* id = string_at(j, "run_id")) run.run_id = *id;
    } else if (*ev == events::kSignature && !in_run && !out.runs.empty() && out.runs.back().last_line == n - 1) {
      return signature(n, j);
    } else {
      if (!in_run)
        return n == 1 ? fmt::format("line 1: {} is not run_start (a transcript begins with run_start)", *ev)
                      : fmt::format("line {}: {} after the {} of line {} (a run begins with run_start)", n, *ev,
                                    signature_line == n - 1 ? "signature" : "run_end", n - 1);
      if (prev == j.end())
        return fmt::format("line {}: no prev (written before the hash chain, or edited)", n);
      if (!prev->is_string() || prev->get_ref<const std::string&>() != last_digest)
        return fmt::format("line {}: prev does not match line {}", n, n - 1);
      if (*ev == events::kHostEnd) {
        const std::string* host = string_at(j, "host");
        run.hosts.push_back({host ? *host : "", digest, n});
      } else if (*ev == events::kRunEnd) {
        if (std::string why = host_digests_problem(j); !why.empty()) return fmt::format("line {}: {}", n, why);
        run.last_line = n;
        run.head = digest;
        out.runs.push_back(std::move(run));
        in_run = false;
      }
    }
    last_digest = digest;
    return "";
  }

  /// The problem with `signature` line `n` (`j`), right after a run_end, or "":
  /// it chains to run_end and names run_end's digest as the head it signs.
  std::string signature(size_t n, const nlohmann::json& j) {
    auto prev = j.find("prev");
    if (prev == j.end() || !prev->is_string() || prev->get_ref<const std::string&>() != last_digest)
      return fmt::format("line {}: prev does not match line {}", n, n - 1);
    RunDigests& r = out.runs.back();
    const std::string* head = string_at(j, "head");
    if (!head || *head != r.head)
      return fmt::format("line {}: signature names head {}, not the final head of line {}", n,
                         head ? *head : "(none)", n - 1);
    signature_line = n;
    return "";  // only a run_start (which has no prev) may follow
  }

  /// Whether run_end `j`'s host_digests name exactly the digests of the run's host_end lines.
  std::string host_digests_problem(const nlohmann::json& j) const {
    std::map<std::string, std::string> seen;
    for (const auto& h : run.hosts) seen[h.host] = h.digest;  // a host's last host_end counts
    auto it = j.find("host_digests");
    if (it == j.end())
      return seen.empty() ? "" : "run_end has no host_digests, but the run has host_end lines";
    if (!it->is_object()) return "host_digests is not an object";
    for (const auto& [host, digest] : seen) {
      auto d = it->find(host);
      if (d == it->end() || !d->is_string() || d->get_ref<const std::string&>() != digest)
        return fmt::format("host_digests does not match the host_end of host {}", host);
    }
    for (auto d = it->begin(); d != it->end(); ++d)
      if (!seen.count(d.key())) return fmt::format("host_digests names host {}, which has no host_end", d.key());
    return "";
  }
};

}  // namespace

ChainCheck verify_chain(std::string_view text) {
  Walk w;
  size_t start = 0, n = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {  // a last line without its newline: cut while it was written
      w.out.problem = fmt::format("ends after line {} without run_end (line {} is cut off)", n, n + 1);
      return w.out;
    }
    ++n;
    if (std::string why = w.line(n, text.substr(start, nl - start)); !why.empty()) {
      w.out.problem = why;
      return w.out;
    }
    w.out.lines = n;
    start = nl + 1;
  }
  if (n == 0) w.out.problem = "holds no line";
  else if (w.in_run) w.out.problem = fmt::format("ends after line {} without run_end", n);
  return w.out;
}

std::string parse_digest(std::string_view text) {
  size_t b = text.find_first_not_of(" \t\r\n"), e = text.find_last_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  std::string d(text.substr(b, e - b + 1));
  std::transform(d.begin(), d.end(), d.begin(), [](unsigned char c) { return std::tolower(c); });
  if (d.rfind("sha256:", 0) == 0) d.erase(0, 7);
  bool hex = d.size() == 64 && std::all_of(d.begin(), d.end(), [](unsigned char c) { return std::isxdigit(c); });
  return hex ? d : "";
}

std::string digest_match(const ChainCheck& check, const std::string& hex) {
  for (const auto& r : check.runs) {
    std::string run = r.run_id.empty() ? fmt::format("the run from line {}", r.first_line) : "run " + r.run_id;
    if (r.head == hex) return fmt::format("the final head of {} (line {})", run, r.last_line);
    for (const auto& h : r.hosts)
      if (h.digest == hex) return fmt::format("host {} of {} (line {})", h.host, run, h.line);
  }
  return "";
}

}  // namespace ratchet::transcript
