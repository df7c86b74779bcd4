#include "cli/probe_run.h"

#include "cli/run_settings.h"

namespace ratchet::cli {

std::optional<ProbeRun> probe_plan(const Loaded& L, const plan::Plan& P, const Options& o,
                                   const std::vector<std::string>& argv, const std::string& transcript, bool pinned) {
  run::ProbeRequest r{&L.pb, L.inv ? &*L.inv : nullptr, L.extra_keys, &P, pinned, settings_of(o, argv)};
  r.settings.transcript = transcript;
  return run::probe_plan(r);
}

}  // namespace ratchet::cli
