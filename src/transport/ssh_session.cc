// One libssh session from an Endpoint: options in OpenSSH's order, the jump
// it needs, connect (over TCP, a user's ProxyCommand, or a socket handed in),
// failure causes, host key, authentication. Used for targets and jump hops alike.
#include <fmt/format.h>
#include <netdb.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "transport/jump_spec.h"
#include "transport/ssh_config_scan.h"
#include "transport/ssh_transport.h"

namespace ratchet::transport::ssh {

namespace {

/// Maps ssh_connect's failure to a cause. libssh 0.10 reports it only as text.
/// `over_fd`: the session rode a socket handed in (a jump), so the local
/// resolver has nothing to say about the host name.
ConnectError classify_connect_failure(ssh_session s, const Target& t, long timeout_s,
                                      bool over_fd) {
  std::string why = ssh_get_error(s);
  ConnectError e;
  auto has = [&](const char* needle) { return why.find(needle) != std::string::npos; };
  if (has("resolve hostname")) {
    e.kind = FailureKind::dns;
    e.message = fmt::format(
        "{}: cannot resolve host name {} ({}); check the inventory "
        "address or the ssh config HostName",
        t.where, t.host, why);
  } else if (has("refused")) {
    e.kind = FailureKind::refused;
    e.message = fmt::format("{}: connection refused; is sshd running and listening on port {}?",
                            t.where, t.port);
  } else if (has("Timeout") || has("timed out") || has("timeout")) {
    e.kind = FailureKind::timeout;
    e.message = fmt::format(
        "{}: no SSH answer within {}s ({}); check the address, port and "
        "firewall, or raise the connect timeout",
        t.where, timeout_s, why);
  } else {
    // getaddrinfo again: some resolver failures surface with other wording.
    addrinfo* res = nullptr;
    if (!over_fd && getaddrinfo(t.host.c_str(), nullptr, nullptr, &res) != 0) {
      e.kind = FailureKind::dns;
      e.message = fmt::format("{}: cannot resolve host name {} ({})", t.where, t.host, why);
    } else {
      if (res) freeaddrinfo(res);
      e.message = fmt::format("{}: cannot connect: {}", t.where, why);
    }
  }
  return e;
}

/// The agent socket IdentityAgent names (ssh_config(5)): "none" = no agent,
/// "SSH_AUTH_SOCK" or "$VAR" = that variable, else a path (tokens expanded);
/// not set = $SSH_AUTH_SOCK.
std::string agent_socket(const std::string& identity_agent, const IdentityPathContext& ctx) {
  auto env = [](const std::string& name) {
    const char* v = std::getenv(name.c_str());
    return std::string(v ? v : "");
  };
  if (identity_agent.empty() || identity_agent == "SSH_AUTH_SOCK") return env("SSH_AUTH_SOCK");
  if (strcasecmp(identity_agent.c_str(), "none") == 0) return "";
  if (identity_agent[0] == '$' && identity_agent.size() > 1 && identity_agent[1] != '{')
    return env(identity_agent.substr(1));
  return expand_identity_path(identity_agent, ctx);
}

/// Fills *keys for `ep` reaching `t`: the inventory identity, then what the ssh
/// config says (scan_identity_options), IdentityFile tokens expanded with the
/// values the session will use (ssh(1) expands them after the whole config).
std::optional<std::string> plan_keys(const Endpoint& ep, const Target& t, KeyPlan* keys) {
  IdentityOptions io;
  SshConfigQuery q;
  q.host = ep.name;
  q.user = ep.user;
  if (auto err = scan_identity_options(ssh_config_files(ep.ssh_config), q, &io))
    return fmt::format("ssh config {}", *err);
  IdentityPathContext ctx;
  ctx.home = user_home();
  ctx.local_user = local_user_name();
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) ctx.local_host = host;
  ctx.remote_host = t.host;
  ctx.original_host = ep.name;
  ctx.remote_user = t.user;
  ctx.port = t.port;
  ctx.uid = ::getuid();
  *keys = KeyPlan{};
  keys->identity = expand_home(ep.identity);
  keys->identities_only = io.identities_only;
  for (const auto& raw : io.identity_files) {
    std::string path = expand_identity_path(raw, ctx);
    if (path != keys->identity &&
        std::find(keys->config_files.begin(), keys->config_files.end(), path) ==
            keys->config_files.end())
      keys->config_files.push_back(path);
  }
  keys->agent_socket = agent_socket(io.identity_agent, ctx);
  keys->assumed = io.assumed;
  return std::nullopt;
}

}  // namespace

