#pragma once
// Progress on a terminal: one line per host, redrawn in place (5 times a
// second); failures and unreachable hosts are printed once above that block
// and stay. When it ends, every step's result stays on screen: one line per
// step for one host, a host x step table for several. Nothing a host prints
// reaches the terminal unfiltered.
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/host_run.h"
#include "engine/progress.h"
#include "transcript/writer.h"

namespace ratchet::cli {

/// Whether color escapes may be used on `fd`: a terminal, TERM is not "dumb",
/// and NO_COLOR is unset or empty (https://no-color.org).
bool use_color(int fd);

/// Whether in-place progress fits `fd`: a terminal and TERM is not "dumb".
bool use_live(int fd);

class LiveProgress : public engine::Progress {
 public:
  /// `hosts` in display order; `steps` the step ids of each host, in order;
  /// output goes to `fd` (a terminal); `mask` (may be null) hides secrets.
  /// Starts the redraw thread.
  LiveProgress(const std::vector<std::string>& hosts, const std::vector<std::string>& steps, int fd,
               bool color, const transcript::Writer* mask);
  ~LiveProgress() override;

  /// Stops redrawing and replaces the block by the final header and every
  /// step's result (results_text()); the cursor ends below. Safe to call twice.
  void stop();

  /// The results left on screen, `cols` wide: for one host, a line per step
  /// (as `run` prints them piped); for several, a table of a row per host and a
  /// column per step ("-": not run), split into several tables when the steps
  /// do not fit side by side. Terminal-safe.
  std::string results_text(size_t cols) const;

  void connecting(const std::string& host) override;
  void connected(const std::string& host, const std::string& detail) override;
  void unreachable(const std::string& host, const std::string& message) override;
  void step_started(const std::string& host, const std::string& step_id,
                    const std::string& name) override;
  void step_done(const std::string& host, const std::string& step_id,
                 const engine::StepOutcome& o) override;
  void step_skipped(const std::string& host, const std::string& step_id,
                    const std::string& why) override;
  void command_started(const std::string& host, int rung, const std::string& role) override;
  void host_done(const engine::HostReport& report) override;
  void batch_started(int index, int count, const std::vector<std::string>& hosts) override;

 private:
  using Clock = std::chrono::steady_clock;
  struct Row {
    std::string state = "waiting";  ///< waiting, connecting, running, or a final status
    std::string step;
    size_t step_no = 0;  ///< 1-based index of the current/last step
    int rung = 0;
    std::string role;
    bool done = false;
    Clock::time_point start{}, end{};
    std::map<std::string, int> counts;
    std::map<std::string, engine::StepOutcome> results;  ///< by step id: done or skipped
  };

  void above(const std::string& text);  // caller holds mu_
  void draw(bool final);                // caller holds mu_
  std::string row_text(const std::string& host, const Row& r, size_t name_w, size_t cols) const;
  std::string paint(const std::string& status, const std::string& text) const;
  void loop();

  std::string results_unlocked(size_t cols) const;

  std::vector<std::string> order_;
  std::map<std::string, Row> rows_;
  std::vector<std::string> step_ids_;
  size_t steps_;
  int fd_;
  bool color_;
  const transcript::Writer* mask_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false, stopped_ = false;
  size_t drawn_ = 0;  ///< lines of the block currently on screen
  std::string batch_;
  Clock::time_point t0_;
  std::thread thread_;
};

}  // namespace ratchet::cli
