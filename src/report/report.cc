#include "report/report.h"

#include <fmt/format.h>

#include "report/page.h"
#include "report/signature.h"
#include "report/write.h"

namespace ratchet::report {

Made make_report(const std::string& transcript, const std::string& out, const std::string& run_id,
                 const std::string& allowed_signers, const std::string& signer) {
  Made m;
  m.error = load_source(transcript, run_id, &m.source, &m.message);
  if (m.error != LoadError::none) return m;
  judge_signature(&m.source, allowed_signers, signer);
  std::string page = render_page(m.source);
  if (std::string err = write_private_atomic(out, page); !err.empty()) {
    m.error = LoadError::usage;
    m.message = err;
    return m;
  }
  m.bytes = page.size();
  const Run& r = m.source.run;
  size_t steps = 0;
  for (const auto& h : r.hosts) steps += h.steps.size();
  const char* chain = m.source.chain == ChainState::intact ? "chain intact"
                      : m.source.chain == ChainState::cut  ? "chain cut"
                                                           : "chain broken";
  m.message = fmt::format(
      "report {} ({} bytes): {}{}, {} host(s), {} step run(s), {}, signature: {}{}", out, page.size(),
      r.run_id.empty() ? "run" : "run " + r.run_id,
      m.source.runs > 1 ? fmt::format(" ({} of {} in the file)", m.source.run_index, m.source.runs)
                        : "",
      r.hosts.size(), steps, chain, m.source.signature_state, r.ended ? "" : "; the run has no run_end (cut)");
  return m;
}

}  // namespace ratchet::report