std::string get_option(ssh_session s, ssh_options_e opt) {
  char* value = nullptr;
  if (ssh_options_get(s, opt, &value) != SSH_OK || value == nullptr) return "";
  std::string out = value;
  ssh_string_free_char(value);
  return out;
}

// Order matters (libssh 0.10): HOST, then the config file, then our overrides,
// because parsing a config overwrites options set before it.
std::optional<ConnectError> configure_session(ssh_session s, const Endpoint& ep, Setup* out) {
  auto fail = [&](const std::string& what) {
    ConnectError e;
    e.message = fmt::format("{}: {}", ep.name, what);
    return e;
  };
  if (ssh_options_set(s, SSH_OPTIONS_HOST, ep.name.c_str()) != SSH_OK)
    return fail(fmt::format("invalid host name: {}", ssh_get_error(s)));
  if (ep.ssh_config == "none") {
    bool process = false;  // or ssh_connect would read ~/.ssh/config itself
    ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &process);
  } else if (ep.ssh_config.empty()) {
    // ~/.ssh/config, then /etc/ssh/ssh_config, as ssh(1) does without -F.
    if (ssh_options_parse_config(s, nullptr) != SSH_OK)
      return fail(fmt::format("cannot parse ssh config: {}", ssh_get_error(s)));
  } else {
    std::string path = expand_home(ep.ssh_config);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)  // libssh silently skips a missing file; ssh -F does not
      return fail(fmt::format("ssh config {} not found; fix -F or the inventory", path));
    if (ssh_options_parse_config(s, path.c_str()) != SSH_OK)
      return fail(fmt::format("cannot parse ssh config {}: {}", path, ssh_get_error(s)));
  }
  // A rejected address must never fall back to the name: that is another host.
  if (!ep.address.empty() && ssh_options_set(s, SSH_OPTIONS_HOST, ep.address.c_str()) != SSH_OK)
    return fail(fmt::format("invalid address `{}`: {}", ep.address, ssh_get_error(s)));
  if (ep.port > 0) {
    int port = ep.port;  // int*: libssh reads exactly an int
    ssh_options_set(s, SSH_OPTIONS_PORT, &port);
  }
  if (!ep.user.empty())
    ssh_options_set(s, SSH_OPTIONS_USER, ep.user.c_str());
  else if (get_option(s, SSH_OPTIONS_USER).empty())
    ssh_options_set(s, SSH_OPTIONS_USER, nullptr);  // NULL = the local user name
  if (!ep.known_hosts.empty()) {
    // The named file is the whole trust store (as UserKnownHostsFile=FILE with
    // GlobalKnownHostsFile=/dev/null): a key in /etc/ssh/ssh_known_hosts must not
    // make a host "known" that the inventory's file does not list.
    std::string kh = expand_home(ep.known_hosts);
    ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, kh.c_str());
    ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
  }
  long secs = std::max<long>(1, long((ep.connect_timeout.count() + 999) / 1000));
  out->timeout_s = secs;
  ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &secs);  // long*: also bounds channel open/requests
  int one = 1;
  ssh_options_set(s, SSH_OPTIONS_NODELAY, &one);
  // A config's "StrictHostKeyChecking no" would make libssh report unknown keys
  // as known; we decide ourselves (verify_host_key), so always strict here.
  int strict = 1;
  ssh_options_set(s, SSH_OPTIONS_STRICTHOSTKEYCHECK, &strict);

  unsigned int port = 0;
  Target& t = out->target;
  t.host = get_option(s, SSH_OPTIONS_HOST);
  t.port = (ssh_options_get_port(s, &port) == SSH_OK && port > 0) ? int(port) : 22;
  t.user = get_option(s, SSH_OPTIONS_USER);
  t.where = fmt::format("{}:{}", t.host, t.port);

  // What libssh 0.10 ignores or hides: IdentitiesOnly, the IdentityFile list,
  // IdentityAgent. Read with OpenSSH's rules for this host's own name.
  if (auto err = plan_keys(ep, t, &out->keys)) return fail(*err);

  // Jumps: libssh 0.10 has already turned a config ProxyJump into an `ssh -W`
  // ProxyCommand (which would ignore our known_hosts, identity and timeout).
  // Take the jump back out of it; the inventory's `jump` wins over the config.
  std::string proxy = get_option(s, SSH_OPTIONS_PROXYCOMMAND);
  std::optional<std::string> config_jump;
  if (!proxy.empty()) config_jump = jump_from_proxy_command(proxy);
  out->jump.clear();
  out->proxy_command.clear();
  if (!ep.jump.empty() || config_jump) {
    if (!proxy.empty()) ssh_options_set(s, SSH_OPTIONS_PROXYCOMMAND, "none");  // "none" clears it
  } else {
    out->proxy_command = proxy;  // the user's own ProxyCommand: libssh runs it
  }
  std::string spec = !ep.jump.empty() ? ep.jump : config_jump.value_or("");
  std::vector<JumpHop> hops;
  std::string err;
  if (!spec.empty() && !parse_jump_spec(spec, &hops, &err))
    return fail(fmt::format("jump {}", err));
  if (ep.jump.empty()) {
    // A host never jumps through itself: a `Host *` ProxyJump also matches the
    // jump host it names, and there it means "reach it directly".
    std::erase_if(hops, [&](const JumpHop& h) {
      return (h.host == ep.name || h.host == t.host) && (h.port == 0 || h.port == t.port);
    });
  }
  for (const auto& h : hops) out->jump += (out->jump.empty() ? "" : ",") + hop_text(h);
  return std::nullopt;
}

