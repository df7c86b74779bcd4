// The session shell on one long-lived channel: a request goes out as one
// frame (session_wire.h), the command's stdout and stderr come back raw on
// the channel's two streams, each ended by the request's nonce, and the
// trailer after it on stdout says how the command ended. Anything else (the
// shell gone, a garbled trailer, a helper left unread) ends the shell too:
// the next command starts a fresh one. The deadline and ^C reach the command
// through the watchdog, as on the channel path, but in band: the shell's
// guard reads it from this same channel (session.sh), so sshd's MaxSessions 1
// does not stop it; a second channel only where the guard cannot take it.
#include "transport/session_shell.h"

#include <fmt/format.h>
#include <libssh/callbacks.h>

#include <algorithm>
#include <chrono>

#include "transport/keepalive.h"
#include "transport/session_wire.h"
#include "transport/wire.h"

namespace ratchet::transport::ssh {

namespace {

using Clock = std::chrono::steady_clock;

long long ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

/// The first line of `text`, or "".
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

/// One channel with the callbacks that say how the shell itself ended.
struct ShellChannel {
  explicit ShellChannel(ssh_session s) : ch(ssh_channel_new(s)) {
    cb.userdata = this;
    cb.channel_exit_status_function = [](ssh_session, ssh_channel, int status, void* u) {
      auto* c = static_cast<ShellChannel*>(u);
      c->status_seen = true;
      c->exit_status = status;
    };
    cb.channel_exit_signal_function = [](ssh_session, ssh_channel, const char* sig, int, const char*, const char*,
                                         void* u) { static_cast<ShellChannel*>(u)->signal = sig ? sig : "?"; };
    cb.channel_close_function = [](ssh_session, ssh_channel, void* u) {
      static_cast<ShellChannel*>(u)->remote_closed = true;
    };
    ssh_callbacks_init(&cb);
    if (ch) ssh_set_channel_callbacks(ch, &cb);
  }
  ~ShellChannel() {
    if (ch == nullptr) return;
    ssh_remove_channel_callbacks(ch, &cb);  // before a late CLOSE can reach this dead object
    if (ssh_channel_is_open(ch)) ssh_channel_close(ch);
    ssh_channel_free(ch);
  }
  ShellChannel(const ShellChannel&) = delete;
  ShellChannel& operator=(const ShellChannel&) = delete;

  /// The shell ended, or its channel did.
  bool gone() const { return ended() || ssh_channel_is_eof(ch); }
  /// The shell's end is known: its status or signal came, or the channel closed
  /// (an EOF alone comes before the status: wait for it to say how it ended).
  bool ended() const { return status_seen || !signal.empty() || remote_closed; }
  /// "exit 97", "killed by KILL", "channel closed".
  std::string how() const {
    if (!signal.empty()) return "killed by " + signal;
    if (status_seen) return fmt::format("exit {}", exit_status);
    return "channel closed";
  }

