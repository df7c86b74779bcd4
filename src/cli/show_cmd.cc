// `ratchet show`: read a transcript (even a cut-off one) and render it.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "cli/commands.h"
#include "plan/codec.h"
#include "playbook/doc.h"
#include "cli/exit_codes.h"
#include "cli/usage.h"
#include "transcript/chain.h"
#include "transcript/events.h"
#include "transcript/reader.h"
#include "transcript/render.h"
#include "transcript/sign.h"
#include "transcript/tail.h"
#include "util/spell.h"
#include "util/text.h"

namespace ratchet::cli {

namespace {

/// The distinct string values of `key` in `events`, in order of appearance.
std::vector<std::string> values_of(const std::vector<nlohmann::json>& events, const char* key) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    auto it = e.find(key);
    if (it == e.end() || !it->is_string()) continue;
    const auto& v = it->get_ref<const std::string&>();
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

/// A usage error for a --host / --step value that names nothing in the file.
int no_match(const std::string& path, const char* flag, const std::string& value,
             const std::vector<std::string>& known, const char* what) {
  std::string near = util::nearest(value, known);
  std::string msg = fmt::format("{} {}: no {} of that name in {}", flag, value, what, path);
  if (!near.empty()) msg += fmt::format(" (did you mean `{}`?)", near);
  else if (!known.empty() && known.size() <= 8) {
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    msg += fmt::format(" (it has: {})", list);
  }
  return usage_error("show", msg);
}

/// `show --verify --allowed-signers`: after the chain, TRANSCRIPT.sig against the
/// final head of the file's last signed run (else its last run); 0 good, 1 not.
int verify_signature(const ShowOptions& o, const transcript::ChainCheck& check, const std::string& text) {
  auto say_not = [&](const std::string& why) {
    std::cerr << util::escaped_line(fmt::format("ratchet: {}: signature: {}", o.path, why)) << "\n";
    return kExitFailed;
  };
  if (check.runs.empty()) return say_not("no whole run to check a signature against");
  size_t pick = check.runs.size() - 1;
  std::vector<transcript::RunSignature> sigs;
  for (size_t k = 0; k < check.runs.size(); ++k) {
    sigs.push_back(transcript::signature_of(text, check.runs[k]));
    if (sigs[k].line != 0 && sigs[k].error.empty()) pick = k;
  }
  const auto& r = check.runs[pick];
  const auto& sig = sigs[pick];
  const std::string run = r.run_id.empty() ? fmt::format("the run from line {}", r.first_line) : "run " + r.run_id;
  if (sig.line != 0 && !sig.error.empty())
    return say_not(fmt::format("{} was not signed: signing failed when it ended (line {}): {}", run, sig.line,
                               sig.error));
  auto c = transcript::verify_signature(transcript::signature_path(o.path), r.head, o.allowed_signers, o.signer);
  if (!c.ok) return say_not(fmt::format("the final head {} of {}: {}", r.head, run, c.problem));
  if (sig.line != 0 && !sig.key.empty() && sig.key != c.key)
    return say_not(fmt::format("{} records key {} (line {}), but {} was made with key {}", run, sig.key, sig.line,
                               transcript::signature_path(o.path), c.key));
  std::cout << util::escaped_line(fmt::format("signature: the final head {} of {} is signed by {} (key {}), "
                                              "allowed by {}",
                                              r.head, run, c.principal, c.key, o.allowed_signers))
            << "\n";
  if (sig.line == 0)
    std::cerr << util::escaped_line(fmt::format("ratchet: note: {}: {} has no signature event (the line after its "
                                                "run_end); {} signs its head all the same",
                                                o.path, run, transcript::signature_path(o.path)))
              << "\n";
  if (pick + 1 < check.runs.size())
    std::cerr << util::escaped_line(fmt::format("ratchet: note: {}: the {} run(s) after {} are not covered by the "
                                                "signature",
                                                o.path, check.runs.size() - pick - 1, run))
              << "\n";
  return kExitOk;
}

/// `show --verify`: every run's chain, then --digest (docs/transcript.md, "Hash chain").
int verify(const ShowOptions& o) {
  std::string want;
  if (o.digest_given && (want = transcript::parse_digest(o.digest)).empty())
    return usage_error("show", fmt::format("--digest {}: not a sha256 digest (64 hex digits, `sha256:` optional)",
                                           o.digest));
  if (!o.allowed_signers.empty() && ::access(o.allowed_signers.c_str(), R_OK) != 0)
    return usage_error("show", fmt::format("--allowed-signers {}: cannot read it ({})", o.allowed_signers,
                                           std::strerror(errno)));
  std::error_code ec;
  std::ifstream in(o.path, std::ios::binary);
  if (std::filesystem::is_directory(o.path, ec) || !in) {
    std::cerr << util::escaped_line(fmt::format("ratchet: error: cannot read transcript {}: {}", o.path,
                                                std::strerror(in ? EISDIR : errno)))
              << "\n";
    return kExitUsage;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  const auto check = transcript::verify_chain(ss.str());
  for (const auto& r : check.runs) {
    std::cout << util::escaped_line(fmt::format("{}, lines {}-{}: final head {}",
                                                r.run_id.empty() ? "run" : "run " + r.run_id, r.first_line,
                                                r.last_line, r.head))
              << "\n";
    for (const auto& h : r.hosts)
      std::cout << util::escaped_line(fmt::format("  host {}: {} (line {})", h.host, h.digest, h.line)) << "\n";
  }
  for (const auto& c : check.cut) std::cerr << util::escaped_line(fmt::format("ratchet: {}: {}", o.path, c)) << "\n";
  if (!check.problem.empty()) {
    std::cerr << util::escaped_line(fmt::format("ratchet: {}: {}", o.path, check.problem)) << "\n";
    return kExitFailed;
  }
  if (check.cut.empty())
    std::cout << util::escaped_line(fmt::format("{}: every chain is intact ({} run{}, {} lines)", o.path,
                                                check.runs.size(), check.runs.size() == 1 ? "" : "s", check.lines))
              << "\n";
  if (!o.allowed_signers.empty())  // who signed: the chain above holds first
    if (int rc = verify_signature(o, check, ss.str()); rc != kExitOk) return rc;
  // With --digest the question is whether the run it names is whole: a run
  // stopped earlier in the same file does not change that answer.
  if (!o.digest_given) return check.cut.empty() ? kExitOk : kExitFailed;
  if (std::string what = transcript::digest_match(check, want); !what.empty()) {
    std::cout << util::escaped_line(fmt::format("digest {} is {}{}", want, what,
                                                check.cut.empty() ? "" : "; its chain is intact")) << "\n";
    return kExitOk;
  }
  std::cerr << util::escaped_line(fmt::format(
                   "ratchet: {}: digest {} is neither the final head nor a host's digest of any run in it", o.path,
                   want))
            << "\n";
  return kExitFailed;
}

std::atomic<bool> g_stop_following{false};

void on_follow_signal(int) { g_stop_following = true; }

/// Whether the JSON line `line` is a run_start event.
bool is_run_start(const std::string& line) {
  auto j = transcript::parse_line(line);
  auto ev = j.is_object() ? j.find("event") : j.end();
  return j.is_object() && ev != j.end() && ev->is_string() && *ev == transcript::events::kRunStart;
}

/// `show --follow`: the file's last run, event by event, until its run_end.
int follow(const ShowOptions& o) {
  // A directory can never become a transcript: a usage error, as for `show` (a
  // file not there yet is waited for).
  if (std::error_code ec; std::filesystem::is_directory(o.path, ec)) {
    std::cerr << util::escaped_line(fmt::format("ratchet: error: cannot read transcript {}: {}", o.path,
                                                std::strerror(EISDIR)))
              << "\n";
    return kExitUsage;
  }
  transcript::RenderOptions ro;
  ro.host = o.host;
  ro.step = o.step;
  transcript::Stream stream(ro);
  transcript::LineTail tail(o.path);
  g_stop_following = false;
  auto old_int = std::signal(SIGINT, on_follow_signal);
  auto old_term = std::signal(SIGTERM, on_follow_signal);
  struct Restore {
    void (*i)(int), (*t)(int);
    ~Restore() {
      std::signal(SIGINT, i);
      std::signal(SIGTERM, t);
    }
  } restore{old_int, old_term};
  bool first = true;
  size_t line_no = 0;
  while (!g_stop_following) {
    std::string err;
    auto lines = tail.poll(&err);
    if (!err.empty()) {
      std::cerr << util::escaped_line("ratchet: error: " + err) << "\n";
      return kExitFailed;
    }
    if (lines.empty()) {  // nothing new: look again soon (a signal ends the sleep early)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    size_t from = 0;
    if (first) {  // the first lines: the file's start, maybe with runs that ended before this one
      first = false;
      if (!transcript::looks_like_run_start(lines[0]))
        return usage_error("show", fmt::format("{} is not a ratchet transcript: its first bytes are not the start "
                                               "of a run_start event", o.path));
      for (size_t k = 0; k < lines.size(); ++k)
        if (is_run_start(lines[k])) from = k;
    }
    line_no += from;
    for (size_t k = from; k < lines.size(); ++k) {
      ++line_no;
      auto e = transcript::parse_line(lines[k]);
      if (e.is_discarded() || !e.is_object()) {
        std::cerr << fmt::format("ratchet: note: line {} is not a JSON object; skipped", line_no) << std::endl;
        continue;
      }
      if (o.json) {
        if (!transcript::filter({e}, ro).empty())
          std::cout << e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      } else {
        std::cout << stream.add(e);
      }
      std::cout << std::flush;
      auto ev = e.find("event");
      if (ev != e.end() && ev->is_string() && *ev == transcript::events::kRunEnd) {
        auto code = e.find("exit_code");
        bool known = code != e.end() && code->is_number_integer() && *code >= 0 && *code <= 255;
        return known ? code->get<int>() : kExitFailed;
      }
    }
  }
  std::cerr << util::escaped_line(fmt::format("ratchet: note: stopped following {} after line {}; the run, if any, "
                                              "goes on",
                                              o.path, line_no))
            << "\n";
  return kExitInterrupted;
}

}  // namespace

int cmd_show(const ShowOptions& o) {
  if (o.verify && (o.follow || o.json || !o.host.empty() || !o.step.empty()))
    return usage_error("show", "--verify checks the whole file: it goes without --follow, --json, --host and --step");
  if (o.verify) return verify(o);
  if (o.follow) return follow(o);
  if (std::string text, err; playbook::read_text_file(o.path, &text, &err) && plan::looks_like_plan(text))
    return usage_error("show", fmt::format("{} is a saved plan (made by `ratchet plan --out`), not a transcript: "
                                           "`ratchet apply {}` runs it; its commands are in the file itself",
                                           o.path, o.path));
  auto r = transcript::read_transcript(o.path);
  if (!r.error.empty()) {
    std::cerr << "ratchet: error: " << util::escaped_line(r.error) << "\n";
    return kExitUsage;
  }
  if (!r.not_transcript.empty())
    return usage_error("show", fmt::format("{} is not a ratchet transcript: {}", o.path, r.not_transcript));
  // Filters that name no host or step of the file: a typo, not an empty result.
  if (!r.events.empty()) {
    if (!o.host.empty()) {
      auto hosts = values_of(r.events, "host");
      if (std::find(hosts.begin(), hosts.end(), o.host) == hosts.end())
        return no_match(o.path, "--host", o.host, hosts, "host");
    }
    if (!o.step.empty()) {
      auto steps = values_of(r.events, "step");
      if (std::find(steps.begin(), steps.end(), o.step) == steps.end())
        return no_match(o.path, "--step", o.step, steps, "step");
    }
  }
  transcript::RenderOptions ro;
  ro.host = o.host;
  ro.step = o.step;
  auto events = transcript::filter(r.events, ro);
  bool any_host_event = false;
  for (const auto& e : events) any_host_event |= e.contains("host");
  if (o.json) {
    for (const auto& e : events) std::cout << e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << transcript::render(r.events, ro);
  }
  if (r.events.empty()) std::cerr << util::escaped_line("ratchet: note: " + o.path + " holds no complete event") << "\n";
  else if ((!o.host.empty() || !o.step.empty()) && !any_host_event)
    std::cerr << util::escaped_line("ratchet: note: no events match" + (o.host.empty() ? "" : " --host " + o.host) +
                                    (o.step.empty() ? "" : " --step " + o.step))
              << "\n";
  if (!r.problems.empty())  // a hand-edited or foreign file: shown anyway, as written
    std::cerr << util::escaped_line(fmt::format("ratchet: note: {} (shown as written){}", r.problems[0],
                                                r.problems.size() > 1
                                                    ? fmt::format("; {} more events like it", r.problems.size() - 1)
                                                    : ""))
              << "\n";
  if (!r.note.empty()) std::cerr << util::escape_bytes("ratchet: note: " + r.note) << "\n";
  // A file cut before its first event ended holds nothing to show: not a success.
  return r.events.empty() ? kExitFailed : kExitOk;
}

}  // namespace ratchet::cli
