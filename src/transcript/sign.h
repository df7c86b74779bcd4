#pragma once
// Signing a run's final head with the operator's SSH key, and checking such a
// signature, through OpenSSH's `ssh-keygen -Y` (no cryptography of ratchet's
// own; docs/transcript.md, "Signature"). ssh-keygen runs without a shell; a
// key's passphrase or content never passes through ratchet.
#include <optional>
#include <string>
#include <string_view>

#include "transcript/chain.h"

namespace ratchet::transcript {

class Writer;

namespace events {
/// The event sign_run() writes right after a run's run_end (its row of fields
/// is in events.cc with the others; docs/transcript.md, `signature`).
inline constexpr char kSignature[] = "signature";
}  // namespace events

/// The namespace (`-n`) of every signature ratchet makes or checks.
inline constexpr char kSignNamespace[] = "ratchet-transcript";

/// The key that signs: a key file (`--sign-key`), or the agent's first key.
struct SignKey {
  std::string file;       ///< a private key file, or a .pub whose private half is in the agent ("" = agent)
  std::string agent_key;  ///< else the agent's first public key, as `ssh-add -L` prints it
  /// "key FILE" or "the agent's first key (TYPE COMMENT)", for messages.
  std::string describe() const;
};

/// The key to sign with: `file` when not "" (it must be readable), else the
/// agent's first key (SSH_AUTH_SOCK, `ssh-add -L`). nullopt with *err naming
/// the fix when there is neither, or the agent holds no key.
std::optional<SignKey> find_sign_key(const std::string& file, std::string* err);

/// Where a transcript's signature goes: TRANSCRIPT.sig beside it.
std::string signature_path(const std::string& transcript);

struct SignResult {
  std::string key;    ///< the signer's key, "ED25519 SHA256:..." (as ssh-keygen names it)
  std::string error;  ///< "" when signed; else why not, with ssh-keygen's stderr
};

/// Signs `head` (64 hex digits; the signed message is exactly those 64 bytes)
/// with `ssh-keygen -Y sign -n ratchet-transcript -f KEY`, writing the
/// signature to `sig_path` (mode 0644, replaced atomically).
SignResult sign_head(const SignKey& key, const std::string& head, const std::string& sig_path);

/// After run_end: signs `w`'s final head into signature_path(w.path()) and
/// records the `signature` event (key, or error). Returns what sign_head did.
SignResult sign_run(Writer& w, const SignKey& key);

/// A run's `signature` event, as recorded (not checked against any key).
struct RunSignature {
  size_t line = 0;         ///< its line, from 1 (0 = the run has none)
  std::string key, error;  ///< the signer's key; or why signing failed
};

/// The `signature` event right after run `run`'s run_end in `text`, the file
/// verify_chain() found `run` in (which checked that it names run's head).
RunSignature signature_of(std::string_view text, const RunDigests& run);

struct SignatureCheck {
  bool ok = false;
  std::string principal;  ///< who signed, as the allowed signers file names them ("" when not found)
  std::string key;        ///< the key that made the signature, "ED25519 SHA256:..." ("" when unknown)
  std::string problem;    ///< "" when ok; else exactly why not
};

/// Whether `sig_path` is a good signature of `head` by a key `allowed_signers`
/// names (`ssh-keygen -Y verify`), for `signer` when not "" (else the principal
/// `ssh-keygen -Y find-principals` finds).
SignatureCheck verify_signature(const std::string& sig_path, const std::string& head,
                                const std::string& allowed_signers, const std::string& signer);

}  // namespace ratchet::transcript
