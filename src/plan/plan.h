#pragma once
// The plan: every step of every selected host rendered to its exact commands,
// with what it was made from (docs/plan.md). Built once; `plan` prints it,
// `plan --out` saves it, `run` and `apply` execute that same value.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plan/findings.h"
#include "playbook/model.h"
#include "steps/action.h"
#include "util/duration.h"

namespace ratchet::plan {

/// What one rung does beyond its commands, as `plan` shows it.
struct RungFacts {
  util::Millis timeout{0};  ///< bounds each of its commands
  /// kill only: how long the action waits for its targets to die (unset: not a kill)
  std::optional<util::Millis> wait;
};

/// One step planned for one host.
struct Step {
  size_t index = 0;        ///< its place in the playbook's steps (0-based)
  std::string id, name;
  playbook::Kind kind = playbook::Kind::run;  ///< the step's own (rung 0's)
  std::string source;      ///< where the step was written ("file:line:col")
  std::string when;        ///< "NAME" | "not NAME"; "" = always
  std::string when_note;   ///< "runs only when `x` (now true: runs)"; "" = always
  playbook::OnFailure on_failure = playbook::OnFailure::stop;
  std::string register_as;  ///< "" = none
  bool become = false;      ///< its commands run through sudo
  std::string become_user;  ///< the -u sudo is given ("" = sudo's default, root)
  std::string become_shown; ///< the user it runs as, for people ("root" when become_user is "")
  std::string sudo_argv;    ///< transport::sudo_argv for a sudoers rule; "" = no become
  size_t capture = 1 << 20; ///< bytes kept per stream and command
  util::Millis timeout{60'000};
  steps::PreparedStep prepared;  ///< the commands of every rung, rendered for this host
  std::vector<RungFacts> rung_facts;  ///< parallel to prepared.rungs
  /// The values known only when it runs that its commands or content use
  /// ("steps.stop.status", "run.id", or a secret's name). Empty: `prepared` is
  /// final and runs byte for byte; else it shows "<name>" placeholders and the
  /// step is rendered again, from the same model, once those values exist.
  std::vector<std::string> runtime_refs;
};

/// Where a host is reached, as ssh config and the inventory resolve it.
struct Endpoint {
  std::string address;
  int port = 22;
  std::string user;
  std::string jump;      ///< "" = direct
  std::string identity;  ///< "" = the defaults
  std::string proxy;     ///< a ProxyCommand from ssh config ("" = none): a local command connect runs
  bool identities_only = false;  ///< ssh config IdentitiesOnly: which keys connect offers
  /// known_hosts' keys for it when planned ("SHA256:..."); `apply` accepts only these.
  std::vector<std::string> known_keys;
};

/// One host's plan.
struct HostPlan {
  playbook::Host host;
  Endpoint endpoint;
  /// The host's vars as its steps see them (playbook < group < host < -e),
  /// secrets left out.
  playbook::Value vars = playbook::Value::table();
  /// The run lock and the audit line on this host (playbook/guards.h).
  playbook::Guards guards;
  std::vector<Step> steps;
};

/// A file the plan was made from, by sha256 (hex).
struct Source {
  std::string role;  ///< "playbook", "include", "template", "unit_file", "inventory", "ssh_config"
  std::string name;  ///< as written in the playbook ("" for playbook, include, inventory, ssh_config)
  std::string path;  ///< as opened
  std::string sha256;  ///< "" = the file did not exist (an ssh config may not)
};

/// What the command line selected (replayed by `apply`).
struct Selection {
  std::string inventory;                ///< -i FILE ("" = the playbook's own, or --target)
  std::vector<std::string> targets;     ///< --target specs
  std::vector<std::string> limit;       ///< --limit patterns
  /// -e NAME=VALUE pairs that are vars, in order (values as given).
  std::vector<std::pair<std::string, std::string>> extra_vars;
  std::vector<std::string> extra_secrets;  ///< --secret names (their values are never saved)
  std::string ssh_config;               ///< -F FILE ("" = ~/.ssh/config)
  std::string known_hosts;              ///< --known-hosts FILE
  bool accept_new = false;
  std::string strategy;                 ///< --strategy ("" = the playbook's)
  /// Which steps run (plan/selection.h): --tags, --skip-tags, --start-at, --step.
  std::vector<std::string> tags, skip_tags;
  std::string start_at;
  std::vector<std::string> steps;
};

/// A step the selection left out of the plan, and why ("no tag of --tags gpu").
struct Unselected {
  std::string id;
  std::string reason;
};

/// Who made the plan, when, with what.
struct Made {
  std::string at;       ///< RFC 3339 UTC
  long long at_unix = 0;  ///< seconds since the epoch (for --max-age)
  std::string by;       ///< "user@hostname"
  std::string ratchet_version;
  std::string host_library_sha256;
};

struct Plan {
  std::string playbook_name;
  std::string playbook_path;    ///< as given on the command line (sources holds it absolute)
  playbook::RunPolicy policy;
  Made made;
  Selection selection;
  std::vector<Source> sources;  ///< the playbook first, then its files, inventory, ssh config
  std::map<std::string, std::string> secrets;  ///< name -> source ("env:X", "file:P", "-e"); never a value
  std::vector<HostPlan> hosts;
  /// The steps --tags, --skip-tags, --start-at or --step left out (every host's
  /// plan holds only the others), in playbook order.
  std::vector<Unselected> not_selected;
  /// `plan --probe --out`: what the probe found when the plan was made;
  /// `apply` probes again and compares (docs/plan.md#probe). nullopt = not probed.
  std::optional<Findings> probe;
};

}  // namespace ratchet::plan
