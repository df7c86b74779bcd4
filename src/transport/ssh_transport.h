#pragma once
// Internal to the libssh backend (src/transport/ssh_*.cc): the one header that
// includes libssh. Everything else reaches it through transport.h.
#include <libssh/libssh.h>

#include <optional>
#include <string>

#include "transport/transport.h"

namespace ratchet::transport::ssh {

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
};

/// Checks the server's host key against the known_hosts files after ssh_connect:
/// OpenSSH's StrictHostKeyChecking=yes, or =accept-new when `accept_new` (a
/// first-seen key is appended to t.known_hosts). A changed key, or a key of
/// another type, always refuses. Sets *fingerprint to "SHA256:..." when known.
std::optional<ConnectError> verify_host_key(ssh_session s, const Target& t, bool accept_new,
                                            std::string* fingerprint);

/// Authenticates as t.user: "none", then the explicit `identity` file (if any),
/// then ssh_userauth_publickey_auto (agent, ssh config and default identities).
/// Sets *method to what succeeded ("publickey (FILE)", "publickey (agent or
/// default keys)", "none"); on failure lists the methods tried.
std::optional<ConnectError> authenticate(ssh_session s, const Target& t,
                                         const std::string& identity, std::string* method);

/// Runs req on a new exec channel of the connected session `s` (no PTY) and
/// closes that channel before returning. Channel failures set ExecResult::error.
ExecResult exec_channel(ssh_session s, const Target& t, const ExecRequest& req);

}  // namespace ratchet::transport::ssh
