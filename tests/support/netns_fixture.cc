#include "support/netns_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "support/sshd_fixture.h"
#include "util/shell.h"

namespace ratchet::testing {

namespace {

std::atomic<int> ns_counter{0};

void run_or_throw(const std::string& command) {
  int status = -1;
  std::string out = run_local(command + " 2>&1", &status);
  if (status != 0) throw std::runtime_error(command + " failed:\n" + out);
}

/// A listening TCP socket on 127.0.0.1:*port (a fresh free port each try) in
/// the calling thread's network namespace; -1 when none could be bound.
int listen_loopback(int* port) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(uint16_t(free_port()));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd, 16) == 0) {
      *port = ntohs(addr.sin_port);
      return fd;
    }
    ::close(fd);
  }
  return -1;
}

}  // namespace

NetNs::NetNs() {
  name_ = "ratchet-t" + std::to_string(::getpid()) + "-" + std::to_string(ns_counter++);
  run_or_throw("ip netns add " + name_);
  try {
    run_or_throw(exec_prefix() + " ip link set lo up");
  } catch (...) {
    run_local("ip netns del " + name_ + " 2>&1");
    throw;
  }
}

NetNs::~NetNs() { run_local("ip netns del " + name_ + " 2>&1"); }

InetdSshd::InetdSshd(const NetNs& serve_in, const NetNs* listen_in) {
  char tmpl[] = "/tmp/ratchet-jump-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  try {
    ::chmod(dir_.c_str(), 0711);  // sshd reads authorized_keys below it
    for (const char* key : {"ssh_host_ed25519_key", "client_key"})
      run_or_throw(util::shell_join({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "jump",
                                     "-f", dir_ + "/" + key}) +
                   " </dev/null");
    std::filesystem::create_directories(dir_ + "/authorized_keys");
    ::chmod((dir_ + "/authorized_keys").c_str(), 0755);
    std::filesystem::copy_file(client_key() + ".pub", dir_ + "/authorized_keys/root");
    ::chmod((dir_ + "/authorized_keys/root").c_str(), 0644);
    std::ofstream(dir_ + "/sshd_config")
        << "HostKey " << dir_ << "/ssh_host_ed25519_key\n"
        << "AuthorizedKeysFile " << dir_ << "/authorized_keys/%u\n"
        << "PermitRootLogin prohibit-password\nPubkeyAuthentication yes\n"
           "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
           "StrictModes no\nAllowTcpForwarding yes\nUseDNS no\nPidFile none\nMaxAuthTries 10\n"
           "LoginGraceTime 30\n"
           "# DEBUG1 logs each forwarded channel: server_request_direct_tcpip ... target H port P\n"
           "LogLevel DEBUG1\n";
    serve_ns_fd_ = ::open(serve_in.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (serve_ns_fd_ < 0) throw std::runtime_error("cannot open " + serve_in.path());
    if (listen_in == nullptr) {
      listen_fd_ = listen_loopback(&port_);
    } else {
      // A socket belongs to the namespace it was created in: make it on a
      // thread that entered listen_in (setns changes only the calling thread).
      std::thread([&] {
        int ns = ::open(listen_in->path().c_str(), O_RDONLY | O_CLOEXEC);
        if (ns >= 0 && ::setns(ns, CLONE_NEWNET) == 0) listen_fd_ = listen_loopback(&port_);
        if (ns >= 0) ::close(ns);
      }).join();
    }
    if (listen_fd_ < 0) throw std::runtime_error("jump host: cannot listen on 127.0.0.1");
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC);
    if (wake_fd_ < 0) throw std::runtime_error("eventfd failed");
  } catch (...) {
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (serve_ns_fd_ >= 0) ::close(serve_ns_fd_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
  thread_ = std::thread([this] { serve(); });
}

InetdSshd::~InetdSshd() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
  thread_.join();
  ::close(listen_fd_);
  // Every sshd -i this fixture started, and what each forked (same group);
  // a paused one is resumed so that it can end.
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (pid_t pid : children_) ::kill(-pid, SIGTERM), ::kill(pid, SIGTERM), ::kill(-pid, SIGCONT);
  }
  for (int waited = 0; waited < 3000; waited += 50) {
    reap(false);
    std::lock_guard<std::mutex> lock(mu_);
    if (children_.empty()) break;
    ::usleep(50'000);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (pid_t pid : children_) ::kill(-pid, SIGKILL), ::kill(pid, SIGKILL);
  }
  reap(true);
  ::close(wake_fd_);
  ::close(serve_ns_fd_);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void InetdSshd::drop_connections() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (pid_t pid : children_) ::kill(-pid, SIGKILL), ::kill(pid, SIGKILL);
  }
  reap(true);
}

void InetdSshd::pause_connections(bool pause) {
  std::lock_guard<std::mutex> lock(mu_);
  for (pid_t pid : children_) ::kill(-pid, pause ? SIGSTOP : SIGCONT);
}

void InetdSshd::reap(bool all) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = children_.begin(); it != children_.end();) {
    if (::waitpid(*it, nullptr, all ? 0 : WNOHANG) == *it)
      it = children_.erase(it);
    else
      ++it;
  }
}

void InetdSshd::serve() {
  // Everything the child needs is ready before fork: after it, only system calls.
  const std::string config = dir_ + "/sshd_config";
  const std::string log_path = log();
  const char* argv[] = {"sshd", "-i", "-e", "-f", config.c_str(), nullptr};
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int ready = ::poll(fds, 2, 200);
    reap(false);
    if (ready > 0 && (fds[1].revents & POLLIN)) return;
    if (ready <= 0 || !(fds[0].revents & POLLIN)) continue;
    int conn = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) continue;
    int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    pid_t pid = ::fork();
    if (pid == 0) {
      // Own process group (the destructor kills it whole), then the serving
      // namespace, and a private /run with the privilege separation directory
      // Debian's sshd insists on; the real /run is not touched.
      ::setsid();
      if (::setns(serve_ns_fd_, CLONE_NEWNET) != 0) ::_exit(121);
      if (::unshare(CLONE_NEWNS) != 0) ::_exit(122);
      if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(123);
      if (::mount("ratchet-jump-run", "/run", "tmpfs", 0, "mode=755,size=4m") != 0) ::_exit(124);
      if (::mkdir("/run/sshd", 0755) != 0) ::_exit(125);
      ::dup2(conn, 0);
      ::dup2(conn, 1);
      if (log_fd >= 0) ::dup2(log_fd, 2);
      ::close_range(3, ~0U, 0);
      ::execv("/usr/sbin/sshd", const_cast<char* const*>(argv));
      ::_exit(127);
    }
    ::close(conn);
    if (log_fd >= 0) ::close(log_fd);
    if (pid > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      children_.push_back(pid);
      ++connections_;
    }
  }
}

std::string InetdSshd::known_hosts_line() const {
  std::ifstream f(dir_ + "/ssh_host_ed25519_key.pub");
  std::string type, key;
  f >> type >> key;
  return "[127.0.0.1]:" + std::to_string(port_) + " " + type + " " + key;
}

void InetdSshd::authorize(const std::string& pubkey_file) {
  std::ifstream in(pubkey_file);
  std::string line;
  std::getline(in, line);
  std::ofstream(dir_ + "/authorized_keys/root", std::ios::app) << line << "\n";
}

}  // namespace ratchet::testing
