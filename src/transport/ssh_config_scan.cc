// ssh_config(5) for IdentitiesOnly, IdentityFile and IdentityAgent, read the
// way OpenSSH's readconf.c reads a config (see ssh_config_scan.h for the rules).
#include "transport/ssh_config_scan.h"

#include <fmt/format.h>
#include <glob.h>
#include <openssl/evp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace ratchet::transport {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// OpenSSH readconf.c's own depth limit for Include.
constexpr int kMaxIncludeDepth = 16;

/// Whether a block applies: a Match whose criteria were not all evaluated is `unknown`.
enum class Applies { no, unknown, yes };

Applies both(Applies a, Applies b) { return std::min(a, b); }  // no < unknown < yes

Applies negate(Applies a) {
  return a == Applies::unknown ? a : (a == Applies::yes ? Applies::no : Applies::yes);
}

/// A config line's keyword (lowercased) and arguments, split as OpenSSH's
/// strdelim + argv_split do: "Keyword args", "Keyword=args" or "Keyword = args";
/// arguments separated by blanks, "double" or 'single' quotes group, a
/// backslash escapes the next character, and an argument that begins with '#'
/// ends the line. Returns false for an empty or comment line.
bool split_line(const std::string& line, std::string* keyword, std::vector<std::string>* args,
                std::string* rest = nullptr) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f'; };
  size_t i = 0, n = line.size();
  while (i < n && blank(line[i])) ++i;
  if (i < n && line[i] == '=') {  // OpenSSH tolerates "=" before the keyword too
    ++i;
    while (i < n && blank(line[i])) ++i;
  }
  size_t start = i;
  while (i < n && !blank(line[i]) && line[i] != '=') ++i;
  *keyword = lower(std::string_view(line).substr(start, i - start));
  if (keyword->empty() || (*keyword)[0] == '#') return false;
  while (i < n && blank(line[i])) ++i;
  if (i < n && line[i] == '=') ++i;
  while (i < n && blank(line[i])) ++i;
  if (rest) {
    size_t end = n;
    while (end > i && blank(line[end - 1])) --end;
    *rest = line.substr(i, end - i);
  }
  args->clear();
  for (;;) {
    while (i < n && blank(line[i])) ++i;
    if (i >= n || line[i] == '#') break;
    std::string arg;
    char quote = 0;
    for (; i < n; ++i) {
      char c = line[i];
      if (c == '\\' && i + 1 < n) {
        arg += line[++i];
      } else if (quote) {
        if (c == quote)
          quote = 0;
        else
          arg += c;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (blank(c)) {
        break;
      } else {
        arg += c;
      }
    }
    args->push_back(arg);
  }
  return true;
}

class Scanner {
 public:
  Scanner(const SshConfigQuery& q, SshHostConfig* out) : q_(q), out_(out), io_(&out->identity) {
    host_ = q.host;
    if (auto at = host_.rfind('@'); at != std::string::npos) host_ = host_.substr(at + 1);
    original_host_ = host_;
    local_user_ = q.local_user.empty() ? local_user_name() : q.local_user;
  }

  /// ssh(1)'s final pass (a `Match final` was seen): the config read again,
  /// Host lines now testing the HostName obtained (lowercased), values already
  /// obtained kept; `Match final` and `Match canonical` hold.
  bool wants_final_pass() const { return want_final_ && !final_pass_; }
  void start_final_pass() {
    final_pass_ = true;
    host_ = final_hostname();
    hostname_ = host_;
  }

  /// HostName (%h and %% expanded) or the name given, lowercased, as ssh(1)
  /// dials it.
  std::string final_hostname() const { return lower(hostname_.value_or(host_)); }

