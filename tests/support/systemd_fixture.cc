#include "support/systemd_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace ratchet::testing {
namespace {

// Runs argv (no shell involved) with stdin from `stdin_path` and `extra_env` added to
// this process's environment. Captures stdout into *out and stderr into *err; a null
// pointer leaves that stream on this process's. Returns the exit status, 128+N when
// killed by signal N, 127 when it could not be started.
int run(const std::vector<std::string>& argv, const std::string& stdin_path,
        const std::vector<std::string>& extra_env, std::string* out, std::string* err) {
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (out && pipe2(out_pipe, O_CLOEXEC) != 0) return 127;
  if (err && pipe2(err_pipe, O_CLOEXEC) != 0) return 127;

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, stdin_path.c_str(), O_RDONLY, 0);
  if (out) posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  if (err) posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);

  std::vector<std::string> env_store;
  for (char** e = environ; *e; ++e) env_store.emplace_back(*e);
  env_store.insert(env_store.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp, args;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_store = argv;
  for (auto& a : argv_store) args.push_back(a.data());
  args.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (out) close(out_pipe[1]);
  if (err) close(err_pipe[1]);
  if (rc != 0) {
    if (out) close(out_pipe[0]);
    if (err) close(err_pipe[0]);
    return 127;
  }

  // Drain both pipes together so that neither can fill up and block the child.
  std::vector<pollfd> fds;
  std::vector<std::string*> sinks;
  if (out) fds.push_back({out_pipe[0], POLLIN, 0}), sinks.push_back(out);
  if (err) fds.push_back({err_pipe[0], POLLIN, 0}), sinks.push_back(err);
  size_t open_fds = fds.size();
  char buf[4096];
  while (open_fds > 0) {
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& p : fds)
    if (p.fd >= 0) close(p.fd);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A port that was free a moment ago: bind 127.0.0.1:0 and let the kernel choose.
int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket: " + std::string(strerror(errno)));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  if (port <= 1023 || port == 2024) throw std::runtime_error("could not pick a free port");
  return port;
}

bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = std::string(path ? path : "") + ":/usr/sbin:/sbin:/usr/bin:/bin";
  std::stringstream ss(dirs);
  for (std::string d; std::getline(ss, d, ':');)
    if (!d.empty() && access((d + "/" + name).c_str(), X_OK) == 0) return true;
  return false;
}

std::string default_rootfs() {
  const char* r = std::getenv("RATCHET_LAB_ROOTFS");
  return r && *r ? r : "/var/cache/ratchet-lab/rootfs";
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string tail(const std::string& text, size_t lines) {
  size_t pos = text.size();
  for (size_t n = 0; pos > 0 && n <= lines; --pos)
    if (text[pos - 1] == '\n') ++n;
  return text.substr(pos);
}

}  // namespace

std::string SystemdHost::script() { return std::string(RATCHET_SOURCE_DIR) + "/tests/lab/systemd-host.sh"; }

bool SystemdHost::available(std::string* why) {
  auto no = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  if (geteuid() != 0) return no("needs root (systemd-nspawn, mounts, cgroups)");
  for (const char* tool : {"systemd-nspawn", "unshare", "flock", "ssh", "ssh-keygen", "zstd"})
    if (!on_path(tool)) return no(std::string(tool) + " is not installed (run scripts/setup.sh)");
  if (access(script().c_str(), X_OK) != 0) return no(script() + " is missing or not executable");
  if (access("/sys/fs/cgroup", F_OK) != 0) return no("no /sys/fs/cgroup");
  std::string rootfs = default_rootfs();
  bool have_rootfs = access((rootfs + "/etc/ratchet-lab-rootfs").c_str(), F_OK) == 0 ||
                     access((rootfs + ".tar.zst").c_str(), F_OK) == 0 || on_path("debootstrap");
  if (!have_rootfs) return no("no lab rootfs at " + rootfs + " and no debootstrap to build one");
  return true;
}

