#pragma once
// Options shared by run, plan, validate and exec, and loading what they name.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/duration.h"
#include "playbook/model.h"
#include "transport/transport.h"

namespace ratchet::cli {

struct Options {
  std::string command;                  ///< the subcommand ("run", "plan", ...), for usage hints
  std::string playbook;
  std::string inventory;                ///< -i FILE
  std::vector<std::string> limit;       ///< --limit H,G,glob
  std::vector<std::string> extra;       ///< -e key=value
  std::vector<std::string> secret;      ///< --secret NAME: that -e value is a secret
  std::vector<std::string> target;      ///< --target [user@]host[:port]
  std::string ssh_config;               ///< -F FILE
  std::string known_hosts;              ///< --known-hosts FILE
  bool accept_new = false;              ///< --accept-new
  int forks = 10;
  std::string transcript;               ///< --transcript FILE
  std::string artifacts;                ///< --artifacts DIR (run, apply: fetch's files; "" = beside the transcript)
  std::string report;                   ///< run/apply --report FILE: the HTML report of the run (docs/report.md)
  bool json = false;                    ///< plan --json, run --json
  std::string out;                      ///< plan --out FILE: save the plan
  bool out_given = false;               ///< --out was given (an empty FILE is an error)
  bool probe = false;                   ///< plan --probe: connect and run each step's check once
  std::string strategy;                 ///< --strategy linear|free ("" = the playbook's)
  bool ask_become_pass = false;         ///< -K, --ask-become-pass
  std::string become_password_file;     ///< --become-password-file FILE
  std::string become_password_env;      ///< --become-password-env NAME
  std::string reconnect_timeout = "30s";  ///< --reconnect-timeout DURATION ("0" = never)
  /// --connect-timeout DURATION: TCP connect plus SSH handshake and auth, per
  /// session (the target and each jump hop), as OpenSSH's ConnectTimeout bounds connect.
  util::Millis connect_timeout{10'000};
  /// --keepalive INTERVAL[:COUNT]: as ServerAliveInterval and ServerAliveCountMax
  /// (transport.h Keepalive); an interval of 0 = the ssh config's.
  transport::Keepalive keepalive;
  bool lock = false;                    ///< --lock: take the lock on every host (docs/playbook.md, "Lock and audit")
  std::string lock_wait = "0";          ///< --lock-wait DURATION: wait for a held lock ("0" = fail at once)
  bool break_lock = false;              ///< --break-lock: take a stale lock (its holder's session gone)
  bool sign = false;                    ///< run/apply --sign: sign the final head with an SSH key (transcript/sign.h)
  std::string sign_key;                 ///< --sign-key FILE: that key ("" = the agent's first); implies --sign
  /// Which steps run (plan/selection.h): --tags, --skip-tags (comma-separated,
  /// repeatable), --start-at STEP, --step ID (repeatable).
  std::vector<std::string> tags, skip_tags, steps;
  std::string start_at;
  /// --transport channel|session: how commands reach each host (transport.h ExecMode).
  transport::ExecMode exec_mode = transport::ExecMode::session;
};

/// A loaded playbook with its hosts resolved; what plan/run/validate work on.
struct Loaded {
  playbook::Playbook pb;
  std::optional<playbook::Inventory> inv;   ///< -i, the playbook's [inventory], or ad hoc
  std::vector<playbook::Host> hosts;        ///< selected, in order
  std::vector<std::string> extra_keys;      ///< names given with -e
  /// Only with hosts_optional and no inventory at all: no hosts, so the targets,
  /// host vars and per-host rendering were not checked.
  bool no_hosts = false;
  /// With no_hosts: vars the templates use that no playbook var, secret or -e
  /// defines (a host or group var may), in the order first used.
  std::vector<std::string> unchecked_vars;
};

/// Loads and validates the playbook and inventory, checks references and -e
/// names, and resolves the selected hosts, reporting every error it finds in
/// one pass. Prints errors to stderr; nullopt = exit 2. With `hosts_optional`
/// (validate), no inventory at all is no error: see Loaded::no_hosts.
std::optional<Loaded> load_all(const Options& o, bool hosts_optional = false);

/// `exec --user/--port/--identity`: what an ad hoc target leaves out.
struct TargetDefaults {
  std::string user;      ///< "" = the ssh config's, else the local user
  int port = 0;          ///< 0 = the ssh config's, else 22
  std::string identity;  ///< a key file; "" = the ssh config's, the agent, ~/.ssh/id_*
  bool any() const { return !user.empty() || port != 0 || !identity.empty(); }
};

/// Parses "[user@]host[:port]" into an ad hoc host named "host" or "host:port";
/// the user and port `d` gives fill what the spec leaves out (the spec's win),
/// and d.identity becomes the host's identity.
std::optional<playbook::Host> parse_target(const std::string& spec, std::string* err,
                                           const TargetDefaults& d = {});

/// The transport endpoint for `h`, with -F/--known-hosts/--accept-new applied.
transport::Endpoint endpoint_for(const playbook::Host& h, const Options& o);

/// Secret values from their sources (env:NAME, file:PATH, -e with --secret) as name → value;
/// in a dry run every value is "***". Prints an error and returns nullopt when
/// a source is missing.
std::optional<playbook::Value> resolve_secrets(const playbook::Playbook& pb, bool dry_run);

}  // namespace ratchet::cli