  /// Reads one file; `ceiling` caps whether its blocks can apply (an included
  /// file's blocks apply no more than the block of its Include line).
  std::optional<std::string> read(const std::string& path, bool user_conf, Applies ceiling,
                                  int depth) {
    std::ifstream in(path);
    if (!in) return std::nullopt;  // as ssh(1): a missing config is no config
    Applies state = ceiling;
    std::string line, keyword, rest;
    std::vector<std::string> args;
    for (int lineno = 1; std::getline(in, line); ++lineno) {
      if (!split_line(line, &keyword, &args, &rest)) continue;
      auto where = [&] { return fmt::format("{} line {}", path, lineno); };
      const bool on = state == Applies::yes;
      const std::string arg0 = args.empty() ? "" : args[0];
      if (keyword == "host") {
        state = both(ceiling, ssh_host_line_matches(host_, args) ? Applies::yes : Applies::no);
      } else if (keyword == "match") {
        state = both(ceiling, match(args));
        match_line_ = where();
      } else if (keyword == "include") {
        if (state == Applies::no) continue;  // reads nothing that could apply
        for (const auto& pattern : args) {
          if (depth + 1 > kMaxIncludeDepth)
            return fmt::format("{}: Include nested more than {} deep", where(), kMaxIncludeDepth);
          for (const auto& file : glob_paths(include_path(pattern, user_conf))) {
            std::string saved_match = match_line_;
            if (auto err = read(file, user_conf, state, depth + 1)) return err;
            match_line_ = saved_match;
          }
        }
      } else if (keyword == "hostname") {
        if (on && !hostname_ && !args.empty()) {
          // HostName may hold %h (the name given) and %% (ssh(1) knows no other token here).
          std::string h;
          for (size_t i = 0; i < arg0.size(); ++i) {
            if (arg0[i] == '%' && i + 1 < arg0.size()) {
              char t = arg0[++i];
              if (t == 'h') h += host_;
              else if (t == '%') h += '%';
              else h += std::string("%") + t;
            } else {
              h += arg0[i];
            }
          }
          hostname_ = h;
        }
      } else if (keyword == "user") {
        if (on && !user_ && !args.empty()) user_ = arg0;
      } else if (keyword == "port") {
        if (args.empty()) continue;
        char* end = nullptr;
        long p = std::strtol(arg0.c_str(), &end, 10);
        if (arg0.empty() || *end || p < 1 || p > 65535)
          return fmt::format("{}: Port must be 1..65535, not \"{}\"", where(), arg0);
        if (on && out_->port == 0) out_->port = int(p);
      } else if (keyword == "proxyjump" || keyword == "proxycommand") {
        // One slot, as in ssh(1): whichever of the two comes first wins.
        if (on && !proxy_set_ && !rest.empty()) {
          proxy_set_ = true;
          if (keyword == "proxyjump") out_->proxy_jump = arg0;
          else out_->proxy_command = rest;
        }
      } else if (keyword == "hostkeyalgorithms") {
        first(on, arg0, &out_->host_key_algorithms);
      } else if (keyword == "pubkeyacceptedalgorithms" || keyword == "pubkeyacceptedkeytypes") {
        first(on, arg0, &out_->pubkey_accepted_algorithms);
      } else if (keyword == "ciphers") {
        first(on, arg0, &out_->ciphers);
      } else if (keyword == "kexalgorithms") {
        first(on, arg0, &out_->kex_algorithms);
      } else if (keyword == "macs") {
        first(on, arg0, &out_->macs);
      } else if (keyword == "hashknownhosts" || keyword == "compression") {
        std::string v = lower(arg0);
        bool yes = v == "yes" || v == "true";
        if (!yes && v != "no" && v != "false")
          return fmt::format("{}: {} must be yes or no, not \"{}\"", where(),
                             keyword == "compression" ? "Compression" : "HashKnownHosts", arg0);
        auto& slot = keyword == "compression" ? out_->compression : out_->hash_known_hosts;
        if (on && !slot) slot = yes;
      } else if (keyword == "serveraliveinterval" || keyword == "serveralivecountmax") {
        // ServerAliveInterval is a time (ssh_config(5) TIME FORMATS: seconds,
        // or digits with s, m, h, d, w, summed); ServerAliveCountMax a count.
        if (args.empty()) continue;
        const bool interval = keyword == "serveraliveinterval";
        long long total = 0, n = -1;
        bool ok = !arg0.empty();
        for (char c : arg0) {
          if (c >= '0' && c <= '9') {
            n = (n < 0 ? 0 : n) * 10 + (c - '0');
            ok = ok && n <= 100'000'000;
            continue;
          }
          const char* units = "smhdw";
          const long long mult[] = {1, 60, 3600, 86400, 604800};
          const char* u = std::strchr(units, std::tolower(static_cast<unsigned char>(c)));
          if (!interval || n < 0 || c == '\0' || u == nullptr) {
            ok = false;
            break;
          }
          total += n * mult[u - units];
          n = -1;
        }
        if (n >= 0) total += n;
        if (!ok || total > 100'000'000)
          return fmt::format("{}: {} must be {}, not \"{}\"", where(),
                             interval ? "ServerAliveInterval" : "ServerAliveCountMax",
                             interval ? "a time (seconds, or 15s, 1m)" : "a count", arg0);
        auto& slot = interval ? out_->server_alive_interval_s : out_->server_alive_count_max;
        if (on && !slot) slot = int(total);
      } else if (keyword == "userknownhostsfile") {
        if (on && out_->user_known_hosts_files.empty() && !args.empty())
          out_->user_known_hosts_files = args;
      } else if (keyword == "globalknownhostsfile") {
        first(on, arg0, &out_->global_known_hosts_file);
      } else if (keyword == "identitiesonly") {
        // ssh(1) checks the value on every line, applied or not.
        std::string v = lower(arg0);
        bool yes = v == "yes" || v == "true";
        if (!yes && v != "no" && v != "false")
          return fmt::format("{}: IdentitiesOnly must be yes or no, not \"{}\"", where(), arg0);
        if (identities_only_set_) continue;
        if (on) {
          io_->identities_only = yes;
          identities_only_set_ = true;
        } else if (state == Applies::unknown && yes) {
          io_->identities_only = true;
          identities_only_set_ = true;
          io_->assumed.push_back(match_line_);
        }
      } else if (keyword == "identityfile") {
        if (!on || args.empty()) continue;
        auto& files = io_->identity_files;
        if (std::find(files.begin(), files.end(), arg0) == files.end()) files.push_back(arg0);
      } else if (keyword == "identityagent") {
        if (on && !agent_set_ && !args.empty()) {
          io_->identity_agent = arg0;
          agent_set_ = true;
        }
      }
    }
    return std::nullopt;
  }

