#include "report/signature.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "transcript/chain.h"
#include "transcript/sign.h"

namespace ratchet::report {

namespace {

/// The run's `signature` event, as recorded: found after the run_end whose
/// digest is the run's final head (s->head, set when its chain is intact).
transcript::RunSignature recorded(const Source& s) {
  std::ifstream in(s.path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const auto check = transcript::verify_chain(text);
  for (const auto& r : check.runs)
    if (r.head == s.head) return transcript::signature_of(text, r);
  return {};
}

}  // namespace

void judge_signature(Source* s, const std::string& allowed_signers, const std::string& signer) {
  if (s->chain != ChainState::intact) {  // no whole run: nothing it could have signed
    s->signature_state = "unknown";
    s->signature_text = "not read: the run's hash chain is not intact";
    return;
  }
  const auto sig = recorded(*s);
  if (allowed_signers.empty()) {  // as recorded: ssh-keygen is not run unless asked
    if (sig.line == 0) {
      s->signature_state = "none", s->signature_text = "not signed";
    } else if (!sig.error.empty()) {
      s->signature_state = "failed", s->signature_text = "signing failed: " + sig.error;
    } else {
      s->signature_state = "unchecked";
      s->signature_text = fmt::format("by key {} (signature not checked: ratchet report --allowed-signers FILE, "
                                      "or ratchet show --verify --allowed-signers FILE)",
                                      sig.key);
    }
    return;
  }
  auto c = transcript::verify_signature(transcript::signature_path(s->path), s->head, allowed_signers, signer);
  s->signature_state = c.ok ? "good" : "bad";
  s->signature_text = c.ok ? fmt::format("{} (key {}): good signature of the final head, allowed by {}",
                                         c.principal, c.key, allowed_signers)
                           : "not verified: " + c.problem;
}

}  // namespace ratchet::report
