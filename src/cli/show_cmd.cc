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
  if (o.json) {
    for (const auto& e : transcript::filter(r.events, ro)) std::cout << e.dump() << "\n";
  } else {
    std::cout << transcript::render(r.events, ro);
  }
  if (!r.note.empty()) std::cerr << "ratchet: note: " << r.note << "\n";
  return kExitOk;
}

}  // namespace ratchet::cli
