// User authentication: public keys only (no passwords, no prompts), with
// ssh_config(5)'s IdentitiesOnly applied (libssh 0.10 ignores it).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <vector>

#include "transport/ssh_agent_filter.h"
#include "transport/ssh_transport.h"

namespace ratchet::transport::ssh {

namespace {

/// What ssh_userauth_publickey_auto will offer, for messages: the agent (when
/// SSH_AUTH_SOCK is set), the ssh config's IdentityFile entries that exist (as
/// ratchet reads the config: libssh cannot list its own), and libssh's default
/// key files that exist.
// Why the identity file `path` gave no key: it does not exist, this user
// cannot read it (strerror), or it is readable and still no key without a
// passphrase (a locked key, or not a private key at all).
std::string identity_problem(const std::string& path) {
  if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) return "does not exist";
  if (::access(path.c_str(), R_OK) != 0) return fmt::format("cannot be read: {}", std::strerror(errno));
  return "protected by a passphrase, or not a private key";
}

std::vector<std::string> auto_sources(const KeyPlan& keys) {
  std::vector<std::string> out;
  if (const char* sock = std::getenv("SSH_AUTH_SOCK"); sock && *sock) out.push_back("agent");
  for (const auto& path : keys.config_files)
    if (::access(path.c_str(), R_OK) == 0) out.push_back(path);
  for (const char* name : {"id_ed25519", "id_ecdsa", "id_rsa"}) {
    std::string path = expand_home(std::string("~/.ssh/") + name);
    if (::access(path.c_str(), R_OK) == 0 &&
        std::find(out.begin(), out.end(), path) == out.end())
      out.push_back(path);
  }
  return out;
}

/// The key's algorithm when keys.accepted_algorithms (the ssh config's
/// PubkeyAcceptedAlgorithms) leaves it out, else "". An RSA key is usable
/// under any of its signature algorithms.
std::string refused_algorithm(const KeyPlan& keys, ssh_key key) {
  if (keys.accepted_algorithms.empty()) return "";
  std::string type = ssh_key_type_to_char(ssh_key_type(key)) ? ssh_key_type_to_char(ssh_key_type(key)) : "";
  std::vector<std::string> names{type};
  if (type == "ssh-rsa") names = {"rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"};
  std::string list = "," + keys.accepted_algorithms + ",";
  for (const auto& n : names)
    if (list.find("," + n + ",") != std::string::npos) return "";
  return type;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

/// IdentitiesOnly yes: the keys of the listed files, one at a time, each from
/// its file or else from the agent through an AgentFilter; never another.
class ListedKeys {
 public:
  ListedKeys(ssh_session s, const KeyPlan& keys, ConnectError* e) : s_(s), keys_(keys), e_(e) {}

  /// The files to offer, in order (ssh_auth's header comment says which).
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    if (!keys_.identity.empty()) out.push_back(keys_.identity);
    out.insert(out.end(), keys_.config_files.begin(), keys_.config_files.end());
    if (out.empty()) {
      // ssh(1)'s defaults, in its order, where it would find them; libssh
      // signs none of the other kinds (sk, xmss, dsa).
      for (const char* name : {"id_rsa", "id_ecdsa", "id_ed25519"}) {
        std::string path = expand_home(std::string("~/.ssh/") + name);
        if (::access(path.c_str(), F_OK) == 0 || ::access((path + ".pub").c_str(), F_OK) == 0)
          out.push_back(path);
      }
    }
    return out;
  }

  /// Offers the key of `file`; records it in methods_tried. Returns libssh's
  /// answer, or SSH_AUTH_DENIED when there was nothing to offer.
  int offer(const std::string& file) {
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(file.c_str(), nullptr, nullptr, nullptr, &key) == SSH_OK) {
      if (std::string algo = refused_algorithm(keys_, key); !algo.empty()) {
        ssh_key_free(key);
        e_->methods_tried.push_back(
            fmt::format("publickey ({}: {} not in PubkeyAcceptedAlgorithms)", file, algo));
        return SSH_AUTH_DENIED;
      }
      int rc = ssh_userauth_publickey(s_, nullptr, key);
      ssh_key_free(key);
      e_->methods_tried.push_back(fmt::format("publickey ({})", file));
      return rc;
    }
    std::string b64 = public_base64(file + ".pub");
    std::string blob = !b64.empty() && agent() ? agent_->find(b64) : "";
    if (!blob.empty()) {
      agent_->allow_only(blob);
      int rc = ssh_userauth_agent(s_, nullptr);
      agent_->allow_only("");
      e_->methods_tried.push_back(fmt::format("publickey (agent: {})", file));
      return rc;
    }
    bool exists = ::access(file.c_str(), F_OK) == 0;
    e_->methods_tried.push_back(fmt::format(
        "publickey ({}: {})", file,
        !exists || b64.empty() || !agent_ ? identity_problem(file) : "protected by a passphrase, and not in the agent"));
    return SSH_AUTH_DENIED;
  }

