// One command on its own exec channel: stdin pumped in window-sized chunks while
// stdout and stderr are drained (so neither side can stall the other), exit
// status and exit signal from channel callbacks, a client-side deadline. The
// wrapper's "[ratchet-pid]" line is taken out of stderr; with it, the host-side
// watchdog is armed on a second channel when the command runs long (wire.h),
// and ^C stops the command over that second channel too. Where no second
// channel opens, the watchdog the wrapper started on the host for itself
// holds the deadline, and ends the command once this connection is gone. The typed command
// becomes its wire string here (wire_form), nowhere else on the ssh side.
#include <fmt/format.h>
#include <libssh/callbacks.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "transport/go_split.h"
#include "transport/keepalive.h"
#include "transport/stdin_feed.h"
#include "transport/ssh_transport.h"

namespace ratchet::transport::ssh {

namespace {
constexpr const char* kNoSessionChannel = "cannot open a session channel";
}  // namespace

namespace {

using Clock = std::chrono::steady_clock;

/// What the channel callbacks learn. Lives as long as the channel's callbacks
/// are registered (they are removed before the channel is freed).
struct ChannelState {
  bool status_seen = false;
  int exit_status = -1;
  std::string signal;  ///< "TERM", as sshd sends it (no "SIG")
  bool remote_closed = false;
};

void on_exit_status(ssh_session, ssh_channel, int status, void* user) {
  auto* st = static_cast<ChannelState*>(user);
  st->status_seen = true;
  st->exit_status = status;
}

void on_exit_signal(ssh_session, ssh_channel, const char* signal, int, const char*, const char*,
                    void* user) {
  static_cast<ChannelState*>(user)->signal = signal ? signal : "?";
}

void on_close(ssh_session, ssh_channel, void* user) {
  static_cast<ChannelState*>(user)->remote_closed = true;
}

/// Owns one channel and its callbacks; closing and freeing happen in one place.
class Channel {
 public:
  explicit Channel(ssh_session s) : channel_(ssh_channel_new(s)) {
    cb_.userdata = &state_;
    cb_.channel_exit_status_function = on_exit_status;
    cb_.channel_exit_signal_function = on_exit_signal;
    cb_.channel_close_function = on_close;
    ssh_callbacks_init(&cb_);
    if (channel_) ssh_set_channel_callbacks(channel_, &cb_);
  }
  ~Channel() {
    if (channel_ == nullptr) return;
    // Unregister first: a late CLOSE from the server reaches a channel that
    // libssh keeps until then, and must not call into this (dead) object.
    ssh_remove_channel_callbacks(channel_, &cb_);
    if (ssh_channel_is_open(channel_)) ssh_channel_close(channel_);
    ssh_channel_free(channel_);
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  ssh_channel get() const { return channel_; }
  const ChannelState& state() const { return state_; }

 private:
  ssh_channel channel_;
  ChannelState state_;
  ssh_channel_callbacks_struct cb_{};
};

/// Drains whatever is buffered on one stream: past the go line (`go`), then
/// through `filter` when not null. Returns false on a channel error; sets
/// *eof once the server sent EOF (or closed) and the buffer is empty.
bool drain(ssh_channel ch, int is_stderr, GoSplit* go, CaptureBuffer* cap, PidMarkerFilter* filter, bool* eof) {
  char buf[32768];
  std::string after, passed;
  for (;;) {
    int n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, is_stderr);
    if (n > 0) {
      after.clear();
      go->feed(buf, size_t(n), &after);
      if (filter) {
        passed.clear();
        filter->feed(after.data(), after.size(), &passed);
        cap->append(passed.data(), passed.size());
      } else {
        cap->append(after.data(), after.size());
      }
      continue;
    }
    if (n == SSH_EOF) *eof = true;  // not an error: the stream ended
    return n != SSH_ERROR;
  }
}

ExecResult run_channel(ssh_session s, const Target& t, const ExecRequest& req, const Wire& wire,
                       bool may_arm, KeepaliveWatch* ka = nullptr);

}  // namespace

/// A short helper command on a second channel (the watchdog, the holder
/// query): `command` as it is, `become_stdin` on its stdin, 10 s, 4 KiB.
ExecResult run_beside(ssh_session s, const Target& t, std::string command, const Wire& of) {
  ExecRequest q;
  q.timeout = util::Millis(10'000);
  q.capture = 4096;
  return run_channel(s, t, q, helper_wire(command, of.become_stdin), false);
}

/// Runs the watchdog for `p` on a second channel of `s` (wire.h), `left` ms
/// before the deadline (0: stop it now). Returns "armed" or why not.
std::string arm_watchdog(ssh_session s, const Target& t, const ExecRequest& req, const Wire& wire,
                         const RemoteProcess& p, long long left, util::Millis refused_wait) {
  const std::string command = watchdog_command(p, util::Millis(left), req.become, wire.run_id);
  ExecResult r = run_beside(s, t, command, wire);
  for (const auto until = Clock::now() + refused_wait; channel_refused(r.error) && Clock::now() < until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    r = run_beside(s, t, command, wire);
  }
  if (!r.error.empty()) return "watchdog: " + r.error;
  if (r.exit_code != 0) {
    // The watchdog's own line; a login shell's rc file may print before it.
    size_t at = r.err.data.find("ratchet-watchdog: ");
    if (at == std::string::npos) at = 0;
    std::string why = r.err.data.substr(at, r.err.data.find('\n', at) - at);
    return fmt::format("watchdog: exit {}{}{}", r.exit_code, why.empty() ? "" : ": ", why);
  }
  return "armed";
}

namespace {

ExecResult run_channel(ssh_session s, const Target& t, const ExecRequest& req, const Wire& wire,
                       bool may_arm, KeepaliveWatch* ka) {
  ExecResult r;
  const auto start = Clock::now();
  auto deadline = start + req.timeout;
  auto elapsed_ms = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  };
  auto fail = [&](const char* what) {
    r.error = fmt::format("{}: {}: {}", t.where, what, ssh_get_error(s));
    r.ms = elapsed_ms();
    return r;
  };

  Channel channel(s);
  ssh_channel ch = channel.get();
  if (ch == nullptr) return fail("cannot create a channel");
  if (ssh_channel_open_session(ch) != SSH_OK) return fail(kNoSessionChannel);
  if (ssh_channel_request_exec(ch, wire.command.c_str()) != SSH_OK)
    return fail("exec request refused");

  CaptureBuffer out(req.capture), err(req.capture);
  if (req.stdout_fd >= 0) out.sink_to(req.stdout_fd, req.stdout_limit);
  // Only a wrapped command prints the pid line (wire.h: a host deadline > 0).
  const bool wrapped = req.host_timeout.count() > 0;
  PidMarkerFilter marker(wrapped ? wire.run_id : "");
  GoSplit out_go(wire.go_id), err_go(wire.go_id);
  StdinFeed input(wire.stdin_data, req.stdin_file);
  if (std::string why; !input.open(&why)) return fail(why.c_str());
  const RemoteProcess& proc = marker.process();
  bool armed = false;
  size_t line_sent = 0;  // stdin's first line goes at once; the rest after the go line
  bool stdin_done = false, out_eof = false, err_eof = false;
  auto go_seen = [&] { return out_go.seen() || err_go.seen(); };
  ssh_event event = ssh_event_new();         // wakes on any packet of this session
  if (event == nullptr) return fail("cannot create an event loop");
  ssh_event_add_session(event, s);
  const ChannelState& st = channel.state();
  bool deadline_hit = false;
  bool held = false;  // the status came, the output stayed open past the drain grace
  std::optional<Clock::time_point> drain_end;

  for (;;) {
    while (line_sent < wire.line.size() && !st.remote_closed) {
      size_t chunk = std::min<size_t>({wire.line.size() - line_sent, ssh_channel_window_size(ch), 32768});
      if (chunk == 0) break;
      int w = ssh_channel_write(ch, wire.line.data() + line_sent, uint32_t(chunk));
      if (w <= 0) break;
      line_sent += size_t(w);
    }
    if (!stdin_done && line_sent == wire.line.size() && input.empty()) {
      ssh_channel_send_eof(ch);  // nothing more to send: EOF at once
      stdin_done = true;
    }
    if (!stdin_done && line_sent == wire.line.size() && go_seen()) {
      // Never more than the server's window: a blocking write would stop us
      // draining stdout while the command waits for us to read. At most 1 MiB
      // per round, then the outputs are drained.
      bool all_sent = false;
      for (size_t budget = 1 << 20; budget > 0;) {
        std::string_view pending = input.next();
        if (pending.empty()) {
          all_sent = true;
          break;
        }
        size_t chunk = std::min<size_t>({pending.size(), ssh_channel_window_size(ch), 32768, budget});
        if (chunk == 0) break;  // window closed: wait for the server to reopen it
        int w = ssh_channel_write(ch, pending.data(), uint32_t(chunk));
        // A command that exits without reading its input: stop sending, no error.
        if (w <= 0 || st.remote_closed) {
          stdin_done = true;
          break;
        }
        input.consume(size_t(w));
        budget -= std::min(budget, size_t(w));
      }
      if (all_sent && !stdin_done) {
        // A local file that could not be read to its end: the command must not
        // take the part it got for the whole (copy's host side checks the sha256 too).
        if (!input.error().empty()) {
          r.error = fmt::format("{}: {}", t.where, input.error());
          ssh_channel_request_send_signal(ch, "TERM");
          break;
        }
        ssh_channel_send_eof(ch);
        stdin_done = true;
      }
    }
    if (!drain(ch, 0, &out_go, &out, nullptr, &out_eof) ||
        !drain(ch, 1, &err_go, &err, wrapped ? &marker : nullptr, &err_eof)) {
      r.error = fmt::format("{}: channel failed: {}", t.where, ssh_get_error(s));
      break;
    }
    // Done when both streams ended and the status came (or the server closed).
    const bool status_in = st.status_seen || !st.signal.empty();
    if (out_eof && err_eof && (status_in || st.remote_closed)) break;
    // The command ended, a child it started still holds the output: read on
    // for the drain grace only, then leave that child running.
    if (status_in && !drain_end) drain_end = Clock::now() + req.drain_grace;
    if (drain_end && Clock::now() >= *drain_end) {
      held = true;
      break;
    }
    // A second channel needs the session back from this loop's event. Where
    // none opens (sshd's MaxSessions 1) the wrapper's own watchdog on the host
    // still holds: "on host" (wire.h watchdog_report).
    auto on_second_channel = [&](long long left) {
      ssh_event_remove_session(event, s);
      std::string how = arm_watchdog(s, t, req, wire, proc, left);
      ssh_event_add_session(event, s);
      return watchdog_report(how, proc);
    };
    if (req.cancel && req.cancel->load()) {
      // ^C: ask sshd to signal the command (RFC 4254 §6.9); sshd refuses that
      // for root logins and it does not reach past sudo, so also stop the
      // process group from a second channel, or, when the pid line has not
      // come yet, whatever carries the run id.
      ssh_channel_request_send_signal(ch, "TERM");
      if (may_arm && wrapped && go_seen()) r.watchdog = on_second_channel(0);
      r.error = "interrupted";
      break;
    }
    // Long-running: arm the host deadline (not for a command that has ended).
    if (may_arm && wrapped && !armed && proc.known() && !status_in) {
      long long el = elapsed_ms();
      if (el >= arm_after(req.host_timeout).count()) {
        armed = true;
        r.watchdog = on_second_channel(req.host_timeout.count() - el);
        // No host deadline (sshd refused the channel and the wrapper started
        // no watchdog of its own): the client's own comes at the timeout
        // itself, and says it may still run.
        if (r.watchdog != "armed" && r.watchdog != "on host") deadline = std::min(deadline, start + req.host_timeout);
      }
    }
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      deadline_hit = true;
      // The host's deadline did not end it (no watchdog?): stop it from here.
      if (may_arm && wrapped && go_seen()) r.watchdog = on_second_channel(0);
      break;
    }
    // Wait for the next packet (data, window adjust, status), unless stdin can go on.
    bool can_write = (line_sent < wire.line.size() || (!stdin_done && go_seen())) && ssh_channel_window_size(ch) > 0;
    int wait_ms = can_write ? 0 : int(std::min<long long>(left.count(), 200));
    if (drain_end)
      wait_ms = std::clamp<int>(int(std::chrono::ceil<std::chrono::milliseconds>(*drain_end - Clock::now()).count()),
                                0, wait_ms);
    if (ssh_event_dopoll(event, wait_ms) == SSH_ERROR) {  // the socket is gone
      r.error = fmt::format("{}: connection lost: {}", t.where, ssh_get_error(s));
      break;
    }
    if (ka != nullptr) {  // a path that drops silently: no answer to keepalives
      if (std::string lost = ka->tick(); !lost.empty()) {
        r.error = lost;
        break;
      }
    }
  }
  ssh_event_remove_session(event, s);
  ssh_event_free(event);
  std::string rest;
  out_go.finish(&rest);
  out.append(rest.data(), rest.size());
  rest.clear();
  err_go.finish(&rest);
  std::string passed;
  if (wrapped) marker.feed(rest.data(), rest.size(), &passed);
  else passed = rest;
  rest = std::move(passed);
  marker.finish(&rest);
  err.append(rest.data(), rest.size());
  r.login_output = out_go.before() + err_go.before();
  r.remote_pid = proc.pid;

  if (st.status_seen) r.exit_code = st.exit_status;
  r.signal = st.signal;
  bool ended = st.status_seen || !st.signal.empty();
  r.timed_out = deadline_hit && !ended;  // a status that came in time is the result
  if (held) {
    std::string holders;
    if (may_arm && wrapped && proc.known()) {
      ExecResult h = run_beside(s, t, held_output_query(wire.run_id, req.become), wire);
      if (h.exit_code == 0) holders = h.out.data;
    }
    r.warning = held_output_warning(req.drain_grace.count(), holders);
  }
  // The channel closed with neither an exit status nor a signal (OpenSSH's
  // ChannelTimeout, a dropped session): nothing says how the command ended.
  // libssh reads a channel as closed once its session is dead: then it was the
  // connection that went, not the channel (OpenSSH's ChannelTimeout).
  if (!ended && !deadline_hit && r.error.empty())
    r.error = ssh_is_connected(s) ? std::string("no exit status received (channel closed by the server)")
                                  : fmt::format("{}: connection lost: {}", t.where, ssh_get_error(s));
  if (!r.signal.empty() && req.host_timeout.count() > 0 && elapsed_ms() >= req.host_timeout.count())
    r.timed_out = true;  // the wire wrapper's deadline killed it
  // No go line: whatever answered was not the command ratchet sent. Its
  // exit status says nothing about ratchet's command: not a result.
  if (!go_seen() && r.error != "interrupted" && (r.error.empty() || ended || deadline_hit)) {
    std::string how = st.status_seen ? fmt::format("exit {}", st.exit_status)
                      : !st.signal.empty() ? "killed by " + st.signal
                      : deadline_hit ? fmt::format("no answer within {} ms", elapsed_ms())
                                     : std::string("the channel closed");
    r.error = not_run_error(out_go.before(), err_go.before(), how);
    r.timed_out = false;
  }
  r.out = out.finish();
  r.err = err.finish();
  r.ms = elapsed_ms();
  return r;  // ~Channel closes the channel (sends EOF + CLOSE) and frees it
}

}  // namespace

bool channel_refused(const std::string& error) {
  return error.find(std::string(": ") + kNoSessionChannel + ": ") != std::string::npos;
}

ExecResult exec_channel(ssh_session s, const Target& t, const ExecRequest& req, KeepaliveWatch* ka) {
  if (req.host_timeout.count() > 0 && req.run_id.empty()) {  // the caller left it to us
    ExecRequest named = req;
    named.run_id = new_run_id();
    return run_channel(s, t, named, wire_form(named), true, ka);
  }
  return run_channel(s, t, req, wire_form(req), true, ka);
}

}  // namespace ratchet::transport::ssh
