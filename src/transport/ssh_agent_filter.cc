// A filtering ssh-agent between libssh and the user's agent (ssh_agent_filter.h).
#include "transport/ssh_agent_filter.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/text.h"

namespace ratchet::transport::ssh {

namespace {

constexpr unsigned char kFailure = 5;            // SSH_AGENT_FAILURE
constexpr unsigned char kRequestIdentities = 11;  // SSH2_AGENTC_REQUEST_IDENTITIES
constexpr unsigned char kIdentitiesAnswer = 12;   // SSH2_AGENT_IDENTITIES_ANSWER
constexpr unsigned char kSignRequest = 13;        // SSH2_AGENTC_SIGN_REQUEST
constexpr size_t kMaxMessage = 256 * 1024;        // as ssh-agent's own limit

bool read_full(int fd, char* buf, size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, buf, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    buf += r;
    n -= size_t(r);
  }
  return true;
}

bool write_full(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t w = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    off += size_t(w);
  }
  return true;
}

std::string u32(size_t v) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = char((v >> (24 - 8 * i)) & 0xff);
  return out;
}

size_t get_u32(const std::string& s, size_t at) {
  size_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

/// One length-prefixed message, without its length.
bool read_message(int fd, std::string* msg) {
  char len[4];
  if (!read_full(fd, len, 4)) return false;
  size_t n = get_u32(std::string(len, 4), 0);
  if (n == 0 || n > kMaxMessage) return false;
  msg->assign(n, '\0');
  return read_full(fd, msg->data(), n);
}

bool write_message(int fd, const std::string& msg) { return write_full(fd, u32(msg.size()) + msg); }

/// The SSH string (uint32 length + bytes) at *at of `s`; advances *at.
bool get_string(const std::string& s, size_t* at, std::string* out) {
  if (*at + 4 > s.size()) return false;
  size_t n = get_u32(s, *at);
  if (n > s.size() - *at - 4) return false;
  *out = s.substr(*at + 4, n);
  *at += 4 + n;
  return true;
}

void set_recv_timeout(int fd, int seconds) {
  timeval tv{seconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

}  // namespace

std::unique_ptr<AgentFilter> AgentFilter::open(const std::string& path, std::string* err) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    *err = fmt::format("agent socket path `{}` is empty or too long", path);
    return nullptr;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    *err = fmt::format("cannot reach the agent at {}: {}", path, std::strerror(errno));
    if (fd >= 0) ::close(fd);
    return nullptr;
  }
  std::unique_ptr<AgentFilter> f(new AgentFilter(fd));
  set_recv_timeout(fd, 10);  // listing keys never waits for a person
  std::string reply;
  if (!write_message(fd, std::string(1, char(kRequestIdentities))) || !read_message(fd, &reply) ||
      static_cast<unsigned char>(reply[0]) != kIdentitiesAnswer || reply.size() < 5) {
    *err = fmt::format("the agent at {} did not list its keys", path);
    return nullptr;
  }
  size_t n = get_u32(reply, 1), at = 5;
  for (size_t i = 0; i < n; ++i) {
    std::string blob, comment;
    if (!get_string(reply, &at, &blob) || !get_string(reply, &at, &comment)) {
      *err = fmt::format("the agent at {} sent a malformed key list", path);
      return nullptr;
    }
    f->keys_.push_back(std::move(blob));
  }
  set_recv_timeout(fd, 0);  // a signature may wait for a confirmation (ssh-add -c)
  return f;
}

AgentFilter::~AgentFilter() {
  if (thread_.joinable()) {
    // Wakes the thread's read with end-of-file; libssh is done with the agent
    // by now (authentication is over), so nothing is cut short.
    ::shutdown(fd_, SHUT_RDWR);
    ::shutdown(agent_fd_, SHUT_RDWR);
    thread_.join();
  }
  if (fd_ >= 0) ::close(fd_);
  if (agent_fd_ >= 0) ::close(agent_fd_);
}

bool AgentFilter::holds(const std::string& blob) const {
  for (const auto& k : keys_)
    if (k == blob) return true;
  return false;
}

std::string AgentFilter::find(const std::string& base64_blob) const {
  for (const auto& k : keys_)
    if (util::base64(k) == base64_blob) return k;
  return "";
}

void AgentFilter::allow_only(const std::string& blob) {
  std::lock_guard<std::mutex> lock(mu_);
  allowed_ = blob;
}

int AgentFilter::serve(std::string* err) {
  if (thread_.joinable()) {
    *err = "the agent filter is already serving";
    return -1;
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    *err = fmt::format("socketpair: {}", std::strerror(errno));
    return -1;
  }
  fd_ = sv[0];
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& e) {
    *err = e.what();
    ::close(sv[1]);
    return -1;
  }
  return sv[1];
}

void AgentFilter::run() {
  std::string request;
  while (read_message(fd_, &request))
    if (!write_message(fd_, answer(request))) break;
}

std::string AgentFilter::answer(const std::string& request) {
  std::string allowed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    allowed = allowed_;
  }
  const auto type = static_cast<unsigned char>(request[0]);
  if (type == kRequestIdentities) {
    std::string reply(1, char(kIdentitiesAnswer));
    if (!allowed.empty() && holds(allowed))
      reply += u32(1) + u32(allowed.size()) + allowed + u32(0);  // one key, empty comment
    else
      reply += u32(0);
    return reply;
  }
  if (type == kSignRequest) {
    size_t at = 1;
    std::string blob, reply;
    if (get_string(request, &at, &blob) && !allowed.empty() && blob == allowed &&
        write_message(agent_fd_, request) && read_message(agent_fd_, &reply))
      return reply;
  }
  return std::string(1, char(kFailure));  // anything else: refused
}

}  // namespace ratchet::transport::ssh
