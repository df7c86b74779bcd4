#include "transcript/sign.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <filesystem>

#include "transcript/events.h"
#include "transcript/writer.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ratchet::transcript {

namespace {

using std::chrono::seconds;
constexpr seconds kSignTimeout{300};  // a key file's passphrase may be asked on the terminal
constexpr seconds kCheckTimeout{30};

/// `text` without trailing blanks and newlines, its lines joined by "; ".
std::string one_line(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  for (size_t at; (at = text.find('\n')) != std::string::npos;) text.replace(at, 1, "; ");
  return text;
}

/// What ssh-keygen said when it failed: its stderr (and stdout), or why it did not run.
std::string failure(const util::ProcessResult& r) {
  if (!r.error.empty()) return r.error;
  std::string said = one_line(r.err + (r.err.empty() || r.out.empty() ? "" : "\n") + r.out);
  return fmt::format("ssh-keygen exit {}{}", r.exit_code, said.empty() ? "" : ": " + said);
}

/// "ED25519 SHA256:..." from ssh-keygen's `Good "NS" signature [for P] with ED25519 key SHA256:...`.
std::string key_of(const std::string& good) {
  size_t k = good.rfind(" key ");
  size_t w = good.rfind(" with ", k);
  if (k == std::string::npos || w == std::string::npos) return "";
  std::string type = good.substr(w + 6, k - (w + 6));
  return type + " " + one_line(good.substr(k + 5));
}

/// Whether an executable `name` is in a directory of PATH.
bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t at = 0, c; at <= dirs.size(); at = c + 1) {
    c = std::min(dirs.find(':', at), dirs.size());
    std::string dir = c > at ? dirs.substr(at, c - at) : ".";
    if (::access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

/// A fresh directory of our own for the agent key's .pub ("" when it cannot be made).
std::string temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/ratchet-sign-XXXXXX";
  return ::mkdtemp(tmpl.data()) ? tmpl : "";
}

/// Writes `data` to `path` (mode `mode`, through PATH.tmp and rename); "" or why not.
std::string write_file(const std::string& path, const std::string& data, mode_t mode) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return fmt::format("cannot write {}: {}", tmp, std::strerror(errno));
  bool ok = ::write(fd, data.data(), data.size()) == ssize_t(data.size());
  int err = errno;
  ok = (::close(fd) == 0) && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok) err = errno;
    ::unlink(tmp.c_str());
    return fmt::format("cannot write {}: {}", path, std::strerror(err));
  }
  return "";
}

/// `ssh-keygen -Y check-novalidate`: whether `sig_path` signs `head` at all, and with which key.
util::ProcessResult check_novalidate(const std::string& sig_path, const std::string& head) {
  return util::run_process({"ssh-keygen", "-Y", "check-novalidate", "-n", kSignNamespace, "-s", sig_path}, head,
                           kCheckTimeout);
}

}  // namespace

std::string SignKey::describe() const {
  if (!file.empty()) return "key " + file;
  std::string k = agent_key;
  size_t sp = k.find(' ');  // "TYPE BASE64 COMMENT": the base64 says nothing to a person
  size_t sp2 = sp == std::string::npos ? sp : k.find(' ', sp + 1);
  std::string comment = sp2 == std::string::npos ? "" : " " + k.substr(sp2 + 1);
  return fmt::format("the agent's first key ({}{})", k.substr(0, sp), comment);
}

std::optional<SignKey> find_sign_key(const std::string& file, std::string* err) {
  SignKey k;
  if (!on_path("ssh-keygen")) {
    *err = "cannot sign: ssh-keygen (OpenSSH) is not on PATH; install openssh-client";
    return std::nullopt;
  }
  if (!file.empty()) {
    std::error_code ec;
    const int why = ::access(file.c_str(), R_OK) != 0 ? errno : std::filesystem::is_directory(file, ec) ? EISDIR : 0;
    if (why != 0) {
      *err = fmt::format("--sign-key {}: cannot read the key file ({}): give a private key file, or a .pub "
                         "whose private half is in the agent",
                         file, std::strerror(why));
      return std::nullopt;
    }
    k.file = file;
    return k;
  }
  const char* sock = std::getenv("SSH_AUTH_SOCK");
  if (!sock || !*sock) {
    *err = "no key to sign with: SSH_AUTH_SOCK is not set (no agent); start one and `ssh-add` your key, "
           "or give --sign-key FILE";
    return std::nullopt;
  }
  auto r = util::run_process({"ssh-add", "-L"}, "", kCheckTimeout);
  std::string first = r.out.substr(0, r.out.find('\n'));
  if (!r.error.empty() || r.exit_code != 0 || first.empty() || first.find(' ') == std::string::npos) {
    *err = fmt::format("no key to sign with: the agent at {} {}; `ssh-add` your key, or give "
                       "--sign-key FILE",
                       sock,
                       r.exit_code == 1 ? "holds no key"
                                        : "cannot be asked (" + one_line(r.error.empty() ? r.err : r.error) + ")");
    return std::nullopt;
  }
  k.agent_key = first;
  return k;
}

std::string signature_path(const std::string& transcript) { return transcript + ".sig"; }

