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

  // Every hop resolved first (its ssh config), since a hop's channel goes to
  // the next hop's HostName:Port; the sessions are made again to connect.
  std::vector<Endpoint> eps;
  std::vector<Setup> setups;
  for (size_t i = 0; i < hops.size();) {
    Endpoint ep = hop_endpoint(target, hops[i]);
    ssh_session s = ssh_new();
    if (s == nullptr) return error(FailureKind::other, "via " + hops[i].host + ": ssh_new failed");
    Setup set;
    auto e = configure_session(s, ep, &set);
    free_session(s, -1);
    if (e) {
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
      hops.insert(hops.begin(), outer.begin(), outer.end());
      continue;  // configure the new first hop
    }
    eps.push_back(ep);
    setups.push_back(set);
    ++i;
  }

  // What makes hop i's session: the chain up to it, each hop as written and
  // as resolved, and the settings it is reached with.
  std::vector<std::string> keys;
  for (size_t i = 0; i < hops.size(); ++i) {
    const Target& t = setups[i].target;
    keys.push_back(fmt::format("{}{}|{}@{}:{}|{}|{}|{}|{}|{}\n", i ? keys.back() : "",
                               hop_text(hops[i]), t.user, t.host, t.port, target.identity,
                               target.known_hosts, target.ssh_config, target.accept_new,
                               target.connect_timeout.count()));
  }
  auto timeout = [&](size_t i) { return std::chrono::milliseconds(setups[i].timeout_s * 1000); };
  // A channel to host:port on hop i, or the error naming hop i.
  auto open_channel = [&](size_t i, const std::string& to_host, int to_port, int* id,
                          int* carried) -> std::optional<ConnectError> {
    std::string why;
    *id = hops_[i]->open_channel(to_host, to_port, timeout(i), carried, &why);
    if (*id > 0) return std::nullopt;
    const Target& t = setups[i].target;
    std::string hint =
        why.find("prohibited") != std::string::npos ? " (does the jump host allow TCP forwarding?)" : "";
    return error(channel_failure_kind(why),
                 fmt::format("{}{}: cannot open a channel to {} through it: {}{}",
                             via_prefix(hops[i], t), t.where,
                             hop_text(JumpHop{"", to_host, to_port}), why, hint));
  };

  for (int attempt = 0;; ++attempt) {
    std::vector<bool> reused;
    auto attach = [&]() -> std::optional<ConnectError> {
      for (size_t i = 0; i < hops.size(); ++i) {
        auto connect_hop = [&](SharedHop::Parts* p) -> std::optional<ConnectError> {
          p->session = ssh_new();
          if (p->session == nullptr)
            return error(FailureKind::other, "via " + hops[i].host + ": ssh_new failed");
          Setup set;
          if (auto e = configure_session(p->session, eps[i], &set)) {
            e->message = "via " + e->message;
            return e;
          }
          if (i > 0) {
            if (!set.proxy_command.empty())  // it rides on a channel, not on a command
              ssh_options_set(p->session, SSH_OPTIONS_PROXYCOMMAND, "none");
            p->parent = hops_[i - 1];
            if (auto e = open_channel(i - 1, set.target.host, set.target.port, &p->parent_channel,
                                      &p->fd))
              return e;
          }
          std::string fingerprint, method;
          if (auto e = open_session(p->session, eps[i], &set, &p->fd, &fingerprint, &method)) {
            e->message = via_prefix(hops[i], set.target) + e->message;
            return e;
          }
          p->via = hop_text(JumpHop{set.target.user, set.target.host, set.target.port});
          return std::nullopt;
        };
        ConnectError e;
        bool was_open = false;
        auto hop = acquire_hop(keys[i], connect_hop, &e, &was_open);
        if (!hop) return e;
        hops_.push_back(std::move(hop));
        reused.push_back(was_open);
        via_.push_back(hops_.back()->via());
      }
      return open_channel(hops.size() - 1, host, port, &channel_, fd);
    };
    auto e = attach();
    if (!e) {
      reused_ = reused.front();
      return e;
    }
    // A hop another chain connected may have died since: once, with a new connection.
    bool stale = false;
    for (size_t i = 0; i < reused.size(); ++i) stale = stale || (reused[i] && !hops_[i]->alive());
    close();
    if (!stale || attempt >= 1) return e;
  }
}

void JumpChain::close() {
  if (channel_ > 0 && !hops_.empty()) hops_.back()->close_channel(channel_);
  channel_ = 0;
  // Last hop first: hop k's session rides on hop k-1's channel, which must
  // still be carried while hop k says goodbye (~SharedHop, when the last chain lets go).
  while (!hops_.empty()) hops_.pop_back();
  via_.clear();
  reused_ = false;
}

}  // namespace ratchet::transport::ssh