 private:
  /// The public key in `pub_file`, its wire form in base64, or "".
  static std::string public_base64(const std::string& pub_file) {
    ssh_key pub = nullptr;
    if (ssh_pki_import_pubkey_file(pub_file.c_str(), &pub) != SSH_OK) return "";
    char* b64 = nullptr;
    std::string out;
    if (ssh_pki_export_pubkey_base64(pub, &b64) == SSH_OK && b64 != nullptr) out = b64;
    ssh_string_free_char(b64);
    ssh_key_free(pub);
    return out;
  }

  /// The filter in front of the user's agent, opened and handed to libssh on
  /// first use; null when there is no agent to ask.
  AgentFilter* agent() {
    if (agent_tried_) return agent_.get();
    agent_tried_ = true;
    if (keys_.agent_socket.empty()) return nullptr;
    std::string why;
    auto f = AgentFilter::open(keys_.agent_socket, &why);
    if (!f) return nullptr;  // no agent there: the file simply cannot be used
    int fd = f->serve(&why);
    if (fd < 0) return nullptr;
    if (ssh_set_agent_socket(s_, fd) != SSH_OK) {
      ::close(fd);
      return nullptr;
    }
    agent_ = std::move(f);
    return agent_.get();
  }

  ssh_session s_;
  const KeyPlan& keys_;
  ConnectError* e_;
  std::unique_ptr<AgentFilter> agent_;
  bool agent_tried_ = false;
};

}  // namespace

std::optional<ConnectError> authenticate(ssh_session s, const Target& t, const KeyPlan& keys,
                                         std::string* method) {
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
  bool partial = false;
  if (keys.identities_only) {
    ListedKeys listed(s, keys, &e);
    for (const auto& file : listed.files()) {
      rc = listed.offer(file);
      if (rc == SSH_AUTH_SUCCESS) {
        *method = e.methods_tried.back();
        return std::nullopt;
      }
      if (rc == SSH_AUTH_ERROR) return broken("publickey");
      partial = partial || rc == SSH_AUTH_PARTIAL;
    }
  } else {
    if (!keys.identity.empty()) {
      const std::string& identity = keys.identity;
      ssh_key key = nullptr;
      std::string refused;
      if (ssh_pki_import_privkey_file(identity.c_str(), nullptr, nullptr, nullptr, &key) ==
              SSH_OK &&
          !(refused = refused_algorithm(keys, key)).empty()) {
        ssh_key_free(key);
        e.methods_tried.push_back(
            fmt::format("publickey ({}: {} not in PubkeyAcceptedAlgorithms)", identity, refused));
      } else if (key != nullptr) {
        rc = ssh_userauth_publickey(s, nullptr, key);
        ssh_key_free(key);
        e.methods_tried.push_back(fmt::format("publickey ({})", identity));
        if (rc == SSH_AUTH_SUCCESS) {
          *method = e.methods_tried.back();
          return std::nullopt;
        }
        if (rc == SSH_AUTH_ERROR) return broken("publickey");
      } else {
        e.methods_tried.push_back(fmt::format("publickey ({}: {})", identity, identity_problem(identity)));
      }
    }
    std::vector<std::string> sources = auto_sources(keys);
    rc = ssh_userauth_publickey_auto(s, nullptr, nullptr);
    for (const auto& src : sources) e.methods_tried.push_back(fmt::format("publickey ({})", src));
    if (rc == SSH_AUTH_SUCCESS) {
      *method = sources.empty() ? "publickey (ssh config identity)"
                                : fmt::format("publickey ({})", join(sources));
      return std::nullopt;
    }
    if (rc == SSH_AUTH_ERROR) return broken("publickey");
    partial = rc == SSH_AUTH_PARTIAL;
  }
  e.kind = FailureKind::auth;
  e.message = fmt::format(
      "{}: authentication as {} failed (tried: {}); add the public key to "
      "{}'s authorized_keys, or set the host's identity",
      t.where, t.user, e.methods_tried.empty() ? "no usable key" : join(e.methods_tried), t.user);
  if (keys.identities_only)
    e.message += keys.assumed.empty()
                     ? " (the ssh config says IdentitiesOnly yes for this host: no other "
                       "key was offered, from the agent or elsewhere)"
                     : fmt::format(
                           " (IdentitiesOnly yes from the Match block at {}, whose condition "
                           "ratchet does not evaluate: no other key was offered)",
                           keys.assumed.front());
  if (partial)
    e.message = fmt::format(
        "{}: partial authentication as {}: the server wants more than a "
        "public key; ratchet cannot do multi-factor logins",
        t.where, t.user);
  return e;
}

}  // namespace ratchet::transport::ssh
