#include "engine/executor.h"

#include <fmt/format.h>

#include <chrono>

#include "steps/library.h"
#include "transcript/record.h"
#include "transcript/value_json.h"
#include "transport/wire.h"
#include "util/hash.h"

namespace ratchet::engine {

Executor::Executor(transport::Transport& t, transcript::Writer& w, std::string host,
                   const std::atomic<bool>* interrupted)
    : t_(t), w_(w), host_(std::move(host)), interrupted_(interrupted), library_(&steps::wire_library()) {}

std::optional<transport::ConnectError> Executor::connect(transport::ConnectInfo* info) {
  auto err = t_.connect(info);
  if (err) w_.emit(transcript::events::kUnreachable, transcript::unreachable_fields(host_, *err));
  else w_.emit(transcript::events::kConnect, transcript::connect_fields(host_, *info));
  return err;
}

void Executor::set_step(const std::string& step_id, bool become, const std::string& become_user,
                        size_t capture) {
  step_ = step_id;
  capture_ = capture;
  become_ = become;
  become_user_ = become_user;
}

transport::Become Executor::become_for_current() const {
  transport::Become b{become_, become_user_, false};
  if (become_) {
    auto it = sudo_mode_.find(become_user_);
    b.password = it != sudo_mode_.end() && it->second == "password";
  }
  return b;
}

bool Executor::reconnect(int rung) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  };
  if (reconnect_window_.count() <= 0) {
    lost_ = fmt::format("the session to {} dropped (reconnecting is off)", host_);
    return false;
  }
  std::string last = "interrupted";
  auto on_try = [&](int attempt, const std::optional<transport::ConnectError>& err,
                    const transport::ConnectInfo& info) {
    nlohmann::json ev = {{"host", host_}, {"step", step_}, {"rung", rung}, {"attempt", attempt},
                         {"ok", !err}, {"ms", elapsed().count()}};
    if (!err) {
      ev["fingerprint"] = info.fingerprint;
      w_.emit(transcript::events::kReconnect, ev);
      return Next::done;
    }
    last = err->message;
    ev["cause"] = transport::cause_name(err->kind);
    ev["message"] = err->message;
    w_.emit(transcript::events::kReconnect, ev);
    // A new key after a drop is exactly what strict checking refuses.
    return host_key_failure(*err) ? Next::stop : Next::again;
  };
  // Backoff 0.5/1/2/4/5 s, the last try at the end of the window.
  auto how = reconnect_with_backoff(t_, start + reconnect_window_, Backoff{}, sleep_, interrupted_, on_try);
  if (how == Reconnected::done) return true;
  if (how == Reconnected::interrupted || interrupted()) {
    lost_ = "interrupted";
    return false;
  }
  lost_ = fmt::format("the session to {} dropped and reconnecting failed for {} ms: {}", host_,
                      elapsed().count(), last);
  return false;
}

transport::ExecResult Executor::run(const steps::Command& c, int rung, const std::string& input) {
  transport::ExecResult r;
  if (interrupted() && !final_) {
    r.error = "interrupted";
    return r;
  }
  // A session that dropped (an action restarted sshd, the network blinked) is
  // opened again before anything else is sent; the step's check then tells
  // whether the action did its work.
  if (lost_.empty() && !t_.connected()) reconnect(rung);
  if (!lost_.empty()) {
    r.error = lost_;
    return r;
  }
  if (become_) {
    std::string why = ensure_become(rung);
    if (!why.empty()) {
      r.error = why;
      return r;
    }
  }
  return exec_recorded(c, rung, input, become_for_current());
}

/// sudo's stderr as one line: lines joined by "; ", secrets masked.
static std::string one_line(const transcript::Writer& w, const std::string& text) {
  std::string out, line;
  for (char ch : w.mask(text) + "\n") {
    if (ch != '\n' && ch != '\r') {
      line += ch;
      continue;
    }
    if (!line.empty()) out += (out.empty() ? "" : "; ") + line;
    line.clear();
  }
  return out.size() > 300 ? out.substr(0, 300) + "..." : out;
}

