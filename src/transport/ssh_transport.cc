// The libssh Transport: one session per host for the whole run (a channel per
// command, ssh_exec.cc), set up by ssh_session.cc, through jump hosts when the
// inventory or ssh config names any (ssh_jump.cc).
#include "transport/ssh_transport.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "transport/keepalive.h"
#include "transport/session_shell.h"
#include "transport/ssh_config_scan.h"
#include "transport/ssh_jump.h"

namespace ratchet::transport {

namespace ssh {

std::string expand_home(const std::string& path) {
  if (path.empty() || path[0] != '~' || (path.size() > 1 && path[1] != '/')) return path;
  // Like ssh(1) (and libssh's %d): the passwd entry first, $HOME only without one.
  return user_home() + path.substr(1);
}

}  // namespace ssh

namespace {

using Clock = std::chrono::steady_clock;

class SshTransport final : public Transport {
 public:
  explicit SshTransport(Endpoint ep) : ep_(std::move(ep)) {}
  ~SshTransport() override { close(); }

  std::optional<ConnectError> connect(ConnectInfo* info) override;
  /// configure_session() only, then read back what libssh would use.
  std::optional<ConnectError> resolve(ResolvedEndpoint* out);
  ExecResult exec(const ExecRequest& req) override;
  void close() override;
  bool connected() const override {
    return connected_ && session_ != nullptr && ssh_is_connected(session_) == 1;
  }

 private:
  std::optional<ConnectError> open(ConnectInfo* info);

  Endpoint ep_;
  ssh_session session_ = nullptr;
  std::unique_ptr<ssh::JumpChain> chain_;  ///< the hops session_ rides on; null when direct
  int fd_ = -1;  ///< the socket from chain_ that session_ rides on; -1 when direct
  bool connected_ = false;
  ssh::Setup setup_;
  /// A command of a password become in that become's own shell (one sudo
  /// authentication per user and session); nullopt: it runs as any other,
  /// its sudo asking on its own (after *note says why, where something failed).
  std::optional<ExecResult> exec_become(const ExecRequest& req, std::string* note);
  /// Closes the idle shells but `keep` (sshd's MaxSessions: theirs may be needed).
  void close_idle_except(const ssh::SessionShell* keep);
  /// Asks for a channel again after sshd refused one: closes the other shells first.
  std::string open_shell(ssh::SessionShell& sh, const ExecRequest& req, bool* no_channel,
                         const ssh::BecomeStart* become = nullptr,
                         std::optional<ssh::SudoRefusal>* refusal = nullptr);

