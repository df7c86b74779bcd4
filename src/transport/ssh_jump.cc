// Jump hosts: hop sessions configured like the target, chained through
// forwarded channels. Every hop is configured (ssh config applied to its own
// name) before any connects, because a hop's channel goes to the next hop's
// HostName:Port as that hop's config resolves it.
#include "transport/ssh_jump.h"

#include <fmt/format.h>

#include "transport/jump_spec.h"
#include "transport/ssh_transport.h"

namespace ratchet::transport::ssh {

namespace {

/// A hop reached with the target's settings: same known_hosts, accept-new,
/// identity file (tried first), ssh config and connect timeout. The config is
/// matched on the hop's own name, so its own Host block's IdentitiesOnly and
/// IdentityFile apply (configure_session), not the target's.
Endpoint hop_endpoint(const Endpoint& target, const JumpHop& hop) {
  Endpoint ep;
  ep.name = hop.host;
  ep.port = hop.port;
  ep.user = hop.user;
  ep.identity = target.identity;
  ep.known_hosts = target.known_hosts;
  ep.ssh_config = target.ssh_config;
  ep.accept_new = target.accept_new;
  ep.connect_timeout = target.connect_timeout;
  return ep;  // jump "": the hop's own ProxyJump (followed for the first hop only)
}

/// "via bastion " before a hop's own message (which begins with host:port), or
/// just "via " when the hop was written as the address it resolved to.
std::string via_prefix(const JumpHop& hop, const Target& t) {
  return hop.host == t.host ? "via " : fmt::format("via {} ", hop.host);
}

/// The far sshd's reason for refusing a direct-tcpip channel, as a cause.
FailureKind channel_failure_kind(const std::string& why) {
  auto has = [&](const char* needle) { return why.find(needle) != std::string::npos; };
  if (has("refused")) return FailureKind::refused;
  if (has("timed out") || has("Timeout") || has("timeout")) return FailureKind::timeout;
  if (has("not known") || has("resolve") || has("Name or service") || has("No address"))
    return FailureKind::dns;
  return FailureKind::other;
}

ConnectError error(FailureKind kind, std::string message) {
  return ConnectError{kind, std::move(message), {}};
}

}  // namespace

std::optional<ConnectError> JumpChain::connect(const Endpoint& target, const std::string& spec,
                                               const std::string& host, int port, int* fd) {
  close();
  std::vector<JumpHop> hops;
  std::string err;
  if (!parse_jump_spec(spec, &hops, &err)) return error(FailureKind::other, "jump " + err);
  if (hops.empty()) return error(FailureKind::other, fmt::format("jump `{}`: no hops", spec));

  std::vector<Endpoint> eps;
  std::vector<Setup> setups;
  for (size_t i = 0; i < hops.size();) {
    Endpoint ep = hop_endpoint(target, hops[i]);
    ssh_session s = ssh_new();
    if (s == nullptr) return error(FailureKind::other, "via " + hops[i].host + ": ssh_new failed");
    hops_.push_back(Hop{s});
    Setup set;
    if (auto e = configure_session(s, ep, &set)) {
      e->message = "via " + e->message;
      return e;
    }
    std::vector<JumpHop> outer;
    if (i == 0 && !set.jump.empty()) {
      // (configure_session dropped entries that name the hop itself)
      if (!parse_jump_spec(set.jump, &outer, &err))
        return error(FailureKind::other, fmt::format("via {}: jump {}", hops[0].host, err));
    }
    if (!outer.empty()) {
      // The first hop has a ProxyJump of its own: go there first (ssh -J does).
      if (hops.size() + outer.size() > kMaxJumpHops)
        return error(FailureKind::other,
                     fmt::format("via {}: more than {} jump hops (a ProxyJump loop in the ssh "
                                 "config? write ProxyJump none for the jump host)",
                                 hops[0].host, kMaxJumpHops));
      free_session(s, -1);
      hops_.pop_back();
      hops.insert(hops.begin(), outer.begin(), outer.end());
      continue;  // configure the new first hop
    }
    if (i > 0 && !set.proxy_command.empty())  // it rides on a channel, not on a command
      ssh_options_set(s, SSH_OPTIONS_PROXYCOMMAND, "none");
    eps.push_back(ep);
    setups.push_back(set);
    ++i;
  }

  int carried = -1;  // the socket the next session rides on
  for (size_t i = 0; i < hops.size(); ++i) {
    hops_[i].fd = carried;  // freed with the hop from now on
    carried = -1;
    std::string fingerprint, method;
    if (auto e = open_session(hops_[i].session, eps[i], &setups[i], &hops_[i].fd, &fingerprint,
                              &method)) {
      e->message = via_prefix(hops[i], setups[i].target) + e->message;
      return e;
    }
    const Target& t = setups[i].target;
    via_.push_back(hop_text(JumpHop{t.user, t.host, t.port}));
    const bool last = i + 1 == hops.size();
    const std::string& next_host = last ? host : setups[i + 1].target.host;
    const int next_port = last ? port : setups[i + 1].target.port;
    std::string why;
    hops_[i].pump = ChannelPump::open(hops_[i].session, next_host, next_port, &carried, &why);
    if (!hops_[i].pump) {
      FailureKind kind = channel_failure_kind(why);
      std::string hint = why.find("prohibited") != std::string::npos
                             ? " (does the jump host allow TCP forwarding?)"
                             : "";
      return error(kind, fmt::format("{}{}: cannot open a channel to {} through it: {}{}",
                                     via_prefix(hops[i], t), t.where,
                                     hop_text(JumpHop{"", next_host, next_port}), why, hint));
    }
  }
  *fd = carried;
  return std::nullopt;
}

void JumpChain::close() {
  // Last hop first: hop k's session rides on hop k-1's pump, which must still
  // run while hop k says goodbye.
  for (auto it = hops_.rbegin(); it != hops_.rend(); ++it) {
    if (it->pump) it->pump->stop();
    it->pump.reset();
    free_session(it->session, it->fd);
  }
  hops_.clear();
  via_.clear();
}

}  // namespace ratchet::transport::ssh
