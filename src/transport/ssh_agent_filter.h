#pragma once
// Internal to the libssh backend: an ssh-agent that shows libssh only the keys
// ratchet allows, for IdentitiesOnly yes (ssh_config(5): only the configured
// identity files are offered, "even if ssh-agent offers more identities"; a
// configured key the agent holds is still signed by the agent, as ssh(1) does,
// which is how a passphrase-protected IdentityFile works without a prompt).
// libssh 0.10's ssh_userauth_agent offers every key of the agent it talks to;
// it talks to this filter instead (ssh_set_agent_socket), which answers the
// key list itself and forwards only sign requests for the allowed key.
// The ssh-agent protocol: draft-miller-ssh-agent (messages 5, 11, 12, 13).
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ratchet::transport::ssh {

class AgentFilter {
 public:
  /// Connects to the agent listening on the unix socket `path` and reads the
  /// public keys it holds. Returns nullptr and sets *err (one line) when there
  /// is no agent there or it does not answer as one.
  static std::unique_ptr<AgentFilter> open(const std::string& path, std::string* err);
  ~AgentFilter();
  AgentFilter(const AgentFilter&) = delete;
  AgentFilter& operator=(const AgentFilter&) = delete;

  /// Whether the agent holds the public key `blob` (its wire encoding).
  bool holds(const std::string& blob) const;

  /// The agent's key whose wire encoding is `base64_blob` in base64 (as a
  /// .pub file and ssh_pki_export_pubkey_base64 write it), or "" when it
  /// holds no such key.
  std::string find(const std::string& base64_blob) const;

  /// The one key the filter shows and signs with from now on ("" = none).
  void allow_only(const std::string& blob);

  /// Starts the serving thread (once) and returns the socket end to hand to
  /// libssh with ssh_set_agent_socket, which then owns (and closes) it; -1
  /// with *err set when a socketpair or the thread cannot be made.
  int serve(std::string* err);

 private:
  explicit AgentFilter(int agent_fd) : agent_fd_(agent_fd) {}
  void run();
  /// The reply to one request from libssh (a message without its length).
  std::string answer(const std::string& request);

  int agent_fd_;       ///< the real agent's connection
  int fd_ = -1;        ///< our end of the socketpair libssh talks to
  std::vector<std::string> keys_;  ///< the agent's public key blobs
  mutable std::mutex mu_;
  std::string allowed_;  ///< guarded by mu_
  std::thread thread_;
};

}  // namespace ratchet::transport::ssh
