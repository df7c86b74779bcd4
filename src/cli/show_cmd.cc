// `ratchet show`: read a transcript (even a cut-off one) and render it.
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "transcript/reader.h"
#include "transcript/render.h"

namespace ratchet::cli {

int cmd_show(const ShowOptions& o) {
  auto r = transcript::read_transcript(o.path);
  if (!r.error.empty()) {
    std::cerr << "ratchet: error: " << r.error << "\n";
    return kExitUsage;
  }
  transcript::RenderOptions ro;
  ro.host = o.host;
  ro.step = o.step;
  auto events = transcript::filter(r.events, ro);
  bool any_host_event = false;
  for (const auto& e : events) any_host_event |= e.contains("host");
  if (o.json) {
    for (const auto& e : events) std::cout << e.dump() << "\n";
  } else {
    std::cout << transcript::render(r.events, ro);
  }
  if (r.events.empty()) std::cerr << "ratchet: note: " << o.path << " holds no events\n";
  else if ((!o.host.empty() || !o.step.empty()) && !any_host_event)
    std::cerr << "ratchet: note: no events match" << (o.host.empty() ? "" : " --host " + o.host)
              << (o.step.empty() ? "" : " --step " + o.step) << "\n";
  if (!r.note.empty()) std::cerr << "ratchet: note: " << r.note << "\n";
  return kExitOk;
}

}  // namespace ratchet::cli