std::string Executor::ensure_become(int rung) {
  if (!become_) return "";
  if (auto it = sudo_mode_.find(become_user_); it != sudo_mode_.end())
    return it->second.rfind("failed: ", 0) == 0 ? it->second.substr(8) : "";
  const std::string who = become_user_.empty() ? "root" : become_user_;
  auto fail = [&](std::string why) {
    sudo_mode_[become_user_] = "failed: " + why;
    return why;
  };
  steps::Command probe;
  probe.role = steps::Role::become_probe;
  probe.text = "true";
  probe.timeout = util::Millis(15'000);
  // sudo speaks its own English under LC_ALL=C, whatever the host's locale:
  // the probe reads its messages, never a translation of them.
  auto r = exec_recorded(probe, rung, "", {true, become_user_, false, true});
  if (r.error == "interrupted") return "interrupted";
  if (r.exit_code == 0 && r.error.empty()) {
    sudo_mode_[become_user_] = "nopasswd";
    return "";
  }
  if (!r.error.empty()) return fail(fmt::format("become: the sudo probe could not run: {}", r.error));
  std::string err = one_line(w_, r.err.data);
  // No sudo at all (`env: 'sudo': No such file or directory`, exit 127): say
  // so, and name what the host has instead, in seconds (case R11).
  if (r.exit_code == 127 && err.find("sudo") != std::string::npos) {
    steps::Command look;
    look.role = steps::Role::become_probe;
    look.text = "for t in doas sudo-rs run0 pkexec; do command -v \"$t\" >/dev/null 2>&1 && printf '%s ' \"$t\"; done; true";
    look.timeout = util::Millis(15'000);
    auto found = exec_recorded(look, rung, "", {});
    if (found.error == "interrupted") return "interrupted";
    std::string others = found.error.empty() && found.exit_code == 0 ? found.out.data : "";
    while (!others.empty() && others.back() == ' ') others.pop_back();
    return fail(fmt::format("become: sudo is not installed on this host{}; ratchet becomes another user through "
                            "sudo only (sudo said: {})",
                            others.empty() ? "" : " (found: " + others + ")", err));
  }
  // A sudo that refuses a flag ratchet gives it (`-n`, `-S`, `-p`: an old sudo, an early sudo-rs).
  if (err.find("illegal option") != std::string::npos || err.find("invalid option") != std::string::npos ||
      err.find("unrecognized option") != std::string::npos || err.find("unexpected argument") != std::string::npos)
    return fail(fmt::format("become: this host's sudo does not take the flags ratchet gives it (`{}`): {}",
                            transport::sudo_argv({true, become_user_, false}, "..."), err));
  // What sudo is given for every command, so that the refusal names the rule to write.
  const std::string argv = transport::sudo_argv({true, become_user_, false}, "...");
  if (err.find("not in the sudoers") != std::string::npos || err.find("not allowed to") != std::string::npos)
    return fail(fmt::format("become: sudo does not let this login user run commands as {}: ratchet runs "
                            "`{}` for every command, so the sudoers rule must allow /bin/sh as {} (sudo said: {})",
                            who, argv, who, err));
  if (err.find("password is required") == std::string::npos)
    return fail(fmt::format("become: `{}` to run as {} failed (exit {}): {}", argv, who, r.exit_code,
                            err.empty() ? "no message" : err));
  if (password_ == nullptr)
    return fail(fmt::format(
        "become: sudo asks for a password to run as {}; give --ask-become-pass, "
        "--become-password-file FILE or --become-password-env NAME (or a NOPASSWD sudoers rule)",
        who));
  // From here on the password travels (on stdin only): mask it everywhere. A
  // password never sent (NOPASSWD hosts) masks nothing.
  w_.add_secret(*password_);
  auto v = exec_recorded(probe, rung, "", {true, become_user_, true, true});
  if (v.error == "interrupted") return "interrupted";
  if (v.exit_code == 0 && v.error.empty()) {
    sudo_mode_[become_user_] = "password";
    return "";
  }
  std::string verr = !v.error.empty() ? v.error : one_line(w_, v.err.data);
  if (verr.find("not in the sudoers") != std::string::npos || verr.find("not allowed to") != std::string::npos)
    return fail(fmt::format("become: sudo does not let this login user run commands as {}: ratchet runs "
                            "`{}` for every command, so the sudoers rule must allow /bin/sh as {} (sudo said: {})",
                            who, transport::sudo_argv({true, become_user_, true}, "..."), who, verr));
  return fail(fmt::format("become: sudo rejected the become password (to run as {}): {}", who,
                          verr.empty() ? "no message" : verr));
}

transport::ExecRequest Executor::command_for(const steps::Command& c, const std::string& input,
                                             const transport::Become& b) const {
  transport::ExecRequest req;
  req.script = c.text;
  req.library = library_;
  req.stdin_data = input;
  if (c.stdin_file) req.stdin_file = c.stdin_file->path;
  req.stdout_fd = sink_fd_;
  req.stdout_limit = sink_limit_;
  req.become = b;  // the watchdog runs as the command does
  if (b.enabled && b.password && password_) req.become_password = *password_;
  req.host_timeout = c.timeout;
  req.timeout = transport::client_deadline(c.timeout);
  req.capture = capture_;
  req.cancel = final_ ? nullptr : interrupted_;
  req.run_id = transport::new_run_id();
  return req;
}

transport::ExecResult Executor::refused(int rung, std::string why) {
  transport::ExecResult r;
  r.error = std::move(why);
  w_.emit(transcript::events::kExit, {{"host", host_}, {"step", step_}, {"rung", rung}, {"error", r.error}, {"ms", 0},
                   {"timed_out", false}});
  return r;
}

transport::ExecResult Executor::exec_recorded(const steps::Command& c, int rung,
                                              const std::string& input, const transport::Become& b) {
  const transport::ExecRequest req = command_for(c, input, b);
  nlohmann::json ev = {{"host", host_}, {"step", step_}, {"rung", rung}, {"role", name(c.role)},
                       {"command", c.text}, {"sent", transport::sent_form(req)},
                       {"timeout_ms", c.timeout.count()}};
  if (b.enabled && b.password) ev["become_password"] = true;  // sent first on stdin, never recorded
  if (!input.empty()) {
    ev["stdin_bytes"] = input.size();
    // A digest of a short secret could be brute-forced: record nothing of it.
    if (c.stdin_secret || w_.mask(input) != input) ev["stdin"] = "***";
    else ev["stdin_sha256"] = util::sha256_hex(input);
  }
  if (c.stdin_file) {  // copy: a local file streamed after `input`, as the plan pinned it
    ev["stdin_file"] = c.stdin_file->path;
    ev["stdin_bytes"] = c.stdin_file->size + input.size();
    ev["stdin_file_sha256"] = c.stdin_file->sha256;
  }
  w_.emit(transcript::events::kCommand, ev);
  // Secrets go on stdin, never in a command line. The become password
  // is not a playbook secret: a command that merely contains the same text (a
  // weak password such as "ratchet") is no leak of it and is not refused.
  std::string probe = c.text;
  if (password_ && !password_->empty())
    for (size_t at; (at = probe.find(*password_)) != std::string::npos;) probe.erase(at, password_->size());
  if (w_.mask(probe) != probe)
    return refused(rung, "refused: the command would carry a secret on its command line (pass it on stdin)");
  // A NUL byte or a wire string over MAX_ARG_STRLEN: no host could start it.
  if (std::string why = transport::unsendable(req); !why.empty()) return refused(rung, std::move(why));
  if (observer_) observer_(rung, std::string(name(c.role)));
  transport::ExecResult r = t_.exec(req);
  // A secret the capture cap cut in two is masked on both sides of the cut,
  // before anything (judges, reasons, the transcript) sees the output.
  for (auto* cap : {&r.out, &r.err})
    if (cap->dropped > 0) cap->data = w_.mask_cut(cap->data, transport::capture_marker(cap->dropped));
  transcript::record_result(w_, {host_, step_, rung}, r, redact_);
  return r;
}

transport::ExecResult Executor::run_unrecorded(const steps::Command& c) {
  transport::ExecResult r;
  if (!lost_.empty() || !t_.connected()) {
    r.error = lost_.empty() ? "the session is closed" : lost_;
    return r;
  }
  if (std::string why = ensure_become(0); !why.empty()) {
    r.error = why;
    return r;
  }
  const transport::ExecRequest req = command_for(c, "", become_for_current());
  if (std::string why = transport::unsendable(req); !why.empty()) {
    r.error = why;
    return r;
  }
  return t_.exec(req);
}

void Executor::evidence(int rung, util::Value fields) {
  fields["host"] = host_;
  fields["step"] = step_;
  fields["rung"] = rung;
  w_.emit(transcript::events::kEvidence, transcript::to_json(fields));
}

}  // namespace ratchet::engine
