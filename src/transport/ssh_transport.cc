// The libssh session: options in OpenSSH's order, connect, failure causes, and
// one session per host for the whole run (a channel per command, ssh_exec.cc).
#include "transport/ssh_transport.h"

#include <fmt/format.h>
#include <netdb.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

namespace ratchet::transport {

namespace ssh {

std::string expand_home(const std::string& path) {
  if (path.empty() || path[0] != '~' || (path.size() > 1 && path[1] != '/')) return path;
  // Like ssh(1) (and libssh's %d): the passwd entry first, $HOME only without one.
  std::string home;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir && *pw->pw_dir)
    home = pw->pw_dir;
  else if (const char* h = std::getenv("HOME"))
    home = h;
  return home + path.substr(1);
}

}  // namespace ssh

namespace {

using Clock = std::chrono::steady_clock;

/// A string option read back from libssh (after config parsing), or "".
std::string get_option(ssh_session s, ssh_options_e opt) {
  char* value = nullptr;
  if (ssh_options_get(s, opt, &value) != SSH_OK || value == nullptr) return "";
  std::string out = value;
  ssh_string_free_char(value);
  return out;
}

/// Maps ssh_connect's failure to a cause. libssh 0.10 reports it only as text.
ConnectError classify_connect_failure(ssh_session s, const ssh::Target& t, long timeout_s) {
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
    if (getaddrinfo(t.host.c_str(), nullptr, nullptr, &res) != 0) {
      e.kind = FailureKind::dns;
      e.message = fmt::format("{}: cannot resolve host name {} ({})", t.where, t.host, why);
    } else {
      freeaddrinfo(res);
      e.message = fmt::format("{}: cannot connect: {}", t.where, why);
    }
  }
  return e;
}

class SshTransport final : public Transport {
 public:
  explicit SshTransport(Endpoint ep) : ep_(std::move(ep)) {}
  ~SshTransport() override { close(); }

  std::optional<ConnectError> connect(ConnectInfo* info) override;
  /// configure() only, then read back what libssh would use.
  std::optional<ConnectError> resolve(ResolvedEndpoint* out);
  ExecResult exec(const ExecRequest& req) override;
  void close() override;

 private:
  std::optional<ConnectError> configure();

  Endpoint ep_;
  ssh_session session_ = nullptr;
  bool connected_ = false;
  ssh::Target target_;
  long timeout_s_ = 10;
};

// Order matters (libssh 0.10): HOST, then the config file, then our overrides,
// because parsing a config overwrites options set before it.
std::optional<ConnectError> SshTransport::configure() {
  ssh_session s = session_;
  auto fail = [&](const std::string& what) {
    ConnectError e;
    e.message = fmt::format("{}: {}", ep_.name, what);
    return e;
  };
  if (ssh_options_set(s, SSH_OPTIONS_HOST, ep_.name.c_str()) != SSH_OK)
    return fail(fmt::format("invalid host name: {}", ssh_get_error(s)));
  if (ep_.ssh_config == "none") {
    bool process = false;  // or ssh_connect would read ~/.ssh/config itself
    ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &process);
  } else if (ep_.ssh_config.empty()) {
    // ~/.ssh/config, then /etc/ssh/ssh_config, as ssh(1) does without -F.
    if (ssh_options_parse_config(s, nullptr) != SSH_OK)
      return fail(fmt::format("cannot parse ssh config: {}", ssh_get_error(s)));
  } else {
    std::string path = ssh::expand_home(ep_.ssh_config);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)  // libssh silently skips a missing file; ssh -F does not
      return fail(fmt::format("ssh config {} not found; fix -F or the inventory", path));
    if (ssh_options_parse_config(s, path.c_str()) != SSH_OK)
      return fail(fmt::format("cannot parse ssh config {}: {}", path, ssh_get_error(s)));
  }
  if (!ep_.address.empty()) ssh_options_set(s, SSH_OPTIONS_HOST, ep_.address.c_str());
  if (ep_.port > 0) {
    int port = ep_.port;  // int*: libssh reads exactly an int
    ssh_options_set(s, SSH_OPTIONS_PORT, &port);
  }
  if (!ep_.user.empty())
    ssh_options_set(s, SSH_OPTIONS_USER, ep_.user.c_str());
  else if (get_option(s, SSH_OPTIONS_USER).empty())
    ssh_options_set(s, SSH_OPTIONS_USER, nullptr);  // NULL = the local user name
  if (!ep_.known_hosts.empty()) {
    // The named file is the whole trust store (as UserKnownHostsFile=FILE with
    // GlobalKnownHostsFile=/dev/null): a key in /etc/ssh/ssh_known_hosts must not
    // make a host "known" that the inventory's file does not list.
    std::string kh = ssh::expand_home(ep_.known_hosts);
    ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, kh.c_str());
    ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
  }
  long secs = std::max<long>(1, long((ep_.connect_timeout.count() + 999) / 1000));
  timeout_s_ = secs;
  ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &secs);  // long*: also bounds channel open/requests
  int one = 1;
  ssh_options_set(s, SSH_OPTIONS_NODELAY, &one);
  // A config's "StrictHostKeyChecking no" would make libssh report unknown keys
  // as known; we decide ourselves (verify_host_key), so always strict here.
  int strict = 1;
  ssh_options_set(s, SSH_OPTIONS_STRICTHOSTKEYCHECK, &strict);

  unsigned int port = 0;
  target_.host = get_option(s, SSH_OPTIONS_HOST);
  target_.port = (ssh_options_get_port(s, &port) == SSH_OK && port > 0) ? int(port) : 22;
  target_.user = get_option(s, SSH_OPTIONS_USER);
  target_.where = fmt::format("{}:{}", target_.host, target_.port);
  return std::nullopt;
}

