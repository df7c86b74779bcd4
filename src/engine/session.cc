#include "engine/session.h"

#include <algorithm>

namespace ratchet::engine {

bool host_key_failure(const transport::ConnectError& err) {
  return err.kind == transport::FailureKind::host_key_unknown ||
         err.kind == transport::FailureKind::host_key_changed;
}

Reconnected reconnect_with_backoff(transport::Transport& t, std::chrono::steady_clock::time_point deadline,
                                   const Backoff& b, const std::function<void(util::Millis)>& sleep,
                                   const std::atomic<bool>* interrupted, const OnTry& on_try, int* attempts) {
  using Clock = std::chrono::steady_clock;
  auto stop_asked = [&] { return interrupted && interrupted->load(); };
  util::Millis backoff = b.first;
  for (int attempt = 1;; ++attempt) {
    if (attempts) *attempts = attempt - 1;
    if (stop_asked()) return Reconnected::interrupted;
    if (attempt > 1 || b.wait_first) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return Reconnected::out_of_time;
      if (sleep) sleep(std::min<util::Millis>(backoff, left));
      backoff = std::min<util::Millis>(backoff * 2, b.max);
      if (stop_asked()) return Reconnected::interrupted;
      if (!b.try_at_deadline && Clock::now() >= deadline) return Reconnected::out_of_time;
    }
    if (attempts) *attempts = attempt;
    transport::ConnectInfo info;
    auto err = t.connect(&info);
    switch (on_try(attempt, err, info)) {
      case Next::done:
        return Reconnected::done;
      case Next::stop:
        return Reconnected::stopped;
      case Next::again:
        break;
    }
  }
}

}  // namespace ratchet::engine