std::optional<ConnectError> open_session(ssh_session s, const Endpoint& ep, Setup* setup, int* fd,
                                         std::string* fingerprint, std::string* method) {
  const bool over_fd = *fd >= 0;
  if (over_fd) {
    int sock = *fd;  // socket_t*: an int on POSIX
    ssh_options_set(s, SSH_OPTIONS_FD, &sock);
  }
  if (ssh_connect(s) != SSH_OK) {
    std::string why = ssh_get_error(s);
    if (over_fd && ssh_get_fd(s) != *fd &&
        (why == "Couldn't apply options" || why == "Hostname required" ||
         why.rfind("Failed to process", 0) == 0)) {
      // ssh_connect takes the socket only after applying its options; it
      // failed before that (nothing else comes first): close it here.
      ::close(*fd);
      *fd = -1;
    }
    return classify_connect_failure(s, setup->target, setup->timeout_s, over_fd);
  }
  setup->target.known_hosts = get_option(s, SSH_OPTIONS_KNOWNHOSTS);
  if (auto err = verify_host_key(s, setup->target, ep.accept_new, fingerprint)) return err;
  return authenticate(s, setup->target, setup->keys, method);
}

void free_session(ssh_session s, int fd) {
  if (s == nullptr) return;
  // libssh closes a socket of ours only through ssh_socket_close, which also
  // forgets it: still its fd = still open.
  const bool still_open = fd >= 0 && ssh_get_fd(s) == fd;
  ssh_disconnect(s);  // safe when the socket never opened
  ssh_free(s);
  if (still_open) ::close(fd);
}

}  // namespace ratchet::transport::ssh
