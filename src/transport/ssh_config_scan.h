#pragma once
// ssh_config(5) read the way OpenSSH 9's readconf.c reads it, for the host
// argument ssh(1) would be given (the inventory `address`, else its name).
// libssh 0.10 is not left to read the config itself: its matching differs
// from OpenSSH's (case ignored, later Host lines re-tested against a HostName)
// and it ignores or hides IdentitiesOnly, IdentityFile order, IdentityAgent and
// HashKnownHosts. configure_session (ssh_session.cc) applies what this finds.
// Pure text and files: no libssh.
//
// Which lines apply to a host follows ssh_config(5) as OpenSSH reads it:
//  - `Host` patterns ('*', '?', '!' negation, several per line) are tested
//    against the name given, as given (case counts, as in OpenSSH), never
//    against a HostName set earlier.
//  - For each keyword the first value obtained wins; IdentityFile lines
//    accumulate in order, duplicates dropped; ProxyJump and ProxyCommand share
//    one slot (whichever comes first).
//  - `Include` reads files (glob patterns, several per line; a relative path
//    is under ~/.ssh in a user config, /etc/ssh in the system one) in place, up
//    to 16 levels deep; an Include in a block that does not apply reads nothing
//    that applies, and an included file's Host or Match lines do not change the
//    including file's state.
//  - `Match` evaluates all, host (the HostName obtained so far, %h expanded,
//    else the name given; case ignored), originalhost (case ignored), user (the
//    inventory user, else the config's User so far, else the local user) and
//    localuser, with '!' and pattern lists; `final` and `canonical` hold on
//    the final pass, which a `Match final` asks for (the config read again,
//    Host lines then testing the HostName; ratchet never canonicalizes). The
//    other criteria (exec, localnetwork, tagged, version, ...) are not
//    evaluated — ratchet runs no command to read a config. Such a block is
//    treated conservatively: it does not apply, except that an
//    `IdentitiesOnly yes` in it does (offering fewer keys is the safe side).
//  - The HostName dialled is HostName (%h, %% expanded) or the name given,
//    lowercased, as ssh -G prints it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratchet::transport {

/// OpenSSH's match_pattern: '*' matches any run of characters (empty
/// included), '?' any one character; the whole of `text` must match. Exact
/// (case-sensitive) comparison otherwise.
bool ssh_pattern_match(std::string_view text, std::string_view pattern);

/// One `Host` line's patterns (its whitespace-separated arguments) against
/// `host`: true when at least one pattern without '!' matches and no pattern
/// written "!pattern" does (ssh_config(5) PATTERNS). Case counts, as in OpenSSH.
bool ssh_host_line_matches(std::string_view host, const std::vector<std::string>& patterns);

/// A comma-separated pattern list as a Match criterion takes one (OpenSSH's
/// match_pattern_list): 1 when some pattern matches and no "!pattern" does,
/// -1 when a "!pattern" matches, 0 otherwise. `ignore_case` for host names.
int ssh_pattern_list_match(std::string_view text, std::string_view list, bool ignore_case);

/// One config file to read, and where its relative Include paths resolve.
struct SshConfigFile {
  std::string path;
  bool user = true;  ///< a user config (~/.ssh/config or -F): relative Include under ~/.ssh; else /etc/ssh
};

/// The files an Endpoint::ssh_config value stands for, in reading order (as
/// ssh(1)): "" → ~/.ssh/config then /etc/ssh/ssh_config; "none" → none; any
/// other value → that file alone ("~/" expanded), as `ssh -F FILE` reads no
/// system file. Missing files are left to the reader (they are skipped).
std::vector<SshConfigFile> ssh_config_files(const std::string& ssh_config);

/// Who connects, for Host and Match lines.
struct SshConfigQuery {
  std::string host;        ///< the host argument (address, else name): Host patterns and Match originalhost test it
  std::string user;        ///< the login user set outside the config (inventory); "" = none
  std::string local_user;  ///< Match localuser, and Match user without a User; "" = this process's user
};

/// What the config says about one host's keys.
struct IdentityOptions {
  /// IdentitiesOnly: the first value obtained ("yes"/"true" or "no"/"false");
  /// false when the config never says.
  bool identities_only = false;
  /// IdentityFile values that apply, in the order read, as written (tokens
  /// and "~" unexpanded: expand_identity_path), duplicates dropped.
  std::vector<std::string> identity_files;
  /// IdentityAgent's first value as written ("" = not set: $SSH_AUTH_SOCK;
  /// "none" = no agent; "SSH_AUTH_SOCK" = that variable).
  std::string identity_agent;
  /// "FILE line N" of each Match line that was not evaluated and whose
  /// `IdentitiesOnly yes` was applied (see above); for messages.
  std::vector<std::string> assumed;
};

