#pragma once
// A host's session as the engine sees it: connecting again with backoff, shared by the
// dropped-session reconnect (executor.h) and the reboot wait (reboot.cc).
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "transport/transport.h"
#include "util/duration.h"

namespace ratchet::engine {

/// Whether `err` is about the host key (never retried; exit 4).
bool host_key_failure(const transport::ConnectError& err);

/// How reconnect_with_backoff() paces its tries: sleeps of first, 2*first, ...
/// at most `max` between them, the last one cut to the deadline.
struct Backoff {
  util::Millis first{500};
  util::Millis max{5'000};
  bool wait_first = false;       ///< sleep before the first try too (a host going down)
  bool try_at_deadline = true;   ///< a sleep that reached the deadline is followed by one last try
};

/// What the caller makes of one try.
enum class Next { done, again, stop };
/// How reconnect_with_backoff() ended.
enum class Reconnected { done, stopped, out_of_time, interrupted };

/// Called with each try's number (from 1) and outcome: `err`, else `info`.
using OnTry = std::function<Next(int attempt, const std::optional<transport::ConnectError>& err,
                                 const transport::ConnectInfo& info)>;

/// Calls t.connect() and hands each outcome to on_try until it says done or
/// stop, the deadline passes, or *interrupted (may be null) is set; `sleep`
/// (null = none) waits between tries. *attempts (may be null) = tries made.
Reconnected reconnect_with_backoff(transport::Transport& t, std::chrono::steady_clock::time_point deadline,
                                   const Backoff& b, const std::function<void(util::Millis)>& sleep,
                                   const std::atomic<bool>* interrupted, const OnTry& on_try,
                                   int* attempts = nullptr);

}  // namespace ratchet::engine