  ssh::SessionShell shell_;  ///< with ExecMode::session, once started
  /// The become shells, by become user ("" = root), once started.
  std::map<std::string, std::unique_ptr<ssh::SessionShell>> become_shells_;
  /// Per become user: sudo's refusal to start its shell, answered again
  /// without asking sudo (no second failed authentication).
  std::map<std::string, ExecResult> become_refused_;
  /// Per become user: why its shell could not start (its commands then run
  /// with a sudo of their own, as on a channel).
  std::map<std::string, std::string> become_fallback_;
  std::unique_ptr<ssh::KeepaliveWatch> keepalive_;  ///< while connected, when setup_.keepalive asks for one
  std::string fallback_;     ///< why the session shell could not start ("" = it may)
};

std::optional<ConnectError> SshTransport::connect(ConnectInfo* info) {
  std::vector<std::string> retries;
  std::mt19937 jitter(std::random_device{}());
  util::Millis wait{250};
  for (int attempt = 0;; ++attempt) {
    close();
    auto err = open(info);
    if (!err) {
      if (info) info->retries = retries;
      return err;
    }
    close();  // a failed connect holds nothing: no session, no hop reference, no channel
    if (!err->reset_before_auth || attempt >= kResetRetries) {
      err->retries = retries;
      if (!retries.empty()) err->message += fmt::format(" (after {} tries)", attempt + 1);
      return err;
    }
    // Spread the next tries of a fleet that was reset together.
    const util::Millis pause = wait + util::Millis(std::uniform_int_distribution<long>(0, wait.count() / 2)(jitter));
    retries.push_back(fmt::format("{}: tried again after {} ms", err->message, pause.count()));
    std::this_thread::sleep_for(pause);
    wait = std::min(wait * 2, util::Millis(2'000));
  }
}

std::optional<ConnectError> SshTransport::open(ConnectInfo* info) {
  const auto start = Clock::now();
  session_ = ssh_new();
  if (session_ == nullptr)
    return ConnectError{FailureKind::other, ep_.name + ": ssh_new failed", {}};
  if (auto err = ssh::configure_session(session_, ep_, &setup_)) return err;
  if (!setup_.jump.empty()) {
    chain_ = std::make_unique<ssh::JumpChain>();
    if (auto err = chain_->connect(ep_, setup_.jump, setup_.target.host, setup_.target.port, &fd_))
      return err;
  }
  // Over a jump the target's own key is still checked, under its own name and port.
  std::string fingerprint, method;
  if (auto err = ssh::open_session(session_, ep_, &setup_, &fd_, &fingerprint, &method)) return err;
  connected_ = true;
  if (setup_.keepalive.interval.count() > 0)
    keepalive_ = std::make_unique<ssh::KeepaliveWatch>(session_, setup_.keepalive, setup_.target.where);
  if (info) {
    info->address = setup_.target.host;
    info->port = setup_.target.port;
    info->user = setup_.target.user;
    info->fingerprint = fingerprint;
    info->auth_method = method;
    info->via = chain_ ? chain_->via() : std::vector<std::string>{};
    info->jump_reused = chain_ && chain_->reused();
    info->ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  }
  return std::nullopt;
}

ExecResult SshTransport::exec(const ExecRequest& req) {
  const ssh::Target& t = setup_.target;
  if (!connected_ || session_ == nullptr) {
    ExecResult r;
    r.error = fmt::format("{}: not connected", t.where.empty() ? ep_.name : t.where);
    return r;
  }
  // sshd's MaxSessions: a channel just closed holds its session until sshd has
  // reaped what ran on it, and an idle session shell holds one for good. A
  // refused channel is asked for again (nothing was sent), after the idle
  // shells are closed (each ends at its EOF), for up to 5 s.
  const auto until = Clock::now() + std::min<util::Millis>(ep_.connect_timeout, util::Millis(5'000));
  auto again = [&](const std::string& error) {
    if (!ssh::channel_refused(error) || Clock::now() >= until || (req.cancel && req.cancel->load())) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return true;
  };
  std::string note;
  // A streamed file (copy) needs a channel's flow control: the shell frames a known-size input.
  const bool shell_mode =
      ep_.exec_mode == ExecMode::session && fallback_.empty() && req.stdin_file.empty() && req.stdout_fd < 0;
  if (shell_mode && req.become.enabled && req.become.password) {
    if (std::optional<ExecResult> r = exec_become(req, &note)) return *r;
  }
  if (shell_mode) {
    // A shell that ended between commands (sshd's ChannelTimeout, a kill) is
    // no fault of this command: it runs in a fresh one, and says so.
    if (shell_.is_open()) {
      std::string gone = shell_.check_idle();
      if (!gone.empty())
        note = fmt::format("the session shell had ended since the last command ({}): this command ran in a fresh one",
                           gone);
    }
    if (!shell_.is_open()) {
      bool no_channel = false;
      std::string why = open_shell(shell_, req, &no_channel);
      if (!why.empty() && no_channel) {  // the session itself failed: a channel would too
        ExecResult r;
        r.error = why;
        return r;
      }
      if (!why.empty()) {
        fallback_ = why;
        note += fmt::format("{}the session shell could not start ({}): one channel per command from here",
                            note.empty() ? "" : "; ", why);
      }
    }
    if (shell_.is_open()) {
      ExecResult r = shell_.exec(session_, t, req, keepalive_.get());
      if (shell_.last_not_started()) {
        // A command before this one removed the shell's directory: this one
        // never started, and runs in a fresh shell.
        bool no_channel = false;
        if (open_shell(shell_, req, &no_channel).empty()) {
          r = shell_.exec(session_, t, req, keepalive_.get());
          note = "the session shell's directory had been removed (by an earlier command): this command ran in a "
                 "fresh shell";
        }
      }
      if (!note.empty()) r.warning = r.warning.empty() ? note : note + "; " + r.warning;
      if (keepalive_ && keepalive_->lost()) connected_ = false;  // the next command reconnects
      return r;
    }
  }
  ExecResult r = ssh::exec_channel(session_, t, req, keepalive_.get());
  if (ssh::channel_refused(r.error)) close_idle_except(nullptr);  // the next command starts fresh ones
  while (again(r.error)) r = ssh::exec_channel(session_, t, req, keepalive_.get());
  if (!note.empty()) r.warning = r.warning.empty() ? note : note + "; " + r.warning;
  if (keepalive_ && keepalive_->lost()) connected_ = false;  // the next command reconnects
  return r;
}

std::string SshTransport::open_shell(ssh::SessionShell& sh, const ExecRequest& req, bool* no_channel,
                                     const ssh::BecomeStart* become, std::optional<ssh::SudoRefusal>* refusal) {
  const auto until = Clock::now() + std::min<util::Millis>(ep_.connect_timeout, util::Millis(5'000));
  // sudo may wait on its PAM stack (a second factor): the command's own deadline, when longer.
  const util::Millis wait = become ? std::max(ep_.connect_timeout, req.host_timeout) : ep_.connect_timeout;
  std::string why;
  for (;;) {
    why = sh.open(session_, setup_.target, wait, no_channel, req.cancel, become, refusal);
    if (!*no_channel || !ssh::channel_refused(why) || Clock::now() >= until || (req.cancel && req.cancel->load()))
      return why;
    close_idle_except(&sh);  // an idle shell holds a session sshd may count
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void SshTransport::close_idle_except(const ssh::SessionShell* keep) {
  if (&shell_ != keep) shell_.close();
  for (auto& [user, sh] : become_shells_)
    if (sh.get() != keep) sh->close();
}

std::optional<ExecResult> SshTransport::exec_become(const ExecRequest& req, std::string* note) {
  const std::string& user = req.become.user;
  if (auto it = become_refused_.find(user); it != become_refused_.end()) return it->second;
  if (become_fallback_.count(user) != 0) return std::nullopt;
  // One line only (a password with a newline goes ahead of a command's stdin, as on a channel).
  if (req.become_password.find_first_of(std::string("\n\0", 2)) != std::string::npos) return std::nullopt;
  auto& sh = become_shells_[user];
  if (!sh) sh = std::make_unique<ssh::SessionShell>();
  std::string started;
  if (sh->is_open()) {
    if (std::string gone = sh->check_idle(); !gone.empty())
      *note = fmt::format("the become shell had ended since the last command ({}): sudo was asked again", gone);
  }
  if (!sh->is_open()) {
    bool no_channel = false;
    std::optional<ssh::SudoRefusal> refusal;
    const ssh::BecomeStart b{user, req.become_password};
    std::string why = open_shell(*sh, req, &no_channel, &b, &refusal);
    if (refusal) {  // nothing ran: sudo's answer, as a command's, for the become probe to read
      ExecResult r;
      r.exit_code = refusal->status;
      r.err.data = refusal->said;
      r.err.total = refusal->said.size();
      if (!req.cancel || !req.cancel->load()) become_refused_[user] = r;
      return r;
    }
    if (!why.empty() && no_channel) {
      ExecResult r;
      r.error = why;
      return r;
    }
    if (!why.empty()) {
      become_fallback_[user] = why;
      *note = fmt::format("the become shell could not start ({}): sudo asks for the password for every command "
                          "from here",
                          why);
      return std::nullopt;
    }
    started = "started";
  }
  ExecResult r = sh->exec(session_, setup_.target, req, keepalive_.get());
  if (sh->last_not_started()) {  // a command removed the shell's directory: a fresh one (sudo asks again)
    bool no_channel = false;
    const ssh::BecomeStart b{user, req.become_password};
    std::optional<ssh::SudoRefusal> refusal;
    if (open_shell(*sh, req, &no_channel, &b, &refusal).empty()) {
      r = sh->exec(session_, setup_.target, req, keepalive_.get());
      *note = "the become shell's directory had been removed (by an earlier command): this command ran in a fresh "
              "one (sudo was asked again)";
      started = "started";
    }
  }
  if (!note->empty()) r.warning = r.warning.empty() ? *note : *note + "; " + r.warning;
  if (keepalive_ && keepalive_->lost()) connected_ = false;  // the next command reconnects
  return r;
}

void SshTransport::close() {
  for (auto& [user, sh] : become_shells_) sh->close();  // their channels go before the session
  become_shells_.clear();
  become_refused_.clear();
  become_fallback_.clear();
  shell_.close();  // its channel goes before the session
  fallback_.clear();
  keepalive_.reset();  // its counters live in the session until then
  // Channels never outlive this: exec_channel frees each before returning, and
  // ssh_free releases any a remote close has not yet collected.
  ssh::free_session(session_, fd_);
  session_ = nullptr;
  fd_ = -1;
  chain_.reset();  // after the session riding on it: stops the pumps, frees the hops
  connected_ = false;
}

}  // namespace

std::optional<ConnectError> SshTransport::resolve(ResolvedEndpoint* out) {
  close();
  session_ = ssh_new();
  if (session_ == nullptr)
    return ConnectError{FailureKind::other, ep_.name + ": ssh_new failed", {}};
  auto err = ssh::configure_session(session_, ep_, &setup_);
  if (!err) {
    out->address = setup_.target.host;
    out->port = setup_.target.port;
    out->user = setup_.target.user;
    // The config's first IdentityFile in OpenSSH's order (libssh keeps its
    // list newest first, and its first entry is a default when none is set).
    out->identity = ep_.identity;
    if (out->identity.empty() && !setup_.keys.config_files.empty())
      out->identity = setup_.keys.config_files.front();
    out->identities_only = setup_.keys.identities_only;
    out->jump = setup_.jump;
    out->proxy = setup_.proxy_command;
    out->known_keys = ssh::known_fingerprints(session_, setup_.target);
  }
  close();
  return err;
}

std::optional<ConnectError> resolve_endpoint(const Endpoint& ep, ResolvedEndpoint* out) {
  SshTransport t(ep);
  return t.resolve(out);
}

std::unique_ptr<Transport> make_ssh_transport(const Endpoint& ep) {
  return std::make_unique<SshTransport>(ep);
}

}  // namespace ratchet::transport
