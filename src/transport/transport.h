#pragma once
// The seam between the engine and a host: connect, run a command, close.
// Backends: ssh (libssh, ssh_transport.h) and local (/bin/sh, unit speed only).
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "transport/wire.h"
#include "util/duration.h"
#include "util/hash.h"

namespace ratchet::transport {

/// How commands reach a host (--transport): an exec channel each (channel),
/// or one long-lived shell per session that runs them all (session,
/// docs/transport.md), falling back to channels where it cannot start.
enum class ExecMode { channel, session };

/// Keepalives (ssh_config(5) ServerAliveInterval, ServerAliveCountMax): once
/// `interval` passes with nothing from the host, a `keepalive@openssh.com`
/// request goes out; `count` of them in a row unanswered end the connection.
struct Keepalive {
  util::Millis interval{0};  ///< 0 = none
  int count = 3;             ///< at least 1
};

/// Where and how to connect. Empty fields fall back to ~/.ssh/config, then to
/// OpenSSH's defaults (port 22, the local user name).
struct Endpoint {
  std::string name;         ///< inventory name; the ssh config's host argument when `address` is ""
  std::string address;      ///< the ssh config's host argument (an alias or a HostName); "" = name
  int port = 0;             ///< 0 = ssh config or 22
  std::string user;         ///< "" = ssh config or local user
  std::string identity;     ///< extra private key file, tried first (kept with IdentitiesOnly yes, as ssh -i)
  std::string known_hosts;  ///< "" = ~/.ssh/known_hosts
  std::string ssh_config;   ///< "" = ~/.ssh/config; "none" = read no config
  bool accept_new = false;  ///< record a first-seen host key (StrictHostKeyChecking=accept-new)
  util::Millis connect_timeout{10'000};  ///< per session: the target's, and each jump hop's
  /// Jump hosts, "[user@]host[:port],..." first hop first (jump_spec.h): each a
  /// session with these same settings. "" = the ssh config's ProxyJump;
  /// "none" = connect directly whatever the config says.
  std::string jump;
  /// A saved plan's host keys ("SHA256:..."): when not empty, a server key not
  /// among them is refused (host_key_changed) whatever known_hosts says now.
  std::vector<std::string> pinned_keys;
  ExecMode exec_mode = ExecMode::session;
  /// --keepalive; an interval of 0 = the ssh config's ServerAliveInterval and
  /// ServerAliveCountMax (none there either: no keepalives).
  Keepalive keepalive;
};

/// What connect() learned, for the transcript's `connect` event.
struct ConnectInfo {
  std::string address;
  int port = 0;
  std::string user;
  std::string fingerprint;       ///< "SHA256:..." as ssh-keygen -l prints it
  std::string auth_method;       ///< "publickey (agent)", "publickey (FILE)", ...
  std::vector<std::string> via;  ///< jump hops gone through, "user@host:port", first hop first
  /// The connection to the first jump hop was already open (another host's
  /// session rode on it too): ratchet keeps one connection per jump host.
  bool jump_reused = false;
  long long ms = 0;              ///< the whole connect, hops included
  /// Each earlier try that the server reset before authentication (sshd's
  /// MaxStartups, a jump host's), and the wait before the next: "reset before
  /// authentication (...): tried again after 250 ms". Empty when the first try held.
  std::vector<std::string> retries;
};

enum class FailureKind { dns, refused, timeout, host_key_unknown, host_key_changed, auth, other };

/// Why connect() failed. Host-key failures map to exit 4, the rest to exit 3;
/// a jump hop's failure keeps its kind and its message begins "via HOP".
struct ConnectError {
  FailureKind kind = FailureKind::other;
  std::string message;                     ///< one line, names the host and the fix
  std::vector<std::string> methods_tried;  ///< for auth failures
  /// The server (or a jump host) closed the connection before authentication:
  /// sshd's MaxStartups drops such connections at random under load. connect()
  /// tries again, a bounded number of times (kResetRetries).
  bool reset_before_auth = false;
  std::vector<std::string> retries;  ///< as ConnectInfo::retries, for the tries before this failure
};

/// How many times connect() tries again after a reset before authentication,
/// waiting 250 ms, then twice as long each time (up to 2 s), with jitter.
inline constexpr int kResetRetries = 4;

/// "dns", "refused", "timeout", "host_key", "auth", "other" (transcript `cause`).
std::string cause_name(FailureKind k);

/// The default drain grace (ExecRequest::drain_grace): 2 s.
inline constexpr util::Millis kDrainGrace{2'000};

/// One remote command, typed: the script as the step asked and how to run it.
/// The transport wraps it for the wire itself (wire.h: wire_form; the ssh
/// backend sends that, the local one runs it with /bin/sh -c).
struct ExecRequest {
  std::string script;               ///< sh command line, rendered, before any wrapping
  const Library* library = nullptr; ///< sent ahead of a script that calls it (wire.h); null = none
  std::string stdin_data;           ///< the command's own input, written then EOF; empty = EOF at once
  /// A local file streamed after stdin_data (copy's uploads: never held in
  /// memory); "" = none. Such a command always gets a channel of its own.
  std::string stdin_file;
  /// >= 0: stdout goes to this open file (fetch's downloads) instead of the
  /// capture, at most stdout_limit bytes of it (the rest is counted, not
  /// written); out.data stays empty, out.total and out.sha256 cover every byte.
  /// Such a command always gets a channel of its own.
  int stdout_fd = -1;
  unsigned long long stdout_limit = 0;
  /// Through sudo (wire.h): user, -S (password first on stdin) or -n, the C
  /// locale for the become probe. The watchdog runs with the same become.
  Become become;
  std::string become_password;      ///< read by sudo -S when become.password; never recorded
  /// The deadline enforced on the host (ms, through run_script()); a death by
  /// signal at or after it is reported as timed_out. 0 = none: plain /bin/sh -c.
  util::Millis host_timeout{0};
  util::Millis timeout{60'000};     ///< client-side deadline for the whole exchange (ms)
  size_t capture = 1 << 20;         ///< bytes kept per stream: head and tail halves
  /// Polled while waiting (every <= 200 ms); once true the command is stopped
  /// (its process group TERMed, KILLed 1 s later), the exchange ends and
  /// `error` is "interrupted". May be null.
  const std::atomic<bool>* cancel = nullptr;
  /// How long to keep reading after the exit status came while something
  /// still holds the output open (a background child the command started):
  /// then the exchange ends, the child is left running and `warning` says so.
  util::Millis drain_grace = kDrainGrace;
  /// Names the command on the host (wire.h new_run_id) when host_timeout > 0;
  /// "" = the transport draws one (then sent_form() cannot show it).
  std::string run_id;
};

/// Output of one stream, capped: head and tail kept, the middle dropped.
struct Captured {
  std::string data;
  unsigned long long total = 0;    ///< bytes the command wrote
  unsigned long long dropped = 0;  ///< bytes not kept (total - data.size() - marker)
  std::string sha256;              ///< of all `total` bytes, kept or not (hex)
  std::string sink_error;          ///< written to a file (sink_to): why a write failed ("" = none)
};

/// Inserted between head and tail when a stream exceeded its cap, exactly
/// "\n[ratchet: N bytes dropped]\n" (N = Captured::dropped, decimal).
std::string capture_marker(unsigned long long dropped);

/// Accumulates one stream under a cap of `cap` bytes: keeps the first cap/2 and
/// the last cap - cap/2 bytes, counts the rest as dropped.
class CaptureBuffer {
 public:
  explicit CaptureBuffer(size_t cap);
  /// From now on the bytes go to `fd` (at most `limit` of them), none are kept.
  void sink_to(int fd, unsigned long long limit);
  void append(const char* data, size_t n);
  /// All bytes when total <= cap, else head + capture_marker(dropped) + tail.
  Captured finish() const;

 private:
  size_t head_cap_, tail_cap_;
  std::string head_, tail_;  // tail_ may hold up to 2*tail_cap_ before trimming
  unsigned long long total_ = 0;
  util::Sha256 sha_;         // of every byte appended
  int sink_fd_ = -1;
  unsigned long long sink_limit_ = 0;
  std::string sink_error_;
};

/// The result of one command. A failed command is a result, not an error.
struct ExecResult {
  int exit_code = -1;      ///< -1 when killed by a signal or no status came
  std::string signal;      ///< "TERM", "KILL", ... when killed by a signal
  bool timed_out = false;  ///< the deadline passed before the command ended
  long long ms = 0;
  Captured out, err;
  std::string error;  ///< transport failure (channel could not open, ...); "" = none
  /// The command's process on the host, from the wrapper's line (0 = unknown).
  long remote_pid = 0;
  /// The host-side watchdog was armed: "" = not needed, else "armed" or why
  /// it could not be ("watchdog: ...").
  std::string watchdog;
  /// Something the caller should show although the command succeeded: the
  /// output was still held open after the exit status (which processes hold
  /// it, left running). "" = none.
  std::string warning;
  /// What the login printed before ratchet's go line (an rc file's output, a
  /// forced command's answer), stdout's then stderr's, at most 4 KiB each: never
  /// the command's output. "" = nothing.
  std::string login_output;
};

class Transport {
 public:
  virtual ~Transport() = default;
  /// Opens the session. Returns nullopt on success and fills *info.
  virtual std::optional<ConnectError> connect(ConnectInfo* info) = 0;
  /// Runs one command and returns its result. Over ssh, one session per host:
  /// with ExecMode::session the command runs in the session shell, on the one
  /// channel that shell keeps open (docs/transport.md); with ExecMode::channel,
  /// with a stdin_file or stdout_fd, or once the shell could not start, on an
  /// exec channel of its own. The local backend runs /bin/sh -c.
  virtual ExecResult exec(const ExecRequest& req) = 0;
  /// Closes the session; safe to call twice.
  virtual void close() = 0;
  /// False once the session is gone (closed, or the connection dropped), so
  /// the caller knows to connect() again before the next exec().
  virtual bool connected() const { return true; }
};

/// What ssh config and the inventory make of an endpoint (ssh -G, in short).
struct ResolvedEndpoint {
  std::string address;   ///< the HostName that would be dialled
  int port = 22;
  std::string user;
  std::string identity;  ///< the inventory's file, else the config's first IdentityFile, expanded ("" = defaults)
  /// The ssh config's IdentitiesOnly for this host (ssh_config(5), read as
  /// OpenSSH does: transport/ssh_config_scan.h): connect() then offers only
  /// the identity and the config's IdentityFile keys (the default id_* files
  /// when neither names one), the agent only for those keys.
  bool identities_only = false;
  std::string jump;      ///< the jump connect() takes: Endpoint::jump, else ProxyJump; "" = direct
  std::string proxy;     ///< a ProxyCommand the user wrote (no jump), run by libssh; "" = none
  /// The fingerprints ("SHA256:...") known_hosts lists for it now; none = not known yet.
  std::vector<std::string> known_keys;
};

/// Applies ep.ssh_config (or ~/.ssh/config) and then the inventory's overrides,
/// exactly as connect() does, and connects to nothing. Fails for a missing -F
/// file or a host name libssh rejects.
std::optional<ConnectError> resolve_endpoint(const Endpoint& ep, ResolvedEndpoint* out);

/// A libssh session to `ep` (not yet connected). connect() goes through
/// ep.jump / ProxyJump with ratchet's own sessions; close() and the destructor
/// stop every hop and thread it started.
std::unique_ptr<Transport> make_ssh_transport(const Endpoint& ep);

/// Runs commands with /bin/sh -c on this machine: for unit tests only.
std::unique_ptr<Transport> make_local_transport();

}  // namespace ratchet::transport
