// The pool: key -> weak reference to the hop, so a hop lives exactly as long
// as the chains that use it. A hop is connected outside the pool's lock (it
// takes a connect timeout or more); those who ask for the same key meanwhile
// wait on the hop itself. A hop that failed or died stays in the map only
// until the next acquire replaces it.
#include "transport/ssh_jump_pool.h"

#include <map>
#include <vector>

#include "transport/ssh_transport.h"

namespace ratchet::transport::ssh {

namespace {

struct Pool {
  std::mutex mu;
  std::map<std::string, std::weak_ptr<SharedHop>> hops;
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: hops may be released during exit
  return *p;
}

}  // namespace

SharedHop::~SharedHop() {
  if (mux_) mux_->stop();  // joins the thread and frees its channels
  mux_.reset();
  // Its goodbye rides on the parent's channel, whose thread still runs.
  free_session(parts_.session, parts_.fd);
  if (parts_.parent && parts_.parent_channel > 0)
    parts_.parent->close_channel(parts_.parent_channel);
  parts_.parent.reset();  // may free the hop before, and so on down the chain
}

int SharedHop::open_channel(const std::string& host, int port, std::chrono::milliseconds timeout,
                            int* fd, std::string* err) {
  if (!mux_) {
    *err = "the connection is gone";
    return 0;
  }
  return mux_->open(host, port, timeout, fd, err);
}

void SharedHop::close_channel(int id) {
  if (mux_) mux_->close(id);
}

bool SharedHop::alive() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_ == State::connecting || (state_ == State::ready && mux_ && mux_->alive());
}

std::shared_ptr<SharedHop> acquire_hop(
    const std::string& key,
    const std::function<std::optional<ConnectError>(SharedHop::Parts*)>& connect, ConnectError* err,
    bool* reused) {
  *reused = false;
  std::shared_ptr<SharedHop> hop, stale;
  bool mine = false;
  {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mu);
    std::erase_if(p.hops, [](const auto& kv) { return kv.second.expired(); });
    auto it = p.hops.find(key);
    if (it != p.hops.end()) hop = it->second.lock();
    if (hop && !hop->alive()) stale = std::move(hop);  // freed below, outside the lock
    if (!hop) {
      hop = std::make_shared<SharedHop>();
      p.hops[key] = hop;
      mine = true;
    }
  }
  stale.reset();

  if (!mine) {
    std::unique_lock<std::mutex> lock(hop->mu_);
    hop->cv_.wait(lock, [&] { return hop->state_ != SharedHop::State::connecting; });
    if (hop->state_ == SharedHop::State::failed) {
      *err = hop->error_;
      return nullptr;
    }
    *reused = true;
    return hop;
  }

  // parts_ is this thread's alone until state_ leaves connecting.
  std::optional<ConnectError> e = connect(&hop->parts_);
  std::unique_ptr<ChannelMux> mux;
  if (!e) {
    mux = ChannelMux::start(hop->parts_.session);
    if (!mux)
      e = ConnectError{FailureKind::other, "via " + hop->parts_.via + ": eventfd failed", {}};
  }
  {
    std::lock_guard<std::mutex> lock(hop->mu_);
    if (e) {
      hop->state_ = SharedHop::State::failed;
      hop->error_ = *e;
    } else {
      hop->mux_ = std::move(mux);
      hop->state_ = SharedHop::State::ready;
    }
  }
  hop->cv_.notify_all();
  if (e) {
    *err = *e;
    return nullptr;  // freed once those that waited for it let go too
  }
  return hop;
}

}  // namespace ratchet::transport::ssh
