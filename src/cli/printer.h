#pragma once
// Line-oriented progress on stdout: one line per event, prefixed by host.
#include <mutex>
#include <string>

#include "engine/progress.h"
#include "transcript/writer.h"

namespace ratchet::cli {

/// Prints "HOST: STATUS STEP TIME: reason" per finished step, one line each,
/// whole lines under a mutex so parallel hosts never interleave mid-line.
class LinePrinter : public engine::Progress {
 public:
  /// `mask` (may be null) hides secret values in everything printed.
  explicit LinePrinter(const transcript::Writer* mask = nullptr) : mask_(mask) {}
  void connected(const std::string& host, const std::string& detail) override;
  void unreachable(const std::string& host, const std::string& message) override;
  void step_started(const std::string& host, const std::string& step_id,
                    const std::string& name) override;
  void step_done(const std::string& host, const std::string& step_id,
                 const engine::StepOutcome& o) override;
  void step_skipped(const std::string& host, const std::string& step_id,
                    const std::string& why) override;

 private:
  void line(const std::string& text);
  std::mutex mu_;
  const transcript::Writer* mask_;
};

}  // namespace ratchet::cli
