#pragma once
// Internal to the libssh backend: the process-wide pool of jump hop
// connections. Every target behind the same jump host rides on ONE connection
// to it (a direct-tcpip channel each on one session, as OpenSSH's
// ControlMaster does); hop k of a chain is shared too, keyed by the chain
// before it. A hop lives while a chain uses it: the last release stops its
// thread and frees its session (then its own channel on the hop before).
#include <libssh/libssh.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "transport/ssh_mux.h"
#include "transport/transport.h"

namespace ratchet::transport::ssh {

/// One connected hop: its session, served by a ChannelMux thread, and the hop
/// before it (whose channel carries it). Shared through std::shared_ptr; the
/// destructor, run by the last release, tears it down, last hop first.
class SharedHop {
 public:
  /// What a connector (acquire_hop) fills in as it goes: whatever is set is
  /// freed by the destructor, so a connector that fails leaves nothing behind.
  struct Parts {
    ssh_session session = nullptr;
    int fd = -1;                        ///< the socket it rides on (-1 for the first hop)
    std::shared_ptr<SharedHop> parent;  ///< the hop whose channel carries it; null for the first
    int parent_channel = 0;             ///< that channel's id on parent's mux
    std::string via;                    ///< "user@host:port" as connected
  };

  SharedHop() = default;
  ~SharedHop();
  SharedHop(const SharedHop&) = delete;
  SharedHop& operator=(const SharedHop&) = delete;

  /// The hop as connected, "user@host:port".
  const std::string& via() const { return parts_.via; }
  /// Opens a forwarded channel to host:port on this hop, waiting at most
  /// `timeout` (ChannelMux::open): the channel id (> 0) and *fd, or 0 and *err.
  int open_channel(const std::string& host, int port, std::chrono::milliseconds timeout, int* fd,
                   std::string* err);
  /// Closes a channel open_channel gave, once what rode on it was freed.
  void close_channel(int id);
  /// False once its connection died (or it never connected): the pool then
  /// hands out a new one.
  bool alive() const;

 private:
  friend std::shared_ptr<SharedHop> acquire_hop(
      const std::string&, const std::function<std::optional<ConnectError>(SharedHop::Parts*)>&,
      ConnectError*, bool*);
  enum class State { connecting, ready, failed };

  mutable std::mutex mu_;
  std::condition_variable cv_;
  State state_ = State::connecting;  ///< under mu_
  ConnectError error_;               ///< when failed: what every waiter gets
  Parts parts_;  ///< set once, by the connecting thread, before state_ leaves connecting
  std::unique_ptr<ChannelMux> mux_;  ///< once ready
};

/// The pooled hop for `key` (everything that determines the hop's session,
/// the chain before it included): the connected one when there is one alive,
/// or the one being connected (waits for that try); else a new one that
/// `connect` sets up here, on the calling thread, while later callers for the
/// same key wait. Sets *reused when the hop was not connected by this call.
/// On failure returns nullptr and sets *err: the connector's error, which
/// those that waited for the same try get too.
std::shared_ptr<SharedHop> acquire_hop(
    const std::string& key,
    const std::function<std::optional<ConnectError>(SharedHop::Parts*)>& connect, ConnectError* err,
    bool* reused);

}  // namespace ratchet::transport::ssh