  ssh_channel ch;
  ssh_channel_callbacks_struct cb{};
  bool status_seen = false;
  int exit_status = -1;
  std::string signal;
  bool remote_closed = false;
};

SessionShell::SessionShell() = default;
SessionShell::~SessionShell() { close(); }

bool SessionShell::is_open() const { return ch_ != nullptr; }

std::string SessionShell::check_idle() {
  if (!ch_) return "not open";
  // Non-blocking: processes the packets that came (an EOF, a close, a status).
  const int out = ssh_channel_poll_timeout(ch_->ch, 0, 0);
  const int err = out == SSH_EOF || out == SSH_ERROR ? 0 : ssh_channel_poll_timeout(ch_->ch, 0, 1);
  std::string why;
  if (out > 0 || err > 0) why = "output while idle";
  else if (out == SSH_ERROR || err == SSH_ERROR || ch_->gone()) why = ch_->how();
  if (!why.empty()) close();
  return why;
}

void SessionShell::close() {
  ch_.reset();
  become_ = false;
  dir_.clear();
  library_.clear();
}

std::string SessionShell::open(ssh_session s, const Target& t, util::Millis timeout, bool* no_channel,
                               const std::atomic<bool>* cancel, const BecomeStart* become,
                               std::optional<SudoRefusal>* refusal) {
  close();
  *no_channel = true;
  if (cancel && cancel->load()) return "interrupted";
  auto c = std::make_unique<ShellChannel>(s);
  if (c->ch == nullptr) return fmt::format("{}: cannot create a channel: {}", t.where, ssh_get_error(s));
  if (ssh_channel_open_session(c->ch) != SSH_OK)
    return fmt::format("{}: cannot open a session channel: {}", t.where, ssh_get_error(s));  // channel_refused
  const std::string hello = new_run_id();
  if (ssh_channel_request_exec(c->ch, std::string(kExecRequest).c_str()) != SSH_OK)
    return fmt::format("{}: exec request refused: {}", t.where, ssh_get_error(s));
  *no_channel = false;
  // The bootstrap line at once; the shell itself (the payload) only after its
  // go line came on stdout; ready once the ready line came and the go line on
  // stderr too (so it cannot reach the first command's stderr).
  const std::string go_id = new_run_id();
  const std::string go = go_line(go_id);
  // A become shell: sudo's password line right after the payload, read by
  // the starter (become.sh) into its memory, never by sudo from this stream.
  const std::string payload =
      become ? become_start_payload(hello, become->user) + become->password + "\n" : session_start_payload(hello);
  const std::string line = exec_line(go_id, payload.size() - (become ? become->password.size() + 1 : 0)) + payload;
  const size_t first = line.size() - payload.size();
  size_t sent = 0;
  std::string out, err;
  // How much of `line` may go: the bootstrap, and the payload once the go line came.
  auto may_send = [&] { return out.find(go) != std::string::npos ? line.size() : first; };
  const std::string prefix = session_ready_prefix(hello);
  const auto start = Clock::now();
  ssh_event event = ssh_event_new();
  if (event == nullptr) return "cannot create an event loop";
  ssh_event_add_session(event, s);
  std::string why;
  char buf[4096];
  for (;;) {
    while (sent < may_send() && !c->ended()) {
      size_t chunk = std::min<size_t>({may_send() - sent, ssh_channel_window_size(c->ch), sizeof buf});
      if (chunk == 0) break;
      int w = ssh_channel_write(c->ch, line.data() + sent, uint32_t(chunk));
      if (w <= 0) break;
      sent += size_t(w);
    }
    if (cancel && cancel->load()) {
      // Nothing but the shell was sent: closing its channel ends it (EOF on its stdin).
      why = "interrupted";
      *no_channel = true;
      break;
    }
    int n;
    while ((n = ssh_channel_read_nonblocking(c->ch, buf, sizeof buf, 0)) > 0) out.append(buf, size_t(n));
    while ((n = ssh_channel_read_nonblocking(c->ch, buf, sizeof buf, 1)) > 0) err.append(buf, size_t(n));
    size_t at = out.find(prefix);
    size_t nl = at == std::string::npos ? at : out.find('\n', at);
    if (nl != std::string::npos && err.find(go) != std::string::npos) {
      dir_ = out.substr(at + prefix.size(), nl - at - prefix.size());
      // Anything after the ready line would be a command's: there is none yet.
      if (nl + 1 != out.size() || dir_.empty()) why = "unexpected output after the ready line";
      break;
    }
    if (c->ended() && become && refusal && err.find(go) != std::string::npos &&
        err.find("ratchet-session: ") == std::string::npos && err.find("ratchet-become: ") == std::string::npos &&
        out.find(go) != std::string::npos) {
      // Neither the starter nor the shell said why: sudo did (after the go line).
      SudoRefusal r;
      r.status = c->status_seen ? c->exit_status : 1;
      r.said = err.substr(err.find(go) + go.size());
      *refusal = r;
      why = fmt::format("sudo refused to start the become shell ({}): {}", c->how(), first_line(r.said).substr(0, 200));
      break;
    }
    if (c->ended()) {
      std::string said = first_line(err.substr(std::min(err.find("ratchet-session: "), err.size())));
      if (said.empty()) said = first_line(out);  // a forced command's answer, an rc file's
      if (said.empty()) said = first_line(err);
      why = fmt::format("the shell ended ({}){}{}", c->how(), said.empty() ? "" : ": ", said.substr(0, 200));
      break;
    }
    if (ms_since(start) >= timeout.count()) {
      why = fmt::format("no ready line within {} ms", timeout.count());
      break;
    }
    const bool can_write = sent < may_send() && ssh_channel_window_size(c->ch) > 0;
    if (ssh_event_dopoll(event, can_write ? 0 : 100) == SSH_ERROR) {
      why = fmt::format("{}: connection lost: {}", t.where, ssh_get_error(s));
      *no_channel = true;
      break;
    }
  }
  ssh_event_remove_session(event, s);
  ssh_event_free(event);
  if (!why.empty()) {
    dir_.clear();
    return why;
  }
  ch_ = std::move(c);
  become_ = become != nullptr;
  return "";
}

ExecResult SessionShell::exec(ssh_session s, const Target& t, const ExecRequest& in, KeepaliveWatch* ka) {
  ExecResult r;
  const auto start = Clock::now();
  if (!ch_) {
    r.error = "the session shell is not open";
    return r;
  }
  not_started_ = false;
  ExecRequest req = in;
  if (req.run_id.empty()) req.run_id = new_run_id();
  // A second channel runs as the command does: through sudo, from the login.
  ExecRequest outer = req;
  if (become_) {  // the shell already is that user: no sudo in it
    req.become = Become{};
    req.become_password.clear();
  }
  const std::string nonce = new_session_nonce();
  const SessionRequest sreq =
      session_request(req, dir_, req.library != nullptr && !library_.empty() && library_ == req.library->text);
  const std::string frame = session_frame(nonce, sreq);
  Wire wire;  // what a second channel's watchdog needs: the run id, sudo -S's line
  wire.run_id = req.run_id;
  if (outer.become.enabled && outer.become.password) wire.become_stdin = outer.become_password + "\n";

  ssh_channel ch = ch_->ch;
  CaptureBuffer out(req.capture), err(req.capture);
  MarkerSplit out_end(nonce), err_end(nonce);
  PidMarkerFilter marker(req.run_id);
  const RemoteProcess& proc = marker.process();
  std::optional<SessionTrailer> trailer;
  size_t written = 0;
  bool armed = false, deadline_hit = false, broken = false;
  auto deadline = start + req.timeout;
  // The guard's helpers (session.sh): sent after the frame on this channel.
  std::string helpers;
  size_t helpers_written = 0;
  int helpers_sent = 0;
  std::optional<Clock::time_point> stop_until;  // an in-band stop was sent: the trailer by then
  ssh_event event = ssh_event_new();
  if (event == nullptr) {
    r.error = "cannot create an event loop";
    close();
    return r;
  }
  ssh_event_add_session(event, s);
  auto on_second_channel = [&](long long left, util::Millis refused_wait = util::Millis(0)) {
    ssh_event_remove_session(event, s);
    std::string how = arm_watchdog(s, t, outer, wire, proc, left, refused_wait);
    ssh_event_add_session(event, s);
    return how;
  };
  // A helper goes in band once the whole frame is out (the guard reads what
  // follows it) and while the shell is there; sudo's password only as one line.
  const bool password_line =
      !(req.become.enabled && req.become.password) ||
      req.become_password.find_first_of(std::string("\n\0", 2)) == std::string::npos;
  auto in_band = [&] { return written == frame.size() && password_line && !ch_->gone(); };
  auto send_helper = [&](long long left) {
    std::optional<std::string> pw;
    if (req.become.enabled && req.become.password) pw = req.become_password;
    helpers += session_helper_frame(nonce, watchdog_command(proc, util::Millis(left), req.become, req.run_id), pw);
    ++helpers_sent;
  };
  char buf[32768];
  std::string passed, filtered;
  auto read_stderr = [&] {
    int n;
    while ((n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 1)) > 0) {
      passed.clear();
      filtered.clear();
      err_end.feed(buf, size_t(n), &passed);
      marker.feed(passed.data(), passed.size(), &filtered);
      err.append(filtered.data(), filtered.size());
    }
  };
  // ^C or the deadline: the command by its pid line, which may still be on
  // its way (a request just sent): up to 1 s for it, else whatever carries
  // its run id (wire.h: the watchdog with PID 0). In band when it can: then
  // the exchange goes on until the trailer (the watchdog KILLs 1 s after its
  // TERM), for at most 3 s; else on a second channel, and the shell closes.
  // A frame not wholly sent started nothing: the shell reads all of it first.
  auto stop_now = [&] {
    if (written < frame.size()) {
      broken = true;
      return;
    }
    for (auto until = Clock::now() + std::chrono::seconds(1);
         !proc.known() && !ch_->gone() && Clock::now() < until;) {
      if (ssh_event_dopoll(event, 50) == SSH_ERROR) break;
      read_stderr();
    }
    if (in_band()) {
      send_helper(0);
      stop_until = Clock::now() + std::chrono::seconds(3);
      return;
    }
    r.watchdog = on_second_channel(0);
    broken = true;
  };
  for (;;) {
    // The frame, then any helper, never past the window (a blocking write would stop the reads).
    auto write_out = [&](const std::string& bytes, size_t* done) {
      while (*done < bytes.size()) {
        size_t chunk = std::min<size_t>({bytes.size() - *done, ssh_channel_window_size(ch), sizeof buf});
        if (chunk == 0) break;
        int w = ssh_channel_write(ch, bytes.data() + *done, uint32_t(chunk));
        if (w <= 0) break;
        *done += size_t(w);
      }
    };
    write_out(frame, &written);
    if (written == frame.size()) write_out(helpers, &helpers_written);
    int n;
    while ((n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 0)) > 0) {
      passed.clear();
      out_end.feed(buf, size_t(n), &passed);
      out.append(passed.data(), passed.size());
    }
    read_stderr();
    if (out_end.found() && !trailer) {
      bool bad = false;
      trailer = parse_trailer(out_end.after(), &bad);
      if (bad) {
        r.error = "the session shell's trailer is garbled";
        broken = true;
        break;
      }
    }
    if (trailer && err_end.found()) break;
    if (ch_->gone() && (!ssh_is_connected(s) || (ssh_get_status(s) & (SSH_CLOSED | SSH_CLOSED_ERROR)) != 0)) {
      // the socket went, and the channel with it
      r.error = fmt::format("{}: connection lost: {}", t.where, ssh_get_error(s));
      broken = true;
      break;
    }
    if (ch_->gone()) {
      // How it ended comes after its EOF: wait a little for it.
      for (auto until = Clock::now() + std::chrono::milliseconds(500); !ch_->ended() && Clock::now() < until;)
        if (ssh_event_dopoll(event, 50) == SSH_ERROR) break;
      if (ch_->status_seen && ch_->exit_status == 96 && !proc.known()) {
        not_started_ = true;
        r.error = "the session shell's directory was gone (a command removed it): nothing of this command ran";
        broken = true;
        break;
      }
      r.error = fmt::format(
          "the session shell ended during the command ({}): the command may have ended it, and how the "
          "command ended is unknown; the next command gets a fresh session shell",
          ch_->how());
      broken = true;
      // It broke the shell: it ends too (found by its run id when its pid line
      // never came). Its channel goes first: under MaxSessions 1 sshd frees
      // the dead shell's session once that channel is closed (the shell's
      // readers may still hold its streams); the channel is asked for again
      // meanwhile.
      close();
      r.watchdog = on_second_channel(0, util::Millis(3'000));
      break;
    }
    if (stop_until && Clock::now() >= *stop_until) {
      // The guard did not answer (a command that holds the frame's end?): as before.
      r.watchdog = on_second_channel(0);
      broken = true;
      break;
    }
    if (!stop_until && req.cancel && req.cancel->load()) {
      r.error = "interrupted";
      stop_now();
      if (broken) break;
      continue;
    }
    const long long el = ms_since(start);
    if (req.host_timeout.count() > 0 && !armed && proc.known() && !trailer && !stop_until &&
        el >= arm_after(req.host_timeout).count()) {
      armed = true;
      const long long left = req.host_timeout.count() - el;
      if (in_band()) {
        send_helper(left);
      } else {
        r.watchdog = on_second_channel(left);
        if (r.watchdog != "armed") deadline = std::min(deadline, start + req.host_timeout);  // as on a channel
      }
    }
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (!stop_until && left.count() <= 0) {
      deadline_hit = true;
      stop_now();
      if (broken) break;
      continue;
    }
    if (stop_until) left = std::chrono::ceil<std::chrono::milliseconds>(*stop_until - Clock::now());
    bool can_write = (written < frame.size() || helpers_written < helpers.size()) && ssh_channel_window_size(ch) > 0;
    if (ssh_event_dopoll(event, can_write ? 0 : int(std::clamp<long long>(left.count(), 0, 200))) == SSH_ERROR) {
      r.error = fmt::format("{}: connection lost: {}", t.where, ssh_get_error(s));
      broken = true;
      break;
    }
    if (ka != nullptr) {  // a path that drops silently: no answer to keepalives
      if (std::string lost = ka->tick(); !lost.empty()) {
        r.error = lost;
        broken = true;
        break;
      }
    }
  }
  ssh_event_remove_session(event, s);
  ssh_event_free(event);
  std::string rest;
  marker.finish(&rest);
  err.append(rest.data(), rest.size());
  r.remote_pid = proc.pid;
  if (trailer) {
    r.exit_code = trailer->exit_code;
    r.signal = trailer->signal;
    if (trailer->held) r.warning = held_output_warning(req.drain_grace.count(), trailer->holders);
    // The guard ran what it reports; a helper it did not report may still be
    // unread on the shell's stdin: then the shell is not used again.
    if (!trailer->helpers.empty()) r.watchdog = helper_outcome(trailer->helpers.back());
    if (int(trailer->helpers.size()) != helpers_sent) broken = true;
    // A helper that came after the command had ended was not needed; one that
    // should have ended it (a stop, a death by signal) and left no report is said.
    if (trailer->helpers.empty() && helpers_sent > 0 && (stop_until || !trailer->signal.empty()))
      r.watchdog = "watchdog: sent on the session shell's channel, but no report of it came (a command removed "
                   "the shell's directory?)";
  }
  const bool ended = trailer.has_value() && err_end.found();
  r.timed_out = deadline_hit;
  if (!r.signal.empty() && req.host_timeout.count() > 0 && ms_since(start) >= req.host_timeout.count())
    r.timed_out = true;  // the watchdog's deadline killed it
  if (broken || !ended) close();
  else if (!sreq.library.empty()) library_ = std::string(req.library->text);  // DIR/l holds it now
  r.out = out.finish();
  r.err = err.finish();
  r.ms = ms_since(start);
  return r;
}

}  // namespace ratchet::transport::ssh
