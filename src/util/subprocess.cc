#include "util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace ratchet::util {

namespace {

using Clock = std::chrono::steady_clock;

/// Closes both ends of each pipe that is open.
void close_all(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
}

/// Feeds `input` to fds[0] and drains fds[1] and fds[2] into out/err until
/// both reach EOF or `deadline` passes; false on the deadline.
bool pump(int fds[3], const std::string& input, std::string* out, std::string* err, Clock::time_point deadline) {
  size_t at = 0;
  if (input.empty()) ::close(fds[0]), fds[0] = -1;
  char buf[8192];
  while (fds[1] >= 0 || fds[2] >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p[3] = {{fds[0], POLLOUT, 0}, {fds[1], POLLIN, 0}, {fds[2], POLLIN, 0}};
    if (::poll(p, 3, int(std::min<long long>(left, 200))) < 0 && errno != EINTR) return false;
    if (fds[0] >= 0 && (p[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write_nosigpipe(fds[0], input.data() + at, input.size() - at);
      if (n > 0) at += size_t(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || at == input.size()) ::close(fds[0]), fds[0] = -1;
    }
    for (int i = 1; i < 3; ++i) {
      if (fds[i] < 0 || !(p[i].revents & (POLLIN | POLLERR | POLLHUP))) continue;
      ssize_t n = ::read(fds[i], buf, sizeof buf);
      if (n > 0) (i == 1 ? out : err)->append(buf, size_t(n));
      else if (n == 0 || (errno != EAGAIN && errno != EINTR)) ::close(fds[i]), fds[i] = -1;
    }
  }
  return true;
}

}  // namespace

ssize_t write_nosigpipe(int fd, const char* data, size_t n) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  ssize_t w = ::write(fd, data, n);
  if (w < 0 && errno == EPIPE) {
    timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);  // the one this write raised
    errno = EPIPE;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return w;
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input,
                          std::chrono::milliseconds timeout) {
  ProcessResult r;
  const std::string name = argv.empty() ? "" : argv[0];
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    r.error = "cannot run " + name + ": " + std::strerror(errno);
    close_all({in[0], in[1], out[0], out[1], err[0], err[1]});
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = argv.empty() ? EINVAL : posix_spawnp(&pid, name.c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close_all({in[0], out[1], err[1]});
  if (rc != 0) {
    r.error = "cannot run " + name + ": " + std::strerror(rc);
    close_all({in[1], out[0], err[0]});
    return r;
  }
  int fds[3] = {in[1], out[0], err[0]};
  for (int fd : fds) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (!pump(fds, input, &r.out, &r.err, Clock::now() + timeout)) {
    ::kill(pid, SIGKILL);
    r.error = name + " timed out after " + std::to_string(timeout.count() / 1000) + "s";
  }
  close_all({fds[0], fds[1], fds[2]});
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (r.error.empty()) {
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    else r.error = name + " was killed by signal " + std::to_string(WTERMSIG(status));
  }
  return r;
}

}  // namespace ratchet::util
