// One libssh session from an Endpoint: options in OpenSSH's order, the jump
// it needs, connect (over TCP, a user's ProxyCommand, or a socket handed in),
// failure causes, host key, authentication. Used for targets and jump hops alike.
#include <fmt/format.h>
#include <netdb.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "transport/jump_spec.h"
#include "transport/ssh_config_scan.h"
#include "transport/ssh_transport.h"

namespace ratchet::transport::ssh {

namespace {

/// Maps ssh_connect's failure to a cause. libssh 0.10 reports it only as text.
/// `over_fd`: the session rode a socket handed in (a jump), so the local
/// resolver has nothing to say about the host name.
/// `config_hostkeys`: the ssh config's HostKeyAlgorithms as applied ("" = not set).
ConnectError classify_connect_failure(ssh_session s, const Target& t, long timeout_s,
                                      bool over_fd, const std::string& config_hostkeys) {
  std::string why = ssh_get_error(s);
  ConnectError e;
  auto has = [&](const char* needle) { return why.find(needle) != std::string::npos; };
  // libssh: "kex error : no match for method server host key algo: server [A], client [B]".
  auto bracket = [&](const char* label) {
    size_t at = why.find(label);
    if (at == std::string::npos) return std::string();
    at += std::string_view(label).size();
    size_t end = why.find(']', at);
    return end == std::string::npos ? std::string() : why.substr(at, end - at);
  };
  if (has("no match for method server host key algo")) {
    e.kind = FailureKind::other;
    e.message = config_hostkeys.empty()
                    ? fmt::format("{}: no host key algorithm in common: the server offers {}, "
                                  "ratchet allows {}",
                                  t.where, bracket("server ["), bracket("client ["))
                    : fmt::format("{}: no host key algorithm in common: the server offers {}, the "
                                  "ssh config's HostKeyAlgorithms allows {}; fix HostKeyAlgorithms",
                                  t.where, bracket("server ["), bracket("client ["));
  } else if (has("resolve hostname")) {
    e.kind = FailureKind::dns;
    e.message = fmt::format(
        "{}: cannot resolve host name {} ({}); check the inventory "
        "address or the ssh config HostName",
        t.where, t.host, why);
  } else if (has("reset by peer") || has("Socket error: disconnected") || has("Connection closed") ||
             has("Remote host closed") || has("kex_exchange_identification")) {
    // sshd drops unauthenticated connections past MaxStartups (and a jump
    // host's sshd those it forwards): the next try may well get in.
    e.kind = FailureKind::other;
    e.reset_before_auth = true;
    e.message = fmt::format("{}: the server closed the connection before authentication ({}): sshd's "
                            "MaxStartups, or too many connections at once; lower --forks or raise MaxStartups",
                            t.where, why);
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

/// The values IdentityFile (and IdentityAgent, UserKnownHostsFile) tokens
/// stand for when `ep` reaches `t` through host argument `host_arg`.
IdentityPathContext path_context(const std::string& host_arg, const Target& t) {
  IdentityPathContext ctx;
  ctx.home = user_home();
  ctx.local_user = local_user_name();
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) ctx.local_host = host;
  ctx.remote_host = t.host;
  ctx.original_host = host_arg;
  ctx.remote_user = t.user;
  ctx.port = t.port;
  ctx.uid = ::getuid();
  return ctx;
}

/// Fills *keys for `ep` reaching `t`: the inventory identity, then what the ssh
/// config says, IdentityFile tokens expanded with the values the session will
/// use (ssh(1) expands them after the whole config).
void plan_keys(const Endpoint& ep, const IdentityOptions& io, const IdentityPathContext& ctx,
               KeyPlan* keys) {
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
}

}  // namespace

std::string get_option(ssh_session s, ssh_options_e opt) {
  char* value = nullptr;
  if (ssh_options_get(s, opt, &value) != SSH_OK || value == nullptr) return "";
  std::string out = value;
  ssh_string_free_char(value);
  return out;
}

static std::string util_lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string host_argument(const Endpoint& ep) {
  return ep.address.empty() ? ep.name : ep.address;
}

// ratchet reads the ssh config itself (ssh_config_scan.h), for the host
// argument ssh(1) would be given, and sets libssh's options from it; libssh
// never parses a config (its matching differs from OpenSSH's). The inventory's
// port, user, identity and jump win over the config.
std::optional<ConnectError> configure_session(ssh_session s, const Endpoint& ep, Setup* out) {
  auto fail = [&](const std::string& what) {
    ConnectError e;
    e.message = fmt::format("{}: {}", ep.name, what);
    return e;
  };
  const std::string host_arg = host_argument(ep);
  // The name must be one libssh takes as a host, even when only a label (an
  // address is given): a name holding shell syntax is refused before anything runs.
  if (ssh_options_set(s, SSH_OPTIONS_HOST, ep.name.c_str()) != SSH_OK)
    return fail(fmt::format("invalid host name: {}", ssh_get_error(s)));
  bool process = false;  // or ssh_connect would read ~/.ssh/config itself
  ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &process);
  if (!ep.ssh_config.empty() && ep.ssh_config != "none") {
    std::string path = expand_home(ep.ssh_config);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)  // ssh -F refuses a missing file
      return fail(fmt::format("ssh config {} not found; fix -F or the inventory", path));
  }
  SshConfigQuery q;
  q.host = host_arg;
  q.user = ep.user;
  SshHostConfig cfg;
  if (auto err = scan_ssh_config(ssh_config_files(ep.ssh_config), q, &cfg))
    return fail(fmt::format("ssh config {}", *err));
  out->config = cfg;

