#include "support/ssh_agent_fixture.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "support/sshd_fixture.h"
#include "util/shell.h"

namespace ratchet::testing {

SshAgent::SshAgent() {
  char tmpl[] = "/tmp/ratchet-agent-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  socket_ = dir_ + "/agent.sock";
  int status = -1;
  std::string out = run_local(util::shell_join({"ssh-agent", "-s", "-a", socket_}) + " 2>&1", &status);
  auto at = out.find("SSH_AGENT_PID=");
  if (status == 0 && at != std::string::npos) pid_ = std::atoi(out.c_str() + at + 14);
  if (pid_ <= 0) {
    std::filesystem::remove_all(dir_);
    throw std::runtime_error("ssh-agent did not start:\n" + out);
  }
}

SshAgent::~SshAgent() {
  // Only the agent this fixture started: check the PID still runs ssh-agent.
  std::ifstream cmdline("/proc/" + std::to_string(pid_) + "/cmdline");
  std::string cmd((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  if (cmd.find("ssh-agent") != std::string::npos) {
    ::kill(pid_, SIGTERM);
    if (!wait_pid_gone(pid_, 5000)) ::kill(pid_, SIGKILL);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void SshAgent::add(const std::string& key) const {
  int status = -1;
  std::string out = run_local("SSH_AUTH_SOCK=" + util::shell_quote(socket_) + " ssh-add -q " +
                                  util::shell_quote(key) + " </dev/null 2>&1",
                              &status);
  if (status != 0) throw std::runtime_error("ssh-add " + key + " failed: " + out);
}

std::string SshAgent::list() const {
  return run_local("SSH_AUTH_SOCK=" + util::shell_quote(socket_) + " ssh-add -L 2>/dev/null");
}

ScopedEnv::ScopedEnv(const std::string& name, const std::string& value) : name_(name) {
  if (const char* v = std::getenv(name.c_str())) old_ = v;
  ::setenv(name.c_str(), value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
  if (old_)
    ::setenv(name_.c_str(), old_->c_str(), 1);
  else
    ::unsetenv(name_.c_str());
}

}  // namespace ratchet::testing