  void finish() {
    out_->hostname = final_hostname();
    out_->user = user_.value_or("");
  }

 private:
  static void first(bool on, const std::string& value, std::string* slot) {
    if (on && slot->empty() && !value.empty()) *slot = value;
  }

  /// One Match line: each criterion must hold (ssh_config(5) Match).
  Applies match(const std::vector<std::string>& args) {
    if (args.empty()) return Applies::no;
    Applies result = Applies::yes;
    for (size_t i = 0; i < args.size(); ++i) {
      std::string attr = lower(args[i]);
      bool neg = !attr.empty() && attr[0] == '!';
      if (neg) attr.erase(0, 1);
      Applies r;
      if (attr == "all") {
        r = Applies::yes;
      } else if (attr == "canonical" || attr == "final") {
        // ssh(1) holds both on its final pass only (ratchet never
        // canonicalizes, so only a `Match final` asks for that pass).
        if (attr == "final") want_final_ = true;
        r = final_pass_ ? Applies::yes : Applies::no;
      } else if (i + 1 >= args.size()) {
        return Applies::no;  // a criterion without its argument (ssh(1) refuses the file)
      } else {
        const std::string& arg = args[++i];
        if (attr == "host")
          r = ssh_pattern_list_match(hostname_.value_or(host_), arg, true) == 1 ? Applies::yes
                                                                               : Applies::no;
        else if (attr == "originalhost")
          r = ssh_pattern_list_match(original_host_, arg, true) == 1 ? Applies::yes : Applies::no;
        else if (attr == "user")
          r = ssh_pattern_list_match(remote_user(), arg, false) == 1 ? Applies::yes : Applies::no;
        else if (attr == "localuser")
          r = ssh_pattern_list_match(local_user_, arg, false) == 1 ? Applies::yes : Applies::no;
        else
          r = Applies::unknown;  // exec, localnetwork, tagged, version, ...: not evaluated
      }
      result = both(result, neg ? negate(r) : r);
    }
    return result;
  }

