// The local backend: /bin/sh -c on this machine, for unit tests. Mirrors what
// sshd does for an exec channel without a PTY: a new session (so the command
// leads its own process group), three pipes, exit status or signal. The typed
// command goes through the same wire_form() as over ssh: /bin/sh -c runs the
// exec request as the login shell would, and reads the rest from stdin.
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "transport/go_split.h"
#include "transport/stdin_feed.h"
#include "transport/transport.h"
#include "transport/wire.h"
#include "util/subprocess.h"

namespace ratchet::transport {

namespace {

using Clock = std::chrono::steady_clock;

/// "TERM" for SIGTERM (glibc's abbreviation), or the number as text.
std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? abbrev : std::to_string(sig);
}


[[noreturn]] void exec_child(const std::string& command, int in, int out, int err) {
  setsid();  // like sshd: the command leads its own session and process group
  dup2(in, 0);
  dup2(out, 1);
  dup2(err, 2);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD}) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
  _exit(127);
}

/// Runs `command` with /bin/sh -c in a session of its own, stdio on /dev/null,
/// and waits for it: the local way of a second channel. Returns "armed" or why not.
/// Runs `command` with /bin/sh and returns its stdout ("" when it fails).
std::string run_capture(const std::string& command) {
  std::string out;
  FILE* f = popen(command.c_str(), "r");
  if (f == nullptr) return out;
  char b[4096];
  for (size_t n; (n = fread(b, 1, sizeof b, f)) > 0;) out.append(b, n);
  pclose(f);
  return out;
}

std::string run_beside(const std::string& command) {
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd) dup2(null, fd);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  if (pid < 0) return std::string("watchdog: ") + strerror(errno);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "armed";
  return "watchdog: exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

class LocalTransport final : public Transport {
 public:
  std::optional<ConnectError> connect(ConnectInfo* info) override {
    if (info) {
      info->address = "localhost";
      const passwd* pw = getpwuid(getuid());
      info->user = pw ? pw->pw_name : std::to_string(getuid());
      info->auth_method = "local";
      info->ms = 0;
    }
    return std::nullopt;
  }

  ExecResult exec(const ExecRequest& given) override;
  void close() override {}
};

