// `ratchet show`: read a transcript (even a cut-off one) and render it.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "cli/commands.h"
#include "plan/codec.h"
#include "playbook/doc.h"
#include "cli/exit_codes.h"
#include "cli/usage.h"
#include "transcript/reader.h"
#include "transcript/render.h"
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

}  // namespace

int cmd_show(const ShowOptions& o) {
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