  std::string remote_user() const {
    if (!q_.user.empty()) return q_.user;
    return user_.value_or(local_user_);
  }

  static std::string include_path(const std::string& pattern, bool user_conf) {
    if (pattern.rfind("~/", 0) == 0 || pattern == "~") return user_home() + pattern.substr(1);
    if (!pattern.empty() && pattern[0] == '/') return pattern;
    return (user_conf ? user_home() + "/.ssh/" : std::string("/etc/ssh/")) + pattern;
  }

  static std::vector<std::string> glob_paths(const std::string& pattern) {
    std::vector<std::string> out;
    glob_t g{};
    if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
    ::globfree(&g);
    return out;  // glob sorts, as ssh(1) relies on
  }

  const SshConfigQuery& q_;
  SshHostConfig* out_;
  IdentityOptions* io_;
  std::string host_, original_host_, local_user_;
  std::optional<std::string> hostname_, user_;  // first values obtained, for Match
  bool identities_only_set_ = false, agent_set_ = false, proxy_set_ = false;
  bool want_final_ = false, final_pass_ = false;
  std::string match_line_;  // the Match line of the current block, for IdentityOptions::assumed
};

bool pattern_match(std::string_view t, std::string_view p) {
  // Iterative glob with one backtrack point per '*' (enough for '*' and '?').
  size_t ti = 0, pi = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++ti;
      ++pi;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

}  // namespace

bool ssh_pattern_match(std::string_view text, std::string_view pattern) {
  return pattern_match(text, pattern);
}

bool ssh_host_line_matches(std::string_view host, const std::vector<std::string>& patterns) {
  const std::string h(host);
  bool matched = false;
  for (const auto& raw : patterns) {
    std::string p = raw;
    bool neg = !p.empty() && p[0] == '!';
    if (neg) p.erase(0, 1);
    if (!pattern_match(h, p)) continue;
    if (neg) return false;  // a negated match rules the whole line out
    matched = true;
  }
  return matched;
}

int ssh_pattern_list_match(std::string_view text, std::string_view list, bool ignore_case) {
  const std::string t = ignore_case ? lower(text) : std::string(text);
  int result = 0;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    std::string p(list.substr(start, comma - start));
    if (ignore_case) p = lower(p);
    bool neg = !p.empty() && p[0] == '!';
    if (neg) p.erase(0, 1);
    if (!p.empty() && pattern_match(t, p)) {
      if (neg) return -1;
      result = 1;
    }
    start = comma + 1;
  }
  return result;
}

std::string openssh_default_algorithms(std::string_view keyword) {
  // OpenSSH 9.2's (ssh -G -F none).
  static const char* kKeys =
      "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
      "ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
      "sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,"
      "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,"
      "ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,"
      "sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-256";
  if (keyword == "hostkeyalgorithms" || keyword == "pubkeyacceptedalgorithms") return kKeys;
  if (keyword == "ciphers")
    return "chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,"
           "aes128-gcm@openssh.com,aes256-gcm@openssh.com";
  if (keyword == "kexalgorithms")
    return "sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,"
           "curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,"
           "diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,"
           "diffie-hellman-group18-sha512,diffie-hellman-group14-sha256";
  if (keyword == "macs")
    return "umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,"
           "hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,"
           "umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1";
  return "";
}

std::string apply_algorithm_list(const std::string& value, const std::string& defaults) {
  auto split = [](std::string_view list) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= list.size()) {
      size_t comma = list.find(',', start);
      if (comma == std::string_view::npos) comma = list.size();
      if (comma > start) out.emplace_back(list.substr(start, comma - start));
      start = comma + 1;
    }
    return out;
  };
  if (value.empty() || (value[0] != '+' && value[0] != '-' && value[0] != '^')) return value;
  std::vector<std::string> base = split(defaults), given = split(std::string_view(value).substr(1));
  std::vector<std::string> out;
  auto has = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  if (value[0] == '+') {
    out = base;
    for (const auto& g : given)
      if (!has(out, g)) out.push_back(g);
  } else if (value[0] == '^') {
    for (const auto& g : given)
      if (!has(out, g)) out.push_back(g);
    for (const auto& b : base)
      if (!has(out, b)) out.push_back(b);
  } else {
    for (const auto& b : base) {
      bool removed = false;
      for (const auto& g : given) removed = removed || pattern_match(b, g);
      if (!removed) out.push_back(b);
    }
  }
  std::string joined;
  for (const auto& a : out) joined += (joined.empty() ? "" : ",") + a;
  return joined;
}

