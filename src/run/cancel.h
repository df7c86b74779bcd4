#pragma once
// The run's one cancel token: ^C (SIGINT) and SIGTERM set it while a
// CancelOnSignals is alive; the engine and the transport below read it
// (RunShared::interrupted, ProbeShared, AdhocShared) and stop at their next step.
#include <atomic>

#include "util/duration.h"

namespace ratchet::run {

/// The token (false until a signal, or until the next CancelOnSignals clears it).
const std::atomic<bool>& cancel_token();
/// Whether the run was cancelled.
bool cancelled();

/// Installs the SIGINT and SIGTERM handlers (clearing the token first) and
/// restores the ones before on destruction. `second`: the line written to
/// stderr when a second signal comes, before leaving at once with exit 130;
/// null: a second signal only sets the token again. Must be a string literal.
class CancelOnSignals {
 public:
  explicit CancelOnSignals(const char* second);
  ~CancelOnSignals();
  CancelOnSignals(const CancelOnSignals&) = delete;
  CancelOnSignals& operator=(const CancelOnSignals&) = delete;

 private:
  void (*old_int_)(int);
  void (*old_term_)(int);
};

/// Sleeps `d`, in slices of 200 ms so that a cancel is noticed; returns early when cancelled.
void sleep_unless_cancelled(util::Millis d);

}  // namespace ratchet::run
