#include "transcript/record.h"

namespace ratchet::transcript {

nlohmann::json connect_fields(const std::string& host, const transport::ConnectInfo& info, bool after_reboot) {
  nlohmann::json ev = {{"host", host}, {"address", info.address}, {"port", info.port},
                       {"user", info.user}, {"fingerprint", info.fingerprint},
                       {"auth_method", info.auth_method}, {"ms", info.ms}};
  if (after_reboot) ev["after_reboot"] = true;
  if (!info.via.empty()) ev["via"] = info.via;  // jump hosts, first hop first
  if (info.jump_reused) ev["jump_reused"] = true;  // rode on another host's jump connection
  if (!info.retries.empty()) ev["retries"] = info.retries;  // resets before authentication
  return ev;
}

nlohmann::json unreachable_fields(const std::string& host, const transport::ConnectError& err) {
  nlohmann::json ev = {{"host", host}, {"cause", transport::cause_name(err.kind)}, {"message", err.message}};
  if (!err.methods_tried.empty()) ev["methods_tried"] = err.methods_tried;
  if (!err.retries.empty()) ev["retries"] = err.retries;
  return ev;
}

void record_result(Writer& w, const CommandRef& at, const transport::ExecResult& r, bool redact) {
  const nlohmann::json base = {{"host", at.host}, {"step", at.step}, {"rung", at.rung}};
  for (auto [name, cap] : {std::pair<const char*, const transport::Captured*>{"stdout", &r.out},
                           {"stderr", &r.err}}) {
    if (cap->total == 0 && cap->data.empty()) continue;
    // Masked before encoding, so a secret cannot hide in data_b64.
    // The digest of the whole stream, unless a secret may be in it (a digest
    // of output around a short secret could be brute-forced).
    const std::string masked = redact ? "" : w.mask(cap->data);
    const bool secret_risk = masked != cap->data || (cap->dropped > 0 && w.has_secrets());
    auto f = redact ? nlohmann::json{{"stream", name}, {"bytes", cap->total}, {"redacted", true}}
                    : output_fields(name, masked, cap->total, cap->dropped,
                                                secret_risk ? "" : cap->sha256);
    f.update(base);
    w.emit(events::kOutput, f);
  }
  nlohmann::json ex = base;
  if (!r.signal.empty()) ex["signal"] = r.signal;
  else ex["code"] = r.exit_code;
  ex["ms"] = r.ms;
  ex["timed_out"] = r.timed_out;
  if (!r.error.empty()) ex["error"] = r.error;
  if (r.remote_pid > 0) ex["pid"] = r.remote_pid;
  if (!r.watchdog.empty()) ex["watchdog"] = r.watchdog;
  if (!r.warning.empty()) ex["warning"] = r.warning;
  if (!r.login_output.empty()) ex["login_output"] = redact ? std::string("***") : w.mask(r.login_output);
  w.emit(events::kExit, ex);
}

}  // namespace ratchet::transcript
