// Host-key verification: OpenSSH's StrictHostKeyChecking=yes, or accept-new
// (ssh_config(5): "automatically add new host keys to the user known hosts
// files, but not permit connections to hosts with changed host keys").
#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "transport/ssh_transport.h"

namespace ratchet::transport::ssh {

namespace {

/// "SHA256:..." of the server's key, as ssh-keygen -l prints it; "" on failure.
std::string server_fingerprint(ssh_session s, std::string* key_type) {
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(s, &key) != SSH_OK) return "";
  if (key_type) *key_type = ssh_key_type_to_char(ssh_key_type(key));
  unsigned char* hash = nullptr;
  size_t hlen = 0;
  std::string out;
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) == SSH_OK) {
    if (char* fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen)) {
      out = fp;
      ssh_string_free_char(fp);
    }
    ssh_clean_pubkey_hash(&hash);
  }
  ssh_key_free(key);
  return out;
}

/// mkdir -p with mode 0700 for the directories above `file` (like ~/.ssh).
bool make_parent_dirs(const std::string& file, std::string* err) {
  for (size_t pos = file.find('/', 1); pos != std::string::npos; pos = file.find('/', pos + 1)) {
    std::string dir = file.substr(0, pos);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      *err = fmt::format("cannot create {}: {}", dir, std::strerror(errno));
      return false;
    }
  }
  return true;
}

/// True when `file` has a `@revoked` line (sshd(8) "SSH_KNOWN_HOSTS FILE
/// FORMAT") for the server's key. libssh 0.10 skips marker lines, so a revoked
/// key would otherwise look unknown and --accept-new would record it.
bool key_revoked(ssh_session s, const std::string& file) {
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(s, &key) != SSH_OK) return false;
  char* b64 = nullptr;
  bool revoked = false;
  if (ssh_pki_export_pubkey_base64(key, &b64) == SSH_OK && b64) {
    std::ifstream in(file);
    for (std::string line; !revoked && std::getline(in, line);) {
      std::istringstream words(line);
      std::string marker, hosts, type, blob;
      words >> marker >> hosts >> type >> blob;
      revoked = marker == "@revoked" && blob == b64;
    }
    ssh_string_free_char(b64);
  }
  ssh_key_free(key);
  return revoked;
}

ConnectError host_key_error(FailureKind kind, std::string message) {
  return ConnectError{kind, std::move(message), {}};
}

}  // namespace

std::optional<ConnectError> verify_host_key(ssh_session s, const Target& t, bool accept_new,
                                            std::string* fingerprint) {
  std::string type;
  *fingerprint = server_fingerprint(s, &type);
  const std::string& fp = *fingerprint;
  const std::string& file = t.known_hosts;
  if (key_revoked(s, file))
    return host_key_error(FailureKind::host_key_changed,
                          fmt::format("{}: the server offers {} {}, a key marked @revoked in {}; "
                                      "refusing it (--accept-new never overrides this)",
                                      t.where, type, fp, file));
  switch (ssh_session_is_known_server(s)) {
    case SSH_KNOWN_HOSTS_OK:
      return std::nullopt;
    case SSH_KNOWN_HOSTS_CHANGED:
      return host_key_error(
          FailureKind::host_key_changed,
          fmt::format("{}: HOST KEY CHANGED: the server offers {} {} but {} lists another key "
                      "for it (possible man-in-the-middle); verify the new key out of band, then "
                      "replace its line in {}; --accept-new never overrides this",
                      t.where, type, fp, file, file));
    case SSH_KNOWN_HOSTS_OTHER:
      return host_key_error(
          FailureKind::host_key_changed,
          fmt::format("{}: HOST KEY CHANGED: the server offers {} {} but {} lists a key of "
                      "another type for it (possible man-in-the-middle); verify the new key out "
                      "of band, then fix {}; --accept-new never overrides this",
                      t.where, type, fp, file, file));
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      break;
    case SSH_KNOWN_HOSTS_ERROR:
    default:
      return host_key_error(FailureKind::other,
                            fmt::format("{}: cannot check the host key against {}: {}", t.where,
                                        file, ssh_get_error(s)));
  }
  if (!accept_new)
    return host_key_error(
        FailureKind::host_key_unknown,
        fmt::format("{}: host key not in {} (fingerprint {}); verify it and add it, or run "
                    "with --accept-new",
                    t.where, file, fp));
  std::string err;
  if (!make_parent_dirs(file, &err) || ssh_session_update_known_hosts(s) != SSH_OK) {
    if (err.empty()) err = ssh_get_error(s);
    return host_key_error(
        FailureKind::other,
        fmt::format("{}: cannot record the host key {} in {}: {}", t.where, fp, file, err));
  }
  return std::nullopt;
}

}  // namespace ratchet::transport::ssh
