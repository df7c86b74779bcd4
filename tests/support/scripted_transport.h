#pragma once
// A Transport for unit tests of the engine: returns scripted results in order
// and records every typed command it was given (script, become, deadlines,
// stdin: no wire string to parse). Never used instead of real sshd in
// integration tests.
#include <deque>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace ratchet::testing {

class ScriptedTransport : public transport::Transport {
 public:
  /// Queues the result of the next exec().
  void push(int code, std::string out = "", std::string err = "") {
    transport::ExecResult r;
    r.exit_code = code;
    r.out.data = out;
    r.out.total = out.size();
    r.err.data = err;
    r.err.total = err.size();
    results_.push_back(r);
  }
  /// Queues a command that never ran (the transport's error, no exit status).
  void push_error(std::string error) {
    transport::ExecResult r;
    r.error = std::move(error);
    results_.push_back(r);
  }
  std::optional<transport::ConnectError> connect(transport::ConnectInfo* info) override {
    ++connects;
    info->address = "scripted";
    return std::nullopt;
  }
  transport::ExecResult exec(const transport::ExecRequest& req) override {
    requests.push_back(req);
    if (results_.empty()) {
      transport::ExecResult r;
      r.error = "scripted transport: no result queued";
      return r;
    }
    auto r = results_.front();
    results_.pop_front();
    return r;
  }
  void close() override {}
  size_t left() const { return results_.size(); }

  std::vector<transport::ExecRequest> requests;  ///< every exec(), in order
  int connects = 0;                               ///< connect() calls

 private:
  std::deque<transport::ExecResult> results_;
};

}  // namespace ratchet::testing
