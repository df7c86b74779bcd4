#pragma once
// What the engine tells the person watching (cli/ implements it).
#include <string>
#include <vector>

#include "engine/ratchet_loop.h"

namespace ratchet::engine {

struct HostReport;

/// Called from each host's thread; implementations must be thread-safe.
class Progress {
 public:
  virtual ~Progress() = default;
  /// Connecting to `host` begins (a fork is free for it).
  virtual void connecting(const std::string& host) { (void)host; }
  /// The session is up; `detail` is "user@address:port".
  virtual void connected(const std::string& host, const std::string& detail) = 0;
  /// The host could not be reached or authenticated; `message` names the cause.
  virtual void unreachable(const std::string& host, const std::string& message) = 0;
  /// A step begins on `host`.
  virtual void step_started(const std::string& host, const std::string& step_id,
                            const std::string& name) = 0;
  /// A step ended with outcome `o` (status, rung, ms, reason).
  virtual void step_done(const std::string& host, const std::string& step_id,
                         const StepOutcome& o) = 0;
  /// A step was skipped (its `when` is false); `why` says so.
  virtual void step_skipped(const std::string& host, const std::string& step_id,
                            const std::string& why) = 0;
  /// A command starts on `host`: `role` (check, action, become_probe) of `rung`.
  virtual void command_started(const std::string& host, int rung, const std::string& role) {
    (void)host, (void)rung, (void)role;
  }
  /// The host is done (after host_end is recorded).
  virtual void host_done(const HostReport& report) { (void)report; }
  /// A rolling batch starts: `index` from 1 of `count`, with these hosts.
  virtual void batch_started(int index, int count, const std::vector<std::string>& hosts) {
    (void)index, (void)count, (void)hosts;
  }
};

/// A Progress that prints nothing.
class SilentProgress : public Progress {
 public:
  void connected(const std::string&, const std::string&) override {}
  void unreachable(const std::string&, const std::string&) override {}
  void step_started(const std::string&, const std::string&, const std::string&) override {}
  void step_done(const std::string&, const std::string&, const StepOutcome&) override {}
  void step_skipped(const std::string&, const std::string&, const std::string&) override {}
};

}  // namespace ratchet::engine