SystemdHost::SystemdHost() {
  std::string why;
  if (!available(&why)) throw std::runtime_error("systemd host unavailable: " + why);

  auto t0 = std::chrono::steady_clock::now();
  std::string log;
  if (run({script(), "ensure"}, "/dev/null", {}, &log, &log) != 0)
    throw std::runtime_error("systemd-host.sh ensure failed:\n" + log);
  ensure_s_ = seconds_since(t0);

  char tmpl[] = "/tmp/ratchet-systemd-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp: " + std::string(strerror(errno)));
  state_dir_ = tmpl;

  // The owner watchdog stops the host if this process dies before the destructor runs.
  std::vector<std::string> env = {"LAB_OWNER_PID=" + std::to_string(getpid()), "LAB_OWNER_CLEANUP=1"};
  std::string out;
  int rc = -1;
  for (int attempt = 0; attempt < 2 && rc != 0; ++attempt) {  // a second port if the first was taken
    port_ = free_port();
    out.clear();
    t0 = std::chrono::steady_clock::now();
    rc = run({script(), "start", state_dir_, std::to_string(port_)}, "/dev/null", env, &out, &out);
    boot_s_ = seconds_since(t0);
  }
  if (rc != 0) {
    std::string console = read_file(state_dir_ + "/console.log");
    std::string ignored;
    run({script(), "stop", state_dir_}, "/dev/null", {}, &ignored, &ignored);
    std::error_code ec;
    std::filesystem::remove_all(state_dir_, ec);
    throw std::runtime_error("systemd-host.sh start failed (rc " + std::to_string(rc) + "):\n" + out +
                             "\nconsole.log (tail):\n" + tail(console, 30));
  }
}

SystemdHost::~SystemdHost() {
  std::string launcher = read_file(state_dir_ + "/launcher.pid");
  std::string out;
  int rc = run({script(), "stop", state_dir_}, "/dev/null", {}, &out, &out);
  bool gone = true;
  if (!launcher.empty()) {
    pid_t pid = std::atoi(launcher.c_str());
    gone = pid <= 0 || kill(pid, 0) != 0;
  }
  if (rc != 0 || !gone) {
    std::cerr << "SystemdHost: stop of " << state_dir_ << " failed (rc " << rc << "); state kept\n" << out;
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(state_dir_, ec);
  if (ec) std::cerr << "SystemdHost: removing " << state_dir_ << ": " << ec.message() << "\n";
}

int SystemdHost::ssh(const std::string& cmd, std::string* out, std::string* err) {
  std::string ignored;
  return run(ssh_argv(cmd), "/dev/null", {}, out ? out : &ignored, err);
}

std::vector<std::string> SystemdHost::ssh_argv(const std::string& cmd) const {
  // -F none: a user's ~/.ssh/config (ControlMaster, other keys) must not change the test.
  return {"ssh", "-F", "none", "-i", client_key(), "-o", "UserKnownHostsFile=" + known_hosts(),
          "-o", "StrictHostKeyChecking=yes", "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
          "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=10", "-p", std::to_string(port_),
          "root@127.0.0.1", cmd};
}

std::map<std::string, std::string> SystemdHost::stage_inference() {
  std::string stage = std::string(RATCHET_SOURCE_DIR) + "/tests/lab/stage-inference.sh";
  std::string out, err;
  // bash, not sh: the script uses pipefail (dash has none). It reads itself from stdin.
  int rc = run(ssh_argv("bash -s"), stage, {}, &out, &err);
  if (rc != 0) throw std::runtime_error("stage-inference.sh failed (rc " + std::to_string(rc) + "):\n" + err);
  std::map<std::string, std::string> kv;
  std::stringstream ss(out);
  for (std::string line; std::getline(ss, line);) {
    size_t eq = line.find('=');
    if (eq != std::string::npos && eq > 0) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return kv;
}

}  // namespace ratchet::testing
