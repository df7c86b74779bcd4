#include <catch2/catch.hpp>

#include <deque>

#include "engine/session.h"

using namespace ratchet;
using engine::Next;
using engine::Reconnected;

namespace {

/// Fails connect() with the queued errors, then succeeds; runs nothing.
struct Flaky : transport::Transport {
  std::deque<transport::FailureKind> failures;
  int connects = 0;
  std::optional<transport::ConnectError> connect(transport::ConnectInfo* info) override {
    ++connects;
    if (!failures.empty()) {
      auto k = failures.front();
      failures.pop_front();
      return transport::ConnectError{k, "try " + std::to_string(connects) + " failed", {}};
    }
    info->address = "back";
    return std::nullopt;
  }
  transport::ExecResult exec(const transport::ExecRequest&) override { return {}; }
  void close() override {}
};

/// Accepts the first session; retries every failure but a host key's.
Next accept(int, const std::optional<transport::ConnectError>& err, const transport::ConnectInfo&) {
  if (!err) return Next::done;
  return engine::host_key_failure(*err) ? Next::stop : Next::again;
}

auto far() { return std::chrono::steady_clock::now() + std::chrono::hours(1); }

}  // namespace

TEST_CASE("session: reconnect backs off 0.5 1 2 4 5 5 s between tries and stops at a session", "[engine]") {
  Flaky t;
  for (int i = 0; i < 6; ++i) t.failures.push_back(transport::FailureKind::refused);
  std::vector<long long> slept;
  auto sleep = [&slept](util::Millis d) { slept.push_back(d.count()); };
  int attempts = 0;
  std::vector<int> seen;
  auto on_try = [&seen](int n, const std::optional<transport::ConnectError>& err, const transport::ConnectInfo& i) {
    seen.push_back(n);
    return accept(n, err, i);
  };
  CHECK(engine::reconnect_with_backoff(t, far(), engine::Backoff{}, sleep, nullptr, on_try, &attempts) ==
        Reconnected::done);
  CHECK(attempts == 7);
  CHECK(seen == std::vector<int>{1, 2, 3, 4, 5, 6, 7});
  CHECK(slept == std::vector<long long>{500, 1000, 2000, 4000, 5000, 5000});  // none before the first try
}

TEST_CASE("session: the reboot pace sleeps first and a host key failure stops at once", "[engine]") {
  Flaky t;
  t.failures = {transport::FailureKind::timeout, transport::FailureKind::host_key_changed,
                transport::FailureKind::refused};
  std::vector<long long> slept;
  engine::Backoff pace;
  pace.first = util::Millis(1000);
  pace.wait_first = true;
  pace.try_at_deadline = false;
  int attempts = 0;
  CHECK(engine::reconnect_with_backoff(
            t, far(), pace, [&slept](util::Millis d) { slept.push_back(d.count()); }, nullptr, accept,
            &attempts) == Reconnected::stopped);
  CHECK(attempts == 2);
  CHECK(t.connects == 2);
  CHECK(slept == std::vector<long long>{1000, 2000});
}

TEST_CASE("session: reconnect ends at the deadline or when interrupted without another try", "[engine]") {
  Flaky t;
  for (int i = 0; i < 100; ++i) t.failures.push_back(transport::FailureKind::refused);
  int attempts = 0;
  // A deadline already passed: one try (a dropped session is tried at once), no sleep.
  int sleeps = 0;
  auto count = [&sleeps](util::Millis) { ++sleeps; };
  CHECK(engine::reconnect_with_backoff(t, std::chrono::steady_clock::now(), engine::Backoff{}, count, nullptr,
                                       accept, &attempts) == Reconnected::out_of_time);
  CHECK(attempts == 1);
  CHECK(sleeps == 0);
  // With the reboot pace nothing is tried at all.
  engine::Backoff pace;
  pace.wait_first = true;
  CHECK(engine::reconnect_with_backoff(t, std::chrono::steady_clock::now(), pace, count, nullptr, accept,
                                       &attempts) == Reconnected::out_of_time);
  CHECK(attempts == 0);
  // Interrupted during a sleep: no try after it.
  std::atomic<bool> stop{false};
  auto interrupting = [&stop](util::Millis) { stop = true; };
  const int before = t.connects;
  CHECK(engine::reconnect_with_backoff(t, far(), engine::Backoff{}, interrupting, &stop, accept, &attempts) ==
        Reconnected::interrupted);
  CHECK(attempts == 1);
  CHECK(t.connects == before + 1);
}