std::vector<SshConfigFile> ssh_config_files(const std::string& ssh_config) {
  if (ssh_config == "none") return {};
  if (ssh_config.empty())
    return {{user_home() + "/.ssh/config", true}, {"/etc/ssh/ssh_config", false}};
  std::string path = ssh_config;
  if (path == "~" || path.rfind("~/", 0) == 0) path = user_home() + path.substr(1);
  return {{path, true}};
}

std::optional<std::string> scan_ssh_config(const std::vector<SshConfigFile>& files,
                                           const SshConfigQuery& q, SshHostConfig* out) {
  *out = SshHostConfig{};
  Scanner scanner(q, out);
  for (const auto& f : files)
    if (auto err = scanner.read(f.path, f.user, Applies::yes, 0)) return err;
  if (scanner.wants_final_pass()) {
    scanner.start_final_pass();
    for (const auto& f : files)
      if (auto err = scanner.read(f.path, f.user, Applies::yes, 0)) return err;
  }
  scanner.finish();
  return std::nullopt;
}

std::optional<std::string> scan_identity_options(const std::vector<SshConfigFile>& files,
                                                 const SshConfigQuery& q, IdentityOptions* out) {
  SshHostConfig all;
  auto err = scan_ssh_config(files, q, &all);
  *out = std::move(all.identity);
  return err;
}

namespace {

/// %C: ssh(1)'s connection hash, the SHA-1 hex of %l%h%p%r.
std::string connection_hash(const IdentityPathContext& c) {
  std::string text = c.local_host + c.remote_host + std::to_string(c.port) + c.remote_user;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(text.data(), text.size(), md, &len, EVP_sha1(), nullptr) != 1) return "";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) out += fmt::format("{:02x}", md[i]);
  return out;
}

}  // namespace

std::string expand_identity_path(const std::string& raw, const IdentityPathContext& c) {
  std::string s = raw;
  if (s == "~" || s.rfind("~/", 0) == 0) s = c.home + s.substr(1);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    if (ch == '%' && i + 1 < s.size()) {
      char t = s[i + 1];
      std::string v;
      bool known = true;
      switch (t) {
        case '%': v = "%"; break;
        case 'd': v = c.home; break;
        case 'h': v = c.remote_host; break;
        case 'i': v = std::to_string(c.uid); break;
        case 'k':
        case 'n': v = c.original_host; break;
        case 'C': v = connection_hash(c); break;
        case 'L': v = c.local_host.substr(0, c.local_host.find('.')); break;
        case 'l': v = c.local_host; break;
        case 'p': v = std::to_string(c.port); break;
        case 'r': v = c.remote_user; break;
        case 'u': v = c.local_user; break;
        default: known = false;
      }
      if (known) {
        out += v;
        ++i;
        continue;
      }
    } else if (ch == '$' && i + 1 < s.size() && s[i + 1] == '{') {
      size_t close = s.find('}', i + 2);
      if (close != std::string::npos) {
        std::string name = s.substr(i + 2, close - i - 2);
        if (const char* v = std::getenv(name.c_str())) {
          out += v;
          i = close;
          continue;
        }
      }
    }
    out += ch;
  }
  return out;
}

namespace {

/// This process's passwd entry field (getpwuid_r: hosts connect in parallel threads).
std::string passwd_field(bool home) {
  passwd pw{}, *found = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(getuid(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) return "";
  const char* v = home ? pw.pw_dir : pw.pw_name;
  return v ? v : "";
}

}  // namespace

std::string user_home() {
  if (std::string h = passwd_field(true); !h.empty()) return h;
  if (const char* h = std::getenv("HOME")) return h;
  return "";
}

std::string local_user_name() {
  if (std::string u = passwd_field(false); !u.empty()) return u;
  if (const char* u = std::getenv("USER")) return u;
  return "";
}

}  // namespace ratchet::transport
