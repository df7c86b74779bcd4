#pragma once
// Internal to the libssh backend (src/transport/ssh_*.cc): sessions, host keys,
// authentication, exec channels. Only the backend's headers (ssh_*.h,
// keepalive.h, session_shell.h) include libssh; everything else reaches the
// backend through transport.h.
#include <libssh/libssh.h>

#include <optional>
#include <string>
#include <vector>

#include "transport/ssh_config_scan.h"
#include "transport/transport.h"

namespace ratchet::transport::ssh {

class KeepaliveWatch;

/// "~" and "~/x" become HOME and HOME/x, HOME being the passwd entry's home
/// directory as ssh(1) uses it ($HOME only without one); other paths unchanged.
std::string expand_home(const std::string& path);

/// Where a session connects, as resolved after ssh config: for messages and ConnectInfo.
struct Target {
  std::string host;  ///< HostName actually dialled
  int port = 22;
  std::string user;
  std::string where;        ///< "host:port", the prefix of every message
  std::string known_hosts;  ///< the user known_hosts file in use
  bool hash_known_hosts = false;  ///< ssh config HashKnownHosts yes: --accept-new writes a hashed entry
};

/// The keys authenticate() may offer: the inventory's and the ssh config's.
struct KeyPlan {
  std::string identity;  ///< the inventory's file, "~" expanded; "" = none
  /// ssh config IdentitiesOnly yes (ssh_config(5); ssh_config_scan.h): no
  /// agent key but those of the files below, and no ssh_userauth_publickey_auto.
  bool identities_only = false;
  /// The config's IdentityFile entries for this host, expanded, in order.
  std::vector<std::string> config_files;
  /// The agent to ask for the listed keys whose files cannot be read
  /// (IdentityAgent, else $SSH_AUTH_SOCK); "" = no agent. Used only with
  /// identities_only: without it libssh finds the agent itself.
  std::string agent_socket;
  /// "FILE line N" of Match lines not evaluated whose IdentitiesOnly yes applied.
  std::vector<std::string> assumed;
  /// The ssh config's PubkeyAcceptedAlgorithms as applied ("" = libssh's
  /// default): a key of another algorithm is not offered, and says why.
  std::string accepted_algorithms;
};

/// What configure_session() made of an Endpoint, ssh config applied.
struct Setup {
  Target target;
  KeyPlan keys;
  long timeout_s = 10;        ///< SSH_OPTIONS_TIMEOUT, whole seconds (>= 1)
  std::string jump;           ///< hops to go through ("" = direct): Endpoint::jump, else ProxyJump
  std::string proxy_command;  ///< a ProxyCommand the user wrote, kept for libssh to run; "" = none
  SshHostConfig config;       ///< what the ssh config says for the host argument
  std::string host_key_algorithms;  ///< the config's HostKeyAlgorithms as applied; "" = libssh's default
  Keepalive keepalive;  ///< Endpoint::keepalive, else the config's ServerAliveInterval and ServerAliveCountMax
};

/// The name the ssh config is matched against, as `ssh ARG` would be given
/// it: the inventory address when there is one, else the name.
std::string host_argument(const Endpoint& ep);

/// Sets the options of the new session `s` from `ep`: the ssh config read by
/// ratchet for host_argument(ep) (ssh_config_scan.h; libssh parses none), then
/// ep's port, user, identity, known_hosts and jump over it; fills *out, out->keys
/// included. A ProxyJump is not handed to libssh (out->jump says where to go);
/// a ProxyCommand the user wrote is, unless a jump applies. Connects nothing;
/// errors (missing -F file, bad config value, host name or jump) name ep.name.
std::optional<ConnectError> configure_session(ssh_session s, const Endpoint& ep, Setup* out);

/// ssh_connect (over the socket *fd when *fd >= 0, a socket that stays the
/// caller's: see free_session), then verify_host_key and authenticate. Sets
/// setup->target.known_hosts, *fingerprint and *method.
std::optional<ConnectError> open_session(ssh_session s, const Endpoint& ep, Setup* setup, int* fd,
                                         std::string* fingerprint, std::string* method);

/// ssh_disconnect + ssh_free, then closes `fd` (what open_session got, or -1)
/// unless libssh already did: libssh 0.10 leaves a socket handed in with
/// SSH_OPTIONS_FD open on disconnect, but closes it on some error paths.
void free_session(ssh_session s, int fd);

/// A string option read back from libssh (after config parsing), or "".
std::string get_option(ssh_session s, ssh_options_e opt);

/// Checks the server's host key against the known_hosts files after ssh_connect:
/// OpenSSH's StrictHostKeyChecking=yes, or =accept-new when `accept_new` (a
/// first-seen key is appended to t.known_hosts). A changed key, or a key of
/// another type, always refuses. Sets *fingerprint to "SHA256:..." when known.
/// A non-empty `pinned` (a saved plan's keys) refuses any other key first.
std::optional<ConnectError> verify_host_key(ssh_session s, const Target& t, bool accept_new,
                                            std::string* fingerprint, const std::vector<std::string>& pinned = {});

/// The "SHA256:..." fingerprints the known_hosts files set on `s` list for t
/// (plain or hashed names; @revoked and @cert-authority lines left out).
std::vector<std::string> known_fingerprints(ssh_session s, const Target& t);

/// Authenticates as t.user: "none", then public keys.
///  - Without keys.identities_only (as ssh(1) with IdentitiesOnly no): the
///    keys.identity file (if any), then ssh_userauth_publickey_auto (every
///    agent key, then the ssh config's and libssh's default identity files).
///  - With it (IdentitiesOnly yes, ssh_config(5)): keys.identity, then each of
///    keys.config_files, or, when neither names a file, ~/.ssh/id_rsa,
///    id_ecdsa and id_ed25519 (those that exist), as ssh(1) does. Each file's
///    private key is used when it loads without a passphrase; otherwise, when
///    the agent at keys.agent_socket holds the key of FILE.pub, the agent signs
///    with that key alone (AgentFilter). No other agent key is ever offered.
/// Sets *method to what succeeded ("publickey (FILE)", "publickey (agent:
/// FILE)", "publickey (agent, ...)", "none"); on failure the error lists, in
/// ConnectError::methods_tried, each key offered or skipped, in order.
std::optional<ConnectError> authenticate(ssh_session s, const Target& t, const KeyPlan& keys,
                                         std::string* method);

/// A short helper command on a second channel of `s` (the watchdog, the
/// holder query): `command` as it is, of.become_stdin on its stdin, 10 s, 4 KiB.
ExecResult run_beside(ssh_session s, const Target& t, std::string command, const Wire& of);

/// Runs the watchdog for `p` on a second channel of `s` (wire.h), `left` ms
/// before the deadline (0: stop it now), with req's become and wire's run id.
/// A channel sshd refuses (MaxSessions) is asked for again every 20 ms for up
/// to `refused_wait` (0: not again). Returns "armed" or why not ("watchdog: ...").
std::string arm_watchdog(ssh_session s, const Target& t, const ExecRequest& req, const Wire& wire,
                         const RemoteProcess& p, long long left, util::Millis refused_wait = util::Millis(0));

/// Runs req, made into its wire string (wire.h wire_form; a run id drawn when
/// it has none), on a new exec channel of the connected session `s` (no PTY)
/// and closes that channel before returning. Channel failures set ExecResult::error.
/// `ka` (nullable) is ticked while the command runs: a lost connection ends it
/// with KeepaliveWatch::tick()'s message as ExecResult::error.
ExecResult exec_channel(ssh_session s, const Target& t, const ExecRequest& req, KeepaliveWatch* ka = nullptr);

/// Whether `error` (exec_channel's, SessionShell::open's) says that sshd
/// would not open a session channel (its MaxSessions reached, for one):
/// nothing was sent.
bool channel_refused(const std::string& error);

}  // namespace ratchet::transport::ssh
