#pragma once
// Test helpers: start stand-in processes (own session, so the host library's
// "own session" protection does not hide them) and run shell snippets locally.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace ratchet::testing {

/// A process this test started with `sh -c script` in a new session, stdio on
/// /dev/null (so no straggler holds the test's output open); its process group
/// (everything it started that did not leave it) is killed (SIGKILL) and the
/// process reaped in the destructor, even when the test failed.
class OwnedProcess {
 public:
  explicit OwnedProcess(const std::string& script) {
    pid_ = fork();
    if (pid_ == 0) {
      setsid();
      int null = open("/dev/null", O_RDWR);
      if (null >= 0) dup2(null, 0), dup2(null, 1), dup2(null, 2);
      execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~OwnedProcess() { stop(); }
  OwnedProcess(const OwnedProcess&) = delete;
  OwnedProcess& operator=(const OwnedProcess&) = delete;
  pid_t pid() const { return pid_; }
  /// True while the process exists and is not a zombie.
  bool alive() const {
    int status;
    if (pid_ <= 0) return false;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      const_cast<OwnedProcess*>(this)->pid_ = -1;
      return false;
    }
    return kill(pid_, 0) == 0;
  }
  void stop() {
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);  // its own process group: this test's processes only
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }

 private:
  pid_t pid_ = -1;
};

struct ShellResult {
  int code = -1;
  std::string out, err;
};

/// Runs `script` with /bin/sh (stdin from `input`), returns exit code and output.
ShellResult run_sh(const std::string& script, const std::string& input = "");

/// Polls (every 20 ms, up to `ms`) until `pred()` is true; returns its last value.
template <class F>
bool eventually(F pred, int ms = 10000) {
  for (int waited = 0; waited < ms; waited += 20) {
    if (pred()) return true;
    usleep(20'000);
  }
  return pred();
}

/// `ratchet ARGS` (args begin with a space; a shell word list) started in the
/// background, stdout and stderr to DIR/TAG.out and DIR/TAG.err, for a test that
/// signals it; SIGKILLed and reaped in the destructor if it still runs.
struct BackgroundRatchet {
  pid_t pid = -1;
  std::string out, err;
  BackgroundRatchet(const std::string& dir, const std::string& args, const std::string& tag = "bg");
  /// Waits for the exit; returns the status as waitpid(2) gives it.
  int wait();
  ~BackgroundRatchet();
  BackgroundRatchet(const BackgroundRatchet&) = delete;
  BackgroundRatchet& operator=(const BackgroundRatchet&) = delete;
};

/// A fresh directory under /tmp (mkdtemp); not removed (tests may inspect it).
std::string temp_dir(const char* prefix = "ratchet-test");

/// A TCP socket listening on 127.0.0.1 that never accepts: a client's connect
/// succeeds (the kernel's backlog) but no SSH banner ever comes. Closed on
/// destruction. Throws std::runtime_error when it cannot listen.
class SilentListener {
 public:
  SilentListener();
  ~SilentListener();
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace ratchet::testing
