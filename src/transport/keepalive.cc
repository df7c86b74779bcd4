#include "transport/keepalive.h"

#include <fmt/format.h>
#include <libssh/server.h>  // ssh_send_keepalive: declared there, a client may send it too

namespace ratchet::transport::ssh {

KeepaliveWatch::KeepaliveWatch(ssh_session s, Keepalive spec, std::string where)
    : s_(s), spec_(spec), where_(std::move(where)), last_in_(Clock::now()) {
  spec_.count = std::max(1, spec_.count);
  ssh_set_counters(s_, &socket_, &packets_);
  seen_packets_ = packets_.in_packets;
}

KeepaliveWatch::~KeepaliveWatch() { ssh_set_counters(s_, nullptr, nullptr); }

namespace {

/// keepalive@openssh.com with want_reply, without waiting for the answer:
/// libssh 0.10's ssh_send_keepalive waits for it up to the session timeout
/// when the session blocks. libssh has one slot for a global request: a call
/// finds an answered one and only collects it, and one still pending is not
/// sent again; the second call sends after a collecting first.
void send_keepalive(ssh_session s) {
  ssh_set_blocking(s, 0);
  ssh_send_keepalive(s);
  ssh_send_keepalive(s);
  ssh_set_blocking(s, 1);
}

}  // namespace

std::string KeepaliveWatch::tick() {
  if (spec_.interval.count() <= 0) return "";
  const auto now = Clock::now();
  if (packets_.in_packets != seen_packets_) {  // the host spoke: it is there
    seen_packets_ = packets_.in_packets;
    last_in_ = now;
    sent_ = 0;
    return "";
  }
  // As ssh(1): a keepalive after each interval of silence; `count` intervals
  // after the first with nothing back, the connection is gone.
  if (now - last_in_ < spec_.interval * (sent_ + 1)) return "";
  if (sent_ >= spec_.count) {
    lost_ = true;
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - first_sent_).count();
    return fmt::format("{}: connection lost: no answer to keepalives for {:.1f}s (ServerAliveInterval {}s, "
                       "ServerAliveCountMax {})",
                       where_, double(waited) / 1000.0, double(spec_.interval.count()) / 1000.0, spec_.count);
  }
  if (sent_ == 0) first_sent_ = now;
  send_keepalive(s_);
  ++sent_;
  return "";
}

}  // namespace ratchet::transport::ssh
