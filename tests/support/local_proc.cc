#include "support/local_proc.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <poll.h>

#include <cstdlib>
#include <stdexcept>

namespace ratchet::testing {

ShellResult run_sh(const std::string& script, const std::string& input) {
  int in[2], out[2], err[2];
  if (pipe(in) || pipe(out) || pipe(err)) throw std::runtime_error("pipe");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
    execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  size_t written = 0;
  if (input.empty()) close(in[1]), in[1] = -1;
  ShellResult r;
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    pollfd fds[3];
    int n = 0;
    if (out_open) fds[n++] = {out[0], POLLIN, 0};
    if (err_open) fds[n++] = {err[0], POLLIN, 0};
    if (in[1] >= 0) fds[n++] = {in[1], POLLOUT, 0};
    poll(fds, n, 1000);
    for (int i = 0; i < n; ++i) {
      if (!fds[i].revents) continue;
      if (fds[i].fd == in[1]) {
        ssize_t w = write(in[1], input.data() + written, input.size() - written);
        if (w > 0) written += w;
        if (w < 0 || written == input.size()) close(in[1]), in[1] = -1;
        continue;
      }
      char buf[65536];
      ssize_t k = read(fds[i].fd, buf, sizeof buf);
      if (k <= 0) {
        if (fds[i].fd == out[0]) out_open = false;
        else err_open = false;
      } else {
        (fds[i].fd == out[0] ? r.out : r.err).append(buf, k);
      }
    }
  }
  if (in[1] >= 0) close(in[1]);
  close(out[0]);
  close(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

SilentListener::SilentListener() {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 4) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd_ >= 0) ::close(fd_);
    throw std::runtime_error("SilentListener: cannot listen on 127.0.0.1");
  }
  port_ = ntohs(addr.sin_port);
}

SilentListener::~SilentListener() { ::close(fd_); }

std::string temp_dir(const char* prefix) {
  std::string tmpl = std::string("/tmp/") + prefix + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
  return tmpl;
}

BackgroundRatchet::BackgroundRatchet(const std::string& dir, const std::string& args, const std::string& tag)
    : out(dir + "/" + tag + ".out"), err(dir + "/" + tag + ".err") {
  pid = fork();
  if (pid == 0) {
    int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(o, 1);
    dup2(e, 2);
    execl("/bin/sh", "sh", "-c", (std::string("exec ") + RATCHET_BINARY + args).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
}

int BackgroundRatchet::wait() {
  int status = 0;
  waitpid(pid, &status, 0);
  pid = -1;
  return status;
}

BackgroundRatchet::~BackgroundRatchet() {
  if (pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
}

}  // namespace ratchet::testing
