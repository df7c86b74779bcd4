#pragma once
// Line-oriented progress on stdout: one line per event, prefixed by host.
#include <mutex>
#include <ostream>
#include <vector>
#include <string>

#include "engine/host_run.h"
#include "engine/progress.h"
#include "transcript/writer.h"

namespace ratchet::cli {

/// One step's result as a line, "HOST: STATUS STEP TIME: REASON" (masked with
/// `mask`, may be null; not yet made terminal-safe): what `run` prints per step
/// when piped, and the live view leaves on screen for one host.
std::string step_result_line(const std::string& host, const std::string& step_id,
                             const engine::StepOutcome& o, const transcript::Writer* mask);

/// Prints "HOST: STATUS STEP TIME: reason" per finished step, one line each,
/// whole lines under a mutex so parallel hosts never interleave mid-line.
class LinePrinter : public engine::Progress {
 public:
  /// `mask` (may be null) hides secret values in everything printed; lines go
  /// to `out` (stdout, or stderr when stdout carries --json).
  explicit LinePrinter(const transcript::Writer* mask = nullptr, std::ostream* out = nullptr)
      : mask_(mask), out_(out) {}
  void connected(const std::string& host, const std::string& detail) override;
  void unreachable(const std::string& host, const std::string& message) override;
  void step_started(const std::string& host, const std::string& step_id,
                    const std::string& name) override;
  void step_done(const std::string& host, const std::string& step_id,
                 const engine::StepOutcome& o) override;
  void step_skipped(const std::string& host, const std::string& step_id,
                    const std::string& why) override;
  void host_done(const engine::HostReport& report) override;
  void batch_started(int index, int count, const std::vector<std::string>& hosts) override;

 private:
  void line(const std::string& text);
  std::mutex mu_;
  const transcript::Writer* mask_;
  std::ostream* out_;
};

}  // namespace ratchet::cli