SignResult sign_head(const SignKey& key, const std::string& head, const std::string& sig_path) {
  SignResult out;
  std::string dir, keyfile = key.file;
  if (keyfile.empty()) {  // the agent's key: ssh-keygen takes its public half and asks the agent
    if ((dir = temp_dir()).empty())
      return out.error = fmt::format("cannot make a temporary directory: {}", std::strerror(errno)), out;
    keyfile = dir + "/agent-key.pub";
    if (std::string why = write_file(keyfile, key.agent_key + "\n", 0600); !why.empty()) out.error = why;
  }
  if (out.error.empty()) {
    auto r = util::run_process({"ssh-keygen", "-Y", "sign", "-n", kSignNamespace, "-f", keyfile}, head, kSignTimeout);
    if (!r.error.empty() || r.exit_code != 0 || r.out.find("BEGIN SSH SIGNATURE") == std::string::npos)
      out.error = fmt::format("ssh-keygen -Y sign with {} failed: {}", key.describe(), failure(r));
    else
      out.error = write_file(sig_path, r.out, 0644);
  }
  if (!dir.empty()) std::filesystem::remove_all(dir);
  if (!out.error.empty()) return out;
  auto c = check_novalidate(sig_path, head);  // which key signed, as ssh-keygen reads it back
  if (!c.error.empty() || c.exit_code != 0)
    out.error = fmt::format("the signature written to {} does not check: {}", sig_path, failure(c));
  else
    out.key = key_of(c.out);
  return out;
}

SignResult sign_run(Writer& w, const SignKey& key) {
  const std::string sig = signature_path(w.path());
  SignResult r = sign_head(key, w.head(), sig);
  nlohmann::json f = {{"head", w.head()}, {"namespace", kSignNamespace}, {"file", sig}};
  if (r.error.empty()) f["key"] = r.key;
  else f["error"] = r.error;
  w.emit(events::kSignature, f);
  return r;
}

RunSignature signature_of(std::string_view text, const RunDigests& run) {
  RunSignature out;
  size_t at = 0;
  for (size_t n = 0; n < run.last_line && at != std::string_view::npos; ++n) {
    at = text.find('\n', at);
    if (at != std::string_view::npos) ++at;
  }
  if (at == std::string_view::npos || at >= text.size()) return out;
  size_t nl = text.find('\n', at);
  if (nl == std::string_view::npos) return out;  // cut while it was written
  auto j = nlohmann::json::parse(text.substr(at, nl - at), nullptr, false);
  if (!j.is_object() || j.value("event", "") != events::kSignature) return out;
  out.line = run.last_line + 1;
  if (auto k = j.find("key"); k != j.end() && k->is_string()) out.key = *k;
  if (auto e = j.find("error"); e != j.end() && e->is_string()) out.error = *e;
  return out;
}

SignatureCheck verify_signature(const std::string& sig_path, const std::string& head,
                                const std::string& allowed_signers, const std::string& signer) {
  SignatureCheck out;
  if (std::error_code ec; !std::filesystem::exists(sig_path, ec))
    return out.problem = fmt::format("no signature: {} does not exist (the run was not signed with --sign, or "
                                     "its .sig was not kept beside it)",
                                     sig_path),
           out;
  auto c = check_novalidate(sig_path, head);
  if (!c.error.empty() || c.exit_code != 0)
    return out.problem = fmt::format("{} is not a signature of this run's final head {} ({})", sig_path, head,
                                     failure(c)),
           out;
  out.key = key_of(c.out);
  auto f = util::run_process({"ssh-keygen", "-Y", "find-principals", "-s", sig_path, "-f", allowed_signers}, "",
                             kCheckTimeout);
  if (!f.error.empty() || f.exit_code != 0)
    return out.problem = fmt::format("the key that signed it ({}) is not in {} ({})", out.key, allowed_signers,
                                     failure(f)),
           out;
  std::vector<std::string> principals;
  for (size_t at = 0, nl; at < f.out.size(); at = nl + 1) {
    nl = std::min(f.out.find('\n', at), f.out.size());
    if (nl > at) principals.push_back(f.out.substr(at, nl - at));
  }
  std::string names;
  for (const auto& p : principals) names += (names.empty() ? "" : ", ") + p;
  if (!signer.empty() && std::find(principals.begin(), principals.end(), signer) == principals.end())
    return out.problem = fmt::format("signed by {}, which {} names as {}, not as --signer {}", out.key,
                                     allowed_signers, names.empty() ? "nobody" : names, signer),
           out;
  const std::string who = signer.empty() ? (principals.empty() ? "" : principals.front()) : signer;
  auto v = util::run_process(
      {"ssh-keygen", "-Y", "verify", "-f", allowed_signers, "-I", who, "-n", kSignNamespace, "-s", sig_path}, head,
      kCheckTimeout);
  if (!v.error.empty() || v.exit_code != 0)
    return out.problem = fmt::format("ssh-keygen -Y verify refused it for {}: {}", who, failure(v)), out;
  out.ok = true;
  out.principal = who;
  if (std::string k = key_of(v.out); !k.empty()) out.key = k;
  return out;
}

}  // namespace ratchet::transcript
