// Host-key verification: OpenSSH's StrictHostKeyChecking=yes, or accept-new
// (ssh_config(5): "automatically add new host keys to the user known hosts
// files, but not permit connections to hosts with changed host keys").
#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "transport/ssh_transport.h"

namespace ratchet::transport::ssh {

namespace {

/// "SHA256:..." of `key`, as ssh-keygen -l prints it; "" on failure.
std::string key_fingerprint(ssh_key key) {
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
  return out;
}

/// "SHA256:..." of the server's key, as ssh-keygen -l prints it; "" on failure.
std::string server_fingerprint(ssh_session s, std::string* key_type) {
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(s, &key) != SSH_OK) return "";
  if (key_type) *key_type = ssh_key_type_to_char(ssh_key_type(key));
  std::string out = key_fingerprint(key);
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

/// The name libssh (and ssh(1)) look the server up by in known_hosts: "host"
/// on port 22, else "[host]:port".
std::string known_hosts_name(const Target& t) {
  return t.port == 22 ? t.host : fmt::format("[{}]:{}", t.host, t.port);
}

/// The number of the first line of `file` that lists `name` (plainly or
/// hashed) with a key other than the server's; 0 when none does.
int offending_line(ssh_session s, const std::string& file, const std::string& name) {
  ssh_key server = nullptr;
  if (file.empty() || ssh_get_server_publickey(s, &server) != SSH_OK) return 0;
  std::ifstream in(file);
  int found = 0, n = 0;
  for (std::string line; found == 0 && std::getline(in, line);) {
    ++n;
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string::npos || line[i] == '#' || line[i] == '@') continue;  // markers: key_revoked
    ssh_knownhosts_entry* e = nullptr;
    // SSH_OK: the line's host patterns match `name` (SSH_AGAIN: they do not).
    if (ssh_known_hosts_parse_line(name.c_str(), line.c_str() + i, &e) == SSH_OK && e &&
        e->publickey && ssh_key_cmp(e->publickey, server, SSH_KEY_CMP_PUBLIC) != 0)
      found = n;
    if (e) ssh_knownhosts_entry_free(e);
  }
  ssh_key_free(server);
  return found;
}

/// "FILE:N" of the line that lists another key for the server, searching the
/// user file then the global one; just the user file when no line is found.
std::string offending_place(ssh_session s, const Target& t, int* line, std::string* file) {
  const std::string name = known_hosts_name(t);
  for (const std::string& f : {t.known_hosts, get_option(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS)}) {
    if (int n = offending_line(s, f, name)) {
      *line = n;
      *file = f;
      return fmt::format("{}:{}", f, n);
    }
  }
  *line = 0;
  *file = t.known_hosts;
  return t.known_hosts;
}

/// OpenSSH's hashed known_hosts name (HashKnownHosts yes): "|1|" base64(salt)
/// "|" base64(HMAC-SHA1 of `name` keyed with the 20-byte salt); "" on failure.
std::string hashed_name(const std::string& name) {
  unsigned char salt[20];
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  if (RAND_bytes(salt, sizeof salt) != 1) return "";
  if (HMAC(EVP_sha1(), salt, sizeof salt, reinterpret_cast<const unsigned char*>(name.data()),
           name.size(), mac, &mac_len) == nullptr)
    return "";
  auto b64 = [](const unsigned char* data, size_t n) {
    std::string out(4 * ((n + 2) / 3) + 1, '\0');
    int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, int(n));
    out.resize(len > 0 ? size_t(len) : 0);
    return out;
  };
  return "|1|" + b64(salt, sizeof salt) + "|" + b64(mac, mac_len);
}

/// Appends the server's key to t.known_hosts under a hashed name.
bool append_hashed_entry(ssh_session s, const Target& t, std::string* err) {
  char* entry = nullptr;  // "NAME TYPE BASE64", libssh's own line for this server
  if (ssh_session_export_known_hosts_entry(s, &entry) != SSH_OK || entry == nullptr) {
    *err = ssh_get_error(s);
    return false;
  }
  std::string line = entry;
  ssh_string_free_char(entry);
  std::string hashed = hashed_name(known_hosts_name(t));
  size_t space = line.find(' ');
  if (hashed.empty() || space == std::string::npos) {
    *err = "cannot hash the host name";
    return false;
  }
  line = hashed + line.substr(space);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  std::ofstream out(t.known_hosts, std::ios::app);
  out << line << "\n";
  out.flush();
  if (!out) {
    *err = std::strerror(errno);
    return false;
  }
  return true;
}

