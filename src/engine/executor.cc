#include "engine/executor.h"

#include "steps/library.h"
#include "transport/wire.h"
#include "util/hash.h"

namespace ratchet::engine {

Executor::Executor(transport::Transport& t, transcript::Writer& w, std::string host,
                   const std::atomic<bool>* interrupted)
    : t_(t), w_(w), host_(std::move(host)), interrupted_(interrupted) {}

void Executor::set_step(const std::string& step_id, bool become, const std::string& become_user,
                        size_t capture) {
  step_ = step_id;
  capture_ = capture;
  become_ = become;
  become_user_ = become_user;
}

std::string Executor::sent_for(const steps::Command& c) const {
  transport::Become b;
  b.enabled = become_;
  b.user = become_user_;
  return transport::wire_command(steps::with_library(c.text), c.timeout, b);
}

transport::ExecResult Executor::run(const steps::Command& c, int rung, const std::string& input) {
  transport::ExecResult r;
  if (interrupted()) {
    r.error = "interrupted";
    return r;
  }
  transport::ExecRequest req;
  req.command = sent_for(c);
  req.stdin_data = input;
  req.timeout = transport::client_deadline(c.timeout);
  req.host_timeout = c.timeout;
  req.cancel = interrupted_;
  req.capture = capture_;
  transport::Become b{become_, become_user_};
  std::string recorded = transport::wire_command(steps::with_library_reference(c.text), c.timeout, b);
  nlohmann::json ev = {{"host", host_}, {"step", step_}, {"rung", rung}, {"role", c.role},
                       {"command", c.text}, {"sent", recorded},
                       {"timeout_ms", c.timeout.count()}};
  if (!input.empty()) {
    ev["stdin_bytes"] = input.size();
    // A digest of a short secret could be brute-forced: record nothing of it.
    if (c.stdin_secret || w_.mask(input) != input) ev["stdin"] = "***";
    else ev["stdin_sha256"] = util::sha256_hex(input);
  }
  w_.emit("command", ev);
  if (w_.mask(c.text) != c.text) {  // design.md: secrets go on stdin, never in a command line
    r.error = "refused: the command would carry a secret on its command line (pass it on stdin)";
    w_.emit("exit", {{"host", host_}, {"step", step_}, {"rung", rung}, {"error", r.error}, {"ms", 0},
                     {"timed_out", false}});
    return r;
  }
  r = t_.exec(req);
  nlohmann::json base = {{"host", host_}, {"step", step_}, {"rung", rung}};
  for (auto [name, cap] : {std::pair<const char*, const transport::Captured*>{"stdout", &r.out},
                           {"stderr", &r.err}}) {
    if (cap->total == 0 && cap->data.empty()) continue;
    // Masked before encoding, so a secret cannot hide in data_b64.
    auto f = redact_ ? nlohmann::json{{"stream", name}, {"bytes", cap->total}, {"redacted", true}}
                     : transcript::output_fields(name, w_.mask(cap->data), cap->total, cap->dropped);
    f.update(base);
    w_.emit("output", f);
  }
  nlohmann::json ex = base;
  if (!r.signal.empty()) ex["signal"] = r.signal;
  else ex["code"] = r.exit_code;
  ex["ms"] = r.ms;
  ex["timed_out"] = r.timed_out;
  if (!r.error.empty()) ex["error"] = r.error;
  w_.emit("exit", ex);
  return r;
}

void Executor::evidence(int rung, nlohmann::json fields) {
  fields["host"] = host_;
  fields["step"] = step_;
  fields["rung"] = rung;
  w_.emit("evidence", fields);
}

}  // namespace ratchet::engine