  // A rejected address must never fall back to the name: that is another host.
  // ('@' would make libssh read a user out of it.)
  if (cfg.hostname.empty() || cfg.hostname.find('@') != std::string::npos ||
      ssh_options_set(s, SSH_OPTIONS_HOST, cfg.hostname.c_str()) != SSH_OK) {
    std::string why = ssh_get_error(s);
    if (cfg.hostname != host_arg || !ep.address.empty())
      return fail(fmt::format("invalid address `{}`{}{}", cfg.hostname, why.empty() ? "" : ": ", why));
    return fail(fmt::format("invalid host name{}{}", why.empty() ? "" : ": ", why));
  }
  int port = ep.port > 0 ? ep.port : (cfg.port > 0 ? cfg.port : 22);  // int*: libssh reads an int
  ssh_options_set(s, SSH_OPTIONS_PORT, &port);
  const std::string& user = !ep.user.empty() ? ep.user : cfg.user;
  ssh_options_set(s, SSH_OPTIONS_USER, user.empty() ? nullptr : user.c_str());  // NULL = the local user

  unsigned int got_port = 0;
  Target& t = out->target;
  t = Target{};
  t.host = get_option(s, SSH_OPTIONS_HOST);
  t.port = (ssh_options_get_port(s, &got_port) == SSH_OK && got_port > 0) ? int(got_port) : 22;
  t.user = get_option(s, SSH_OPTIONS_USER);
  t.where = fmt::format("{}:{}", t.host, t.port);
  t.hash_known_hosts = cfg.hash_known_hosts.value_or(false);
  const IdentityPathContext ctx = path_context(host_arg, t);
  out->host_key_algorithms.clear();
  std::string accepted;  // PubkeyAcceptedAlgorithms as applied ("" = libssh's default)

