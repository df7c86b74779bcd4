#include "run/cancel.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "run/exit.h"

namespace ratchet::run {

namespace {

std::atomic<bool> g_cancel{false};
std::atomic<const char*> g_second{nullptr};

void on_signal(int) {
  const bool again = g_cancel.exchange(true);
  const char* msg = g_second.load();
  if (again && msg) {  // second signal: leave now (write(2): async-signal-safe)
    (void)!::write(2, msg, std::strlen(msg));
    std::_Exit(kExitInterrupted);
  }
}

}  // namespace

const std::atomic<bool>& cancel_token() { return g_cancel; }

bool cancelled() { return g_cancel.load(); }

CancelOnSignals::CancelOnSignals(const char* second) {
  g_cancel.store(false);
  g_second.store(second);
  old_int_ = std::signal(SIGINT, on_signal);
  old_term_ = std::signal(SIGTERM, on_signal);
}

CancelOnSignals::~CancelOnSignals() {
  std::signal(SIGINT, old_int_);
  std::signal(SIGTERM, old_term_);
}

void sleep_unless_cancelled(util::Millis d) {
  auto end = std::chrono::steady_clock::now() + d;
  while (!g_cancel.load() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        end - std::chrono::steady_clock::now(), std::chrono::milliseconds(200)));
}

}  // namespace ratchet::run