ConnectError host_key_error(FailureKind kind, std::string message) {
  return ConnectError{kind, std::move(message), {}};
}

}  // namespace

std::vector<std::string> known_fingerprints(ssh_session s, const Target& t) {
  std::vector<std::string> out;
  const std::string name = known_hosts_name(t);
  for (const std::string& file : {get_option(s, SSH_OPTIONS_KNOWNHOSTS), get_option(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS)}) {
    if (file.empty() || file == "/dev/null") continue;
    std::ifstream in(expand_home(file));
    for (std::string line; std::getline(in, line);) {
      size_t b = line.find_first_not_of(" \t");
      if (b == std::string::npos || line[b] == '#' || line[b] == '@') continue;  // markers: not a key of the host
      ssh_knownhosts_entry* e = nullptr;
      if (ssh_known_hosts_parse_line(name.c_str(), line.c_str() + b, &e) == SSH_OK && e && e->publickey) {
        std::string fp = key_fingerprint(e->publickey);
        if (!fp.empty() && std::find(out.begin(), out.end(), fp) == out.end()) out.push_back(fp);
      }
      if (e) ssh_knownhosts_entry_free(e);
    }
  }
  return out;
}

std::optional<ConnectError> verify_host_key(ssh_session s, const Target& t, bool accept_new,
                                            std::string* fingerprint, const std::vector<std::string>& pinned) {
  std::string type;
  *fingerprint = server_fingerprint(s, &type);
  const std::string& fp = *fingerprint;
  const std::string& file = t.known_hosts;
  if (!pinned.empty() && std::find(pinned.begin(), pinned.end(), fp) == pinned.end()) {
    std::string list;
    for (const auto& p : pinned) list += (list.empty() ? "" : ", ") + p;
    return host_key_error(FailureKind::host_key_changed,
                          fmt::format("{}: HOST KEY differs from the saved plan: the server offers {} {}, the plan "
                                      "pinned {} (known_hosts when it was made); verify the key out of band and "
                                      "make a new plan",
                                      t.where, type, fp, list));
  }
  if (key_revoked(s, file))
    return host_key_error(FailureKind::host_key_changed,
                          fmt::format("{}: the server offers {} {}, a key marked @revoked in {}; "
                                      "refusing it (--accept-new never overrides this)",
                                      t.where, type, fp, file));
  const int rc = ssh_session_is_known_server(s);
  switch (rc) {
    case SSH_KNOWN_HOSTS_OK:
      return std::nullopt;
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER: {
      // As ssh(1) ("Offending key in FILE:N"): the file and line to fix.
      int line = 0;
      std::string where_file;
      std::string place = offending_place(s, t, &line, &where_file);
      bool other_type = rc == SSH_KNOWN_HOSTS_OTHER;
      std::string fix = line > 0 ? fmt::format("replace line {} of {}", line, where_file)
                                 : fmt::format("fix {}", where_file);
      return host_key_error(
          FailureKind::host_key_changed,
          fmt::format("{}: HOST KEY CHANGED: the server offers {} {} but {} lists {} for it "
                      "(possible man-in-the-middle); verify the new key out of band, then {}; "
                      "--accept-new never overrides this",
                      t.where, type, fp, place, other_type ? "a key of another type" : "another key",
                      fix));
    }
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
  if (!make_parent_dirs(file, &err) ||
      (t.hash_known_hosts ? !append_hashed_entry(s, t, &err)
                          : ssh_session_update_known_hosts(s) != SSH_OK)) {
    if (err.empty()) err = ssh_get_error(s);
    return host_key_error(
        FailureKind::other,
        fmt::format("{}: cannot record the host key {} in {}: {}", t.where, fp, file, err));
  }
  return std::nullopt;
}

}  // namespace ratchet::transport::ssh