  if (!ep.known_hosts.empty()) {
    // The named file is the whole trust store (as UserKnownHostsFile=FILE with
    // GlobalKnownHostsFile=/dev/null): a key in /etc/ssh/ssh_known_hosts must not
    // make a host "known" that the inventory's file does not list.
    std::string kh = expand_home(ep.known_hosts);
    ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, kh.c_str());
    ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
  } else {
    // The config's UserKnownHostsFile (its first file: libssh reads one) and GlobalKnownHostsFile.
    if (!cfg.user_known_hosts_files.empty()) {
      std::string kh = expand_identity_path(cfg.user_known_hosts_files.front(), ctx);
      ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, kh.c_str());
    }
    if (!cfg.global_known_hosts_file.empty()) {
      std::string kh = expand_identity_path(cfg.global_known_hosts_file, ctx);
      ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, kh.c_str());
    }
  }
  // Algorithm lists, "+", "-" and "^" applied to OpenSSH's defaults (libssh
  // 0.10 takes none of them), then what libssh does not know left out by it.
  struct Algo {
    const std::string& value;
    const char* keyword;
    std::vector<ssh_options_e> opts;
  };
  for (const Algo& a : {Algo{cfg.host_key_algorithms, "HostKeyAlgorithms", {SSH_OPTIONS_HOSTKEYS}},
                        Algo{cfg.pubkey_accepted_algorithms, "PubkeyAcceptedAlgorithms",
                             {SSH_OPTIONS_PUBLICKEY_ACCEPTED_TYPES}},
                        Algo{cfg.ciphers, "Ciphers", {SSH_OPTIONS_CIPHERS_C_S, SSH_OPTIONS_CIPHERS_S_C}},
                        Algo{cfg.kex_algorithms, "KexAlgorithms", {SSH_OPTIONS_KEY_EXCHANGE}},
                        Algo{cfg.macs, "MACs", {SSH_OPTIONS_HMAC_C_S, SSH_OPTIONS_HMAC_S_C}}}) {
    if (a.value.empty()) continue;
    std::string list =
        apply_algorithm_list(a.value, openssh_default_algorithms(util_lower(a.keyword)));
    for (auto opt : a.opts)
      if (ssh_options_set(s, opt, list.c_str()) != SSH_OK)
        return fail(fmt::format("ssh config {} {}: {}", a.keyword, a.value, ssh_get_error(s)));
    if (a.opts.front() == SSH_OPTIONS_HOSTKEYS) out->host_key_algorithms = list;
    if (a.opts.front() == SSH_OPTIONS_PUBLICKEY_ACCEPTED_TYPES) accepted = list;
  }
  if (cfg.compression) ssh_options_set(s, SSH_OPTIONS_COMPRESSION, *cfg.compression ? "yes" : "no");
  long secs = std::max<long>(1, long((ep.connect_timeout.count() + 999) / 1000));
  out->timeout_s = secs;
  ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &secs);  // long*: also bounds channel open/requests
  int one = 1;
  ssh_options_set(s, SSH_OPTIONS_NODELAY, &one);
  out->keepalive = ep.keepalive;
  if (out->keepalive.interval.count() <= 0 && cfg.server_alive_interval_s.value_or(0) > 0) {
    out->keepalive.interval = util::Millis(1000LL * *cfg.server_alive_interval_s);
    out->keepalive.count = std::max(1, cfg.server_alive_count_max.value_or(3));
  }
  // We decide about host keys ourselves (verify_host_key), so always strict here.
  int strict = 1;
  ssh_options_set(s, SSH_OPTIONS_STRICTHOSTKEYCHECK, &strict);

  plan_keys(ep, cfg.identity, ctx, &out->keys);
  out->keys.accepted_algorithms = accepted;
  // For ssh_userauth_publickey_auto: the config's files before libssh's
  // defaults, in the config's order (libssh puts each one added first).
  for (auto it = out->keys.config_files.rbegin(); it != out->keys.config_files.rend(); ++it)
    ssh_options_set(s, SSH_OPTIONS_ADD_IDENTITY, it->c_str());

  // Jumps: the inventory's `jump` wins over the config's ProxyJump; a jump
  // replaces any ProxyCommand. "none" in either place means direct.
  auto is_none = [](const std::string& v) { return strcasecmp(v.c_str(), "none") == 0; };
  out->jump.clear();
  out->proxy_command.clear();
  std::string spec = !ep.jump.empty() ? ep.jump : cfg.proxy_jump;
  if (ep.jump.empty() && spec.empty() && !cfg.proxy_command.empty() && !is_none(cfg.proxy_command)) {
    out->proxy_command = cfg.proxy_command;  // the user's own ProxyCommand: libssh runs it
    ssh_options_set(s, SSH_OPTIONS_PROXYCOMMAND, cfg.proxy_command.c_str());
  }
  std::vector<JumpHop> hops;
  std::string err;
  if (!spec.empty() && !parse_jump_spec(spec, &hops, &err))
    return fail(fmt::format("jump {}", err));
  if (ep.jump.empty()) {
    // A host never jumps through itself: a `Host *` ProxyJump also matches the
    // jump host it names, and there it means "reach it directly" (ssh(1)
    // refuses such a config: "jumphost loop").
    std::erase_if(hops, [&](const JumpHop& h) {
      return (h.host == ep.name || h.host == host_arg || h.host == t.host) &&
             (h.port == 0 || h.port == t.port);
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
    return classify_connect_failure(s, setup->target, setup->timeout_s, over_fd,
                                    setup->host_key_algorithms);
  }
  setup->target.known_hosts = get_option(s, SSH_OPTIONS_KNOWNHOSTS);
  if (auto err = verify_host_key(s, setup->target, ep.accept_new, fingerprint, ep.pinned_keys)) return err;
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
