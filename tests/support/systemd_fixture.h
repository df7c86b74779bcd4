#pragma once
// A real systemd host for tests: tests/lab/systemd-host.sh (systemd-nspawn) under RAII.
#include <map>
#include <string>
#include <vector>

namespace ratchet::testing {

/// A lab host with real systemd as PID 1, reachable as root by ssh on 127.0.0.1:port().
/// The constructor makes the rootfs available (`ensure`), picks a free port and boots
/// it; the destructor stops it and removes its state directory, also when the test
/// failed. If the test process dies without unwinding (ctest timeout, Ctrl-C), a
/// watchdog started with the host stops it.
class SystemdHost {
 public:
  /// Whether this machine can run a host (root, systemd-nspawn, ssh, a rootfs or the
  /// means to build one); if not, `*why` says what is missing.
  static bool available(std::string* why);

  /// Boots a host. Throws std::runtime_error (with the console log's tail) on failure.
  SystemdHost();
  ~SystemdHost();
  SystemdHost(const SystemdHost&) = delete;
  SystemdHost& operator=(const SystemdHost&) = delete;

  int port() const { return port_; }
  const std::string& state_dir() const { return state_dir_; }
  /// Private key that logs in as root (and as users made by `systemd-host.sh add-user`).
  std::string client_key() const { return state_dir_ + "/client_key"; }
  /// known_hosts with this host's key as `[127.0.0.1]:PORT`.
  std::string known_hosts() const { return state_dir_ + "/known_hosts"; }
  /// Seconds `ensure` took (about 0 when the rootfs exists) and boot-to-ssh seconds.
  double ensure_seconds() const { return ensure_s_; }
  double boot_seconds() const { return boot_s_; }

  /// Runs `cmd` as root through OpenSSH's ssh client (for test set-up and assertions,
  /// not for the code under test). Returns its exit status (255: ssh itself failed);
  /// stdout goes to `*out`, stderr to `*err` (to this process's stderr if null).
  int ssh(const std::string& cmd, std::string* out, std::string* err = nullptr);

  /// Runs tests/lab/stage-inference.sh on the host and returns its KEY=VALUE lines
  /// (DEVICE_DIR, DEVICE_GLOB, DEVICES, PID_FILE, SERVER_PID, CHILD_PID, WORKER_PID,
  /// KEEP_PID). Throws std::runtime_error if staging fails.
  std::map<std::string, std::string> stage_inference();

  /// Path of tests/lab/systemd-host.sh in the source tree.
  static std::string script();

 private:
  std::vector<std::string> ssh_argv(const std::string& cmd) const;

  int port_ = 0;
  std::string state_dir_;
  double ensure_s_ = 0;
  double boot_s_ = 0;
};

}  // namespace ratchet::testing
