#pragma once
// Network namespaces for jump host tests ([jump]): a target sshd that only a
// jump host can reach. NetNs is a namespace the test creates (`ip netns add`,
// loopback up); SshdHost(ns.exec_prefix()) runs an sshd inside it on
// 127.0.0.1; InetdSshd is a jump host that accepts on 127.0.0.1 in one
// namespace and serves each connection with `sshd -i` inside another, so the
// connections it forwards are dialled from there.
#include <sys/types.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ratchet::testing {

/// A network namespace of its own ("ratchet-t<pid>-<n>") with only loopback,
/// up. The constructor throws std::runtime_error on failure; the destructor
/// deletes it (`ip netns del`); stop the processes inside it first.
class NetNs {
 public:
  NetNs();
  ~NetNs();
  NetNs(const NetNs&) = delete;
  NetNs& operator=(const NetNs&) = delete;

  const std::string& name() const { return name_; }
  /// "/run/netns/NAME", for setns(2).
  std::string path() const { return "/run/netns/" + name_; }
  /// "ip netns exec NAME": prefix a command line with it to run it inside.
  std::string exec_prefix() const { return "ip netns exec " + name_; }

 private:
  std::string name_;
};

/// A jump host: listens on 127.0.0.1:port() in `listen_in` (nullptr = the
/// test's own namespace) and runs `/usr/sbin/sshd -i` inside `serve_in` for
/// each connection (own host key, root logs in with client_key() or any key
/// given to authorize(), LogLevel DEBUG1 to log()). The constructor throws
/// std::runtime_error on failure; the destructor stops the listener thread,
/// kills every sshd it started (by PID and process group) and reaps them.
class InetdSshd {
 public:
  explicit InetdSshd(const NetNs& serve_in, const NetNs* listen_in = nullptr);
  ~InetdSshd();
  InetdSshd(const InetdSshd&) = delete;
  InetdSshd& operator=(const InetdSshd&) = delete;

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  std::string client_key() const { return dir_ + "/client_key"; }
  std::string log() const { return dir_ + "/sshd.log"; }
  /// The known_hosts line for this host as the test's namespace sees it:
  /// "[127.0.0.1]:PORT ssh-ed25519 AAAA...".
  std::string known_hosts_line() const;
  /// Also lets root log in with the public key in `pubkey_file` ("KEY.pub").
  void authorize(const std::string& pubkey_file);
  /// Connections accepted so far (each served by its own sshd -i).
  int connections() const { return connections_.load(); }
  /// Kills every sshd -i serving a connection now (SIGKILL to its process
  /// group) and reaps it: those connections drop, as when a bastion dies.
  void drop_connections();
  /// SIGSTOP (pause) or SIGCONT (resume) to every sshd -i serving a
  /// connection now, by process group: a bastion that hangs, its TCP open.
  /// The destructor resumes them first.
  void pause_connections(bool pause);

 private:
  void serve();  // the listener thread
  void reap(bool all);

  std::string dir_;
  int port_ = 0;
  int listen_fd_ = -1;
  int serve_ns_fd_ = -1;  // /run/netns/NAME of serve_in, for setns in each child
  int wake_fd_ = -1;      // eventfd: the destructor wakes the listener
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::vector<pid_t> children_;  // sshd -i processes not yet reaped (each its own group)
  std::thread thread_;
};

}  // namespace ratchet::testing