/// Everything ratchet takes from the config for one host argument ("" / 0 /
/// nullopt / empty = the config does not say). Values as written (tokens
/// unexpanded) except `hostname`.
struct SshHostConfig {
  std::string hostname;  ///< HostName (%h, %% expanded), else the name given; lowercased
  int port = 0;
  std::string user;
  std::string proxy_jump;     ///< ProxyJump as written ("none" kept); "" = not set
  std::string proxy_command;  ///< ProxyCommand as written, the whole rest of the line; "" = not set
  std::string host_key_algorithms;         ///< HostKeyAlgorithms ("+", "-", "^" kept)
  std::string pubkey_accepted_algorithms;  ///< PubkeyAcceptedAlgorithms (or PubkeyAcceptedKeyTypes)
  std::string ciphers, kex_algorithms, macs;
  std::optional<bool> hash_known_hosts, compression;
  std::optional<int> server_alive_interval_s;  ///< ServerAliveInterval in seconds (0 = none)
  std::optional<int> server_alive_count_max;   ///< ServerAliveCountMax
  std::vector<std::string> user_known_hosts_files;  ///< UserKnownHostsFile's first line's files
  std::string global_known_hosts_file;              ///< GlobalKnownHostsFile's first file
  IdentityOptions identity;
};

/// Reads `files` in order for `q` and fills *out (ssh -G, for the keywords of
/// SshHostConfig). Returns an error line ("FILE line N: ...") for a value ssh(1)
/// refuses too (IdentitiesOnly, HashKnownHosts, Compression not yes/no; a Port
/// outside 1..65535; a ServerAliveInterval that is no time, a ServerAliveCountMax no count) or Include nested deeper than 16; nullopt otherwise. A
/// file that does not exist is skipped.
std::optional<std::string> scan_ssh_config(const std::vector<SshConfigFile>& files,
                                           const SshConfigQuery& q, SshHostConfig* out);

/// scan_ssh_config, keeping only the keys' part. Reads `files` in order for `q` and fills *out. Returns an error line
/// ("FILE line N: ...") for an IdentitiesOnly value other than yes/true/no/false
/// (ssh(1) refuses such a config too) or Include nested deeper than 16;
/// nullopt otherwise. A file that does not exist is skipped.
std::optional<std::string> scan_identity_options(const std::vector<SshConfigFile>& files,
                                                 const SshConfigQuery& q, IdentityOptions* out);

/// OpenSSH 9's default list for an algorithm keyword (lowercase: "ciphers",
/// "kexalgorithms", "macs", "hostkeyalgorithms", "pubkeyacceptedalgorithms"),
/// as ssh -G prints it; "" for another keyword.
std::string openssh_default_algorithms(std::string_view keyword);

/// An algorithm list value as ssh(1) reads it against `defaults`: "+a,b"
/// appends those not there, "-a,b*" removes those matching (patterns allowed),
/// "^a,b" puts them first; any other value is the list itself.
std::string apply_algorithm_list(const std::string& value, const std::string& defaults);

/// The values ssh_config(5) TOKENS stand for in an IdentityFile.
struct IdentityPathContext {
  std::string home;           ///< %d and "~"
  std::string local_user;     ///< %u
  std::string local_host;     ///< %l (%L: up to its first dot)
  std::string remote_host;    ///< %h: the HostName dialled
  std::string original_host;  ///< %n and %k: the host argument (inventory address, else name)
  std::string remote_user;    ///< %r
  int port = 22;              ///< %p
  unsigned uid = 0;           ///< %i
};

/// Expands one IdentityFile value as ssh(1) does: a leading "~" or "~/" →
/// home, then %%, %C, %d, %h, %i, %k, %L, %l, %n, %p, %r, %u and ${VAR} (from the
/// environment). A token it does not know, or an unset variable, stays as
/// written (the file will not be found, and the message shows why).
std::string expand_identity_path(const std::string& raw, const IdentityPathContext& c);

/// The user's home directory as ssh(1) finds it: the passwd entry, $HOME only
/// without one.
std::string user_home();

/// This process's user name (passwd entry, else $USER), for %u and Match localuser.
std::string local_user_name();

}  // namespace ratchet::transport