std::optional<ConnectError> SshTransport::connect(ConnectInfo* info) {
  close();
  const auto start = Clock::now();
  session_ = ssh_new();
  if (session_ == nullptr)
    return ConnectError{FailureKind::other, ep_.name + ": ssh_new failed", {}};
  if (auto err = configure()) return err;
  if (ssh_connect(session_) != SSH_OK)
    return classify_connect_failure(session_, target_, timeout_s_);
  target_.known_hosts = get_option(session_, SSH_OPTIONS_KNOWNHOSTS);
  std::string fingerprint, method;
  if (auto err = ssh::verify_host_key(session_, target_, ep_.accept_new, &fingerprint)) return err;
  if (auto err = ssh::authenticate(session_, target_, ssh::expand_home(ep_.identity), &method))
    return err;
  connected_ = true;
  if (info) {
    info->address = target_.host;
    info->port = target_.port;
    info->user = target_.user;
    info->fingerprint = fingerprint;
    info->auth_method = method;
    info->ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  }
  return std::nullopt;
}

ExecResult SshTransport::exec(const ExecRequest& req) {
  if (!connected_ || session_ == nullptr) {
    ExecResult r;
    r.error = fmt::format("{}: not connected", target_.where.empty() ? ep_.name : target_.where);
    return r;
  }
  return ssh::exec_channel(session_, target_, req);
}

void SshTransport::close() {
  if (session_ == nullptr) return;
  // Channels never outlive this: exec_channel frees each before returning, and
  // ssh_free releases any a remote close has not yet collected.
  ssh_disconnect(session_);  // safe when the socket never opened
  ssh_free(session_);
  session_ = nullptr;
  connected_ = false;
}

}  // namespace

std::optional<ConnectError> SshTransport::resolve(ResolvedEndpoint* out) {
  close();
  session_ = ssh_new();
  if (session_ == nullptr) return ConnectError{FailureKind::other, ep_.name + ": ssh_new failed", {}};
  if (auto err = configure()) return err;
  out->address = target_.host;
  out->port = target_.port;
  out->user = target_.user;
  out->identity = ep_.identity;
  if (out->identity.empty()) {
    std::string first = get_option(session_, SSH_OPTIONS_IDENTITY);
    if (first.rfind("%d/", 0) != 0) out->identity = first;  // "%d/id_*": libssh's defaults
  }
  out->proxy = get_option(session_, SSH_OPTIONS_PROXYCOMMAND);
  close();
  return std::nullopt;
}

std::optional<ConnectError> resolve_endpoint(const Endpoint& ep, ResolvedEndpoint* out) {
  SshTransport t(ep);
  return t.resolve(out);
}

std::unique_ptr<Transport> make_ssh_transport(const Endpoint& ep) {
  return std::make_unique<SshTransport>(ep);
}

}  // namespace ratchet::transport
