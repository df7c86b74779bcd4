// User authentication: public keys only (no passwords, no prompts).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "transport/ssh_transport.h"

namespace ratchet::transport::ssh {

namespace {

/// What ssh_userauth_publickey_auto will offer, for messages: the agent (when
/// SSH_AUTH_SOCK is set) and libssh's default key files that exist. IdentityFile
/// lines of an ssh config are offered too but cannot be listed through the API.
std::vector<std::string> auto_sources() {
  std::vector<std::string> out;
  if (const char* sock = std::getenv("SSH_AUTH_SOCK"); sock && *sock) out.push_back("agent");
  for (const char* name : {"id_ed25519", "id_ecdsa", "id_rsa"}) {
    std::string path = expand_home(std::string("~/.ssh/") + name);
    if (::access(path.c_str(), R_OK) == 0) out.push_back(path);
  }
  return out;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

std::optional<ConnectError> authenticate(ssh_session s, const Target& t,
                                         const std::string& identity, std::string* method) {
  ConnectError e;
  auto broken = [&](const char* stage) {
    e.kind = FailureKind::other;
    e.message = fmt::format("{}: connection lost during {} authentication: {}", t.where, stage,
                            ssh_get_error(s));
    return e;
  };
  // "none" asks the server which methods it accepts (and rarely succeeds).
  int rc = ssh_userauth_none(s, nullptr);
  if (rc == SSH_AUTH_SUCCESS) {
    *method = "none";
    return std::nullopt;
  }
  if (rc == SSH_AUTH_ERROR) return broken("none");
  if ((ssh_userauth_list(s, nullptr) & SSH_AUTH_METHOD_PUBLICKEY) == 0) {
    e.kind = FailureKind::auth;
    e.message = fmt::format(
        "{}: the server does not accept public keys for {}; ratchet "
        "authenticates with keys only",
        t.where, t.user);
    return e;
  }
  if (!identity.empty()) {
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(identity.c_str(), nullptr, nullptr, nullptr, &key) == SSH_OK) {
      rc = ssh_userauth_publickey(s, nullptr, key);
      ssh_key_free(key);
      e.methods_tried.push_back(fmt::format("publickey ({})", identity));
      if (rc == SSH_AUTH_SUCCESS) {
        *method = e.methods_tried.back();
        return std::nullopt;
      }
      if (rc == SSH_AUTH_ERROR) return broken("publickey");
    } else {
      e.methods_tried.push_back(
          fmt::format("publickey ({}: unreadable, or protected by a passphrase)", identity));
    }
  }
  std::vector<std::string> sources = auto_sources();
  rc = ssh_userauth_publickey_auto(s, nullptr, nullptr);
  for (const auto& src : sources) e.methods_tried.push_back(fmt::format("publickey ({})", src));
  if (rc == SSH_AUTH_SUCCESS) {
    *method = sources.empty() ? "publickey (ssh config identity)"
                              : fmt::format("publickey ({})", join(sources));
    return std::nullopt;
  }
  if (rc == SSH_AUTH_ERROR) return broken("publickey");
  e.kind = FailureKind::auth;
  e.message = fmt::format(
      "{}: authentication as {} failed (tried: {}); add the public key to "
      "{}'s authorized_keys, or set the host's identity",
      t.where, t.user, e.methods_tried.empty() ? "no usable key" : join(e.methods_tried), t.user);
  if (rc == SSH_AUTH_PARTIAL)
    e.message = fmt::format(
        "{}: partial authentication as {}: the server wants more than a "
        "public key; ratchet cannot do multi-factor logins",
        t.where, t.user);
  return e;
}

}  // namespace ratchet::transport::ssh