ExecResult LocalTransport::exec(const ExecRequest& given) {
  ExecRequest named;
  if (given.host_timeout.count() > 0 && given.run_id.empty()) {  // the caller left it to us
    named = given;
    named.run_id = new_run_id();
  }
  const ExecRequest& req = named.run_id.empty() ? given : named;
  const Wire wire = wire_form(req);
  ExecResult r;
  const auto start = Clock::now();
  const auto deadline = start + req.timeout;
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return r.error = strerror(errno), r;
  if (pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]);
    return r.error = strerror(errno), r;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
    return r.error = strerror(errno), r;
  }
  pid_t pid = fork();
  if (pid == 0) exec_child(wire.command, in[0], out[1], err[1]);
  for (int fd : {in[0], out[1], err[1]}) ::close(fd);
  if (pid < 0) {
    for (int fd : {in[1], out[0], err[0]}) ::close(fd);
    return r.error = strerror(errno), r;
  }
  int fds[3] = {in[1], out[0], err[0]};  // stdin writer, stdout, stderr readers
  for (int fd : fds) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  auto close_fd = [&](int i) { ::close(fds[i]), fds[i] = -1; };
  // stdin's first line at once (sh reads all of it before it runs anything);
  // the rest only after the go line, as over ssh.
  for (size_t at = 0; at < wire.line.size() && Clock::now() < deadline;) {
    pollfd w{fds[0], POLLOUT, 0};
    poll(&w, 1, 100);
    ssize_t n = util::write_nosigpipe(fds[0], wire.line.data() + at, wire.line.size() - at);
    if (n > 0) at += size_t(n);
    else if (n < 0 && errno != EAGAIN && errno != EINTR) break;  // it ended before reading it
  }
  StdinFeed input(wire.stdin_data, req.stdin_file);
  if (std::string why; !input.open(&why)) r.error = why, close_fd(0);
  if (fds[0] >= 0 && input.empty()) close_fd(0);  // EOF at once
  GoSplit go_out(wire.go_id), go_err(wire.go_id);
  std::string after;
  CaptureBuffer cap_out(req.capture), cap_err(req.capture);
  if (req.stdout_fd >= 0) cap_out.sink_to(req.stdout_fd, req.stdout_limit);
  const bool wrapped = req.host_timeout.count() > 0;
  PidMarkerFilter marker(wrapped ? wire.run_id : "");  // the wrapper's pid line (wire.h)
  std::string passed;
  bool armed = false;
  auto elapsed_ms = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  };
  int status = 0;
  bool reaped = false, held = false;
  Clock::time_point reaped_at{};
  char buf[65536];

  while (fds[1] >= 0 || fds[2] >= 0 || !reaped) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    if (req.cancel && req.cancel->load()) {
      if (!reaped) kill(-pid, SIGTERM);
      r.error = "interrupted";
      break;
    }
    // As ssh_exec.cc does: arm the wrapper's watchdog (wire.h) on a long run.
    if (wrapped && !armed && !reaped && marker.process().known() &&
        elapsed_ms() >= arm_after(req.host_timeout).count()) {
      armed = true;
      r.watchdog = watchdog_report(run_beside(watchdog_command(marker.process(),
                                                               util::Millis(req.host_timeout.count() - elapsed_ms()),
                                                               Become{}, wire.run_id)),
                                   marker.process());
    }
    if (!reaped && waitpid(pid, &status, WNOHANG) == pid) reaped = true, reaped_at = Clock::now();
    if (fds[1] < 0 && fds[2] < 0 && reaped) break;
    // Ended, but a child holds the output: read on for the drain grace only.
    if (reaped && Clock::now() - reaped_at >= req.drain_grace) {
      held = true;
      break;
    }
    pollfd p[3];
    nfds_t n = 0;
    int which[3];
    for (int i = 0; i < 3; ++i) {
      if (fds[i] < 0) continue;
      if (i == 0 && !go_out.seen() && !go_err.seen()) continue;  // stdin waits for the go line
      p[n] = {fds[i], short(i == 0 ? POLLOUT : POLLIN), 0};
      which[n++] = i;
    }
    // With the pipes closed, poll only paces the waitpid above.
    int wait_ms =
        (n == 0 || (fds[1] < 0 && fds[2] < 0)) ? 10 : int(std::min<long long>(left.count(), 50));
    if (poll(p, n, wait_ms) < 0 && errno != EINTR) break;
    for (nfds_t k = 0; k < n; ++k) {
      int i = which[k];
      if (p[k].revents == 0) continue;
      if (i == 0) {
        std::string_view pending = input.next();
        if (pending.empty()) {
          if (!input.error().empty()) r.error = input.error(), kill(-pid, SIGTERM);
          close_fd(0);
          continue;
        }
        ssize_t w = util::write_nosigpipe(fds[0], pending.data(), std::min<size_t>(pending.size(), 65536));
        if (w > 0) input.consume(size_t(w));
        if (w < 0 && errno != EAGAIN) close_fd(0);
        continue;
      }
      ssize_t got = ::read(fds[i], buf, sizeof buf);
      if (got > 0) {
        after.clear();
        (i == 1 ? go_out : go_err).feed(buf, size_t(got), &after);
      }
      if (got > 0 && i == 2 && wrapped) {
        passed.clear();
        marker.feed(after.data(), after.size(), &passed);
        cap_err.append(passed.data(), passed.size());
      } else if (got > 0)
        (i == 1 ? cap_out : cap_err).append(after.data(), after.size());
      else if (got == 0 || errno != EAGAIN)
        close_fd(i);
    }
  }
  // Deadline: the command is still there; nothing of it may outlive this
  // call. A finished command's children are left alone, as on an ssh host:
  // those still holding its output are named in the warning.
  if (!reaped) kill(-pid, SIGKILL);
  if (held && wrapped) r.warning = held_output_warning(req.drain_grace.count(), run_capture(held_output_query(wire.run_id, Become{})));
  else if (held) r.warning = held_output_warning(req.drain_grace.count(), "");
  if (!reaped) {
    r.timed_out = true;
    waitpid(pid, &status, 0);
  }
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = signal_name(WTERMSIG(status));
  after.clear();
  go_out.finish(&after);
  cap_out.append(after.data(), after.size());
  after.clear();
  go_err.finish(&after);
  r.login_output = go_out.before() + go_err.before();
  passed.clear();
  if (wrapped) marker.feed(after.data(), after.size(), &passed);
  else passed = after;
  marker.finish(&passed);
  cap_err.append(passed.data(), passed.size());
  r.remote_pid = marker.process().pid;
  r.out = cap_out.finish();
  r.err = cap_err.finish();
  r.ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  if (!r.signal.empty() && req.host_timeout.count() > 0 && r.ms >= req.host_timeout.count())
    r.timed_out = true;
  if (!go_out.seen() && !go_err.seen() && r.error.empty()) {  // as over ssh (ssh_exec.cc)
    r.error = not_run_error(go_out.before(), go_err.before(),
                            r.timed_out ? "no answer in time" : r.signal.empty() ? "exit " + std::to_string(r.exit_code)
                                                                               : "killed by " + r.signal);
    r.timed_out = false;
  }
  return r;
}

}  // namespace

std::unique_ptr<Transport> make_local_transport() { return std::make_unique<LocalTransport>(); }

}  // namespace ratchet::transport
