#include "support/sshd_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "util/shell.h"

namespace ratchet::testing {

std::string run_local(const std::string& command, int* status) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("popen failed: " + command);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int st = ::pclose(p);
  if (status) *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

int free_port() {
  for (;;) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ::close(fd);
      throw std::runtime_error("cannot find a free port");
    }
    ::close(fd);
    int port = ntohs(addr.sin_port);
    if (port != 2024) return port;
  }
}

bool pid_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  // Field 3 (state) follows the ")" that ends the command name.
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

bool wait_pid_gone(pid_t pid, int ms) {
  for (int waited = 0; waited <= ms; waited += 50) {
    if (!pid_alive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !pid_alive(pid);
}

SshdHost::SshdHost(const std::string& env) {
  char tmpl[] = "/tmp/ratchet-sshd-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  const std::string script = std::string(RATCHET_SOURCE_DIR) + "/tests/lab/sshd-host.sh";
  std::string out;
  int status = -1;
  for (int attempt = 0; attempt < 3 && status != 0; ++attempt) {  // a port can be taken meanwhile
    port_ = free_port();
    std::string cmd = util::shell_join({script, "start", dir_, std::to_string(port_)});
    out = run_local((env.empty() ? "" : env + " ") + cmd + " 2>&1", &status);
  }
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("SSH_HOST_PID=", 0) == 0) pid_ = std::atoi(line.c_str() + 13);
  if (status != 0 || pid_ <= 0) {
    std::filesystem::remove_all(dir_);
    throw std::runtime_error("sshd-host.sh start failed:\n" + out);
  }
}

SshdHost::~SshdHost() {
  stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void SshdHost::stop() {
  if (pid_ <= 0) return;
  // Only the sshd this fixture started: check the PID still runs sshd.
  std::ifstream cmdline("/proc/" + std::to_string(pid_) + "/cmdline");
  std::string cmd((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  if (cmd.find("sshd") != std::string::npos) {
    ::kill(pid_, SIGTERM);
    if (!wait_pid_gone(pid_, 5000)) ::kill(pid_, SIGKILL);
    wait_pid_gone(pid_, 2000);
  }
  pid_ = 0;
}

std::string SshdHost::known_hosts_line() const {
  std::ifstream f(known_hosts());
  std::string line;
  std::getline(f, line);
  return line;
}

transport::Endpoint SshdHost::endpoint() const {
  transport::Endpoint ep;
  ep.name = "lab";
  ep.address = "127.0.0.1";
  ep.port = port_;
  ep.user = "root";
  ep.identity = client_key();
  ep.known_hosts = known_hosts();
  ep.ssh_config = "none";
  ep.connect_timeout = util::Millis{5000};
  return ep;
}

}  // namespace ratchet::testing
