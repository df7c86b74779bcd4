#pragma once
// The validated playbook and inventory model (docs/playbook.md). Plain data: the
// loader fills it, the planner renders it per host, the engine runs it.
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "playbook/actions.h"
#include "playbook/guards.h"
#include "playbook/kind.h"
#include "playbook/source_pos.h"
#include "playbook/value.h"
#include "util/duration.h"

namespace ratchet::playbook {

/// One action: a step's own (rung 0) or one escalation rung (1..n).
/// `keys` holds the kind's keys, typed; a key written with {{ }} keeps its
/// template, which each host renders (steps::resolve).
struct Action {
  /// Unset only in a playbook that failed to load (`kind` missing or unknown).
  std::optional<Kind> kind;
  ActionKeys keys;                       ///< of `kind` (RunAction while it is unset)
  std::map<std::string, SourcePos> pos;  ///< where each key was written (common keys too)
  SourcePos where;                       ///< the table that holds this action
  /// Rungs only: timing that replaces the step's for this rung (unset = the step's).
  std::optional<util::Millis> timeout, settle, delay;
  std::optional<int> retries;
};

enum class OnFailure { stop, cont };

/// A step: a check and an action of one kind, escalation rungs, and timing.
struct Step {
  std::string id;    ///< [a-z0-9_]+; default: slug of name
  std::string name;
  std::optional<Kind> kind;     ///< as body.kind
  Action body;                  ///< rung 0: the step's own check and action
  std::vector<Action> escalate;  ///< rungs 1..n in file order
  util::Millis timeout{60'000};  ///< bounds each remote command
  util::Millis settle{0};        ///< wait once after an action, before the check
  int retries = 0;               ///< extra check attempts while it fails
  util::Millis delay{1'000};     ///< between check retries
  size_t capture = 1 << 20;      ///< bytes kept per stream and command (head + tail)
  std::string when;              ///< boolean var name, or "not NAME"; "" = always
  OnFailure on_failure = OnFailure::stop;
  std::string register_as;       ///< extra name for this step's results ("" = none)
  std::optional<bool> become;    ///< step or [defaults] `become`; unset = the host's
  std::string become_user;       ///< "" = the host's, else root
  bool probe = true;             ///< `probe = false`: `plan --probe` does not run its check
  std::vector<std::string> tags;  ///< `tags` (and an include entry's), for --tags/--skip-tags
  SourcePos where;
  /// The include entries that brought this step in, innermost first (empty: the
  /// playbook's own step). Its id is then "INCLUDE_ID.ID" (docs/playbook.md, "Include").
  std::vector<SourcePos> included_from;
};

/// Where `s` was written, for people and the plan: "file:line:col", then
/// ", included from FILE:LINE:COL" for each include entry that brought it in.
std::string origin(const Step& s);

/// One host of the inventory (docs/playbook.md, "Inventory").
struct Host {
  std::string name;
  std::string address;      ///< "" = the name, resolved through ssh config
  int port = 0;             ///< 0 = from ssh config, else 22
  std::string user;         ///< "" = from ssh config, else the local user
  std::string identity;     ///< private key file ("~" expanded by the transport)
  std::string known_hosts;  ///< file used instead of ~/.ssh/known_hosts
  std::string jump;         ///< user@bastion:port (v0.2)
  bool become = false;
  std::string become_user;
  GuardKeys guards;  ///< `lock`, `lock_path`, `audit_log` (playbook/guards.h)
  Value vars = Value::table();
  SourcePos where;
};

/// The address to connect to: `address`, else the name without an ad hoc
/// ":port" suffix (ssh config may still map it through HostName).
std::string connect_name(const Host& h);

/// Whether `s` runs through sudo on `h`: the step's (or [defaults]') `become`
/// when set, so `become = false` turns a host's `become = true` off; else the host's.
bool becomes(const Step& s, const Host& h);

/// The user `s` becomes on `h`: the step's `become_user`, else the host's, else "root".
std::string become_user_for(const Step& s, const Host& h);

struct Inventory {
  std::string path;
  std::map<std::string, Host> hosts;
  std::map<std::string, std::vector<std::string>> groups;
  std::map<std::string, Value> group_vars;  ///< group name -> vars table
  std::vector<std::string> order;           ///< host names in file order (empty: use name order)
  /// [defaults] sign = true: `run` and `apply` sign the run record, as --sign (transcript/sign.h).
  bool sign = false;
};

/// A number of hosts written as N or "N%" (of the hosts selected for the run).
struct HostCount {
  bool set = false;
  long long value = 0;   ///< hosts, or percent when `percent`
  bool percent = false;
};

/// How hosts of a batch move through the steps: `linear`, every host of a batch
/// ends step k before any starts k+1; `free`, each host runs its steps as fast as it can.
enum class Strategy { linear, free };

/// Every strategy, as name() writes them.
inline constexpr std::array<Strategy, 2> kStrategies = {Strategy::linear, Strategy::free};

/// "linear" or "free".
std::string_view name(Strategy s);

/// The strategy `s` names exactly, or nullopt.
std::optional<Strategy> parse_strategy(std::string_view s);

/// How `run` schedules hosts (README.md, "A fleet"; the names are Ansible's).
struct RunPolicy {
  Strategy strategy = Strategy::linear;
  HostCount serial;    ///< hosts per rolling batch (unset = all in one batch)
  HostCount max_fail;  ///< failed or unreachable hosts tolerated before no further batch starts
};

/// A local file a step reads (a write step's `template`, a service step's
/// `unit_file`): read once, at load; builders and the plan use these bytes.
/// One entry of a copy step's source tree, read at load (playbook/local_tree.h).
struct TreeEntry {
  enum class Type { file, dir, link };
  Type type = Type::file;
  std::string rel;     ///< below the source ("" = the source itself); never "..", no leading "/"
  std::string path;    ///< the local file, absolute (file: what is uploaded)
  unsigned mode = 0;   ///< permission bits (file, dir)
  unsigned long long size = 0;  ///< file: bytes
  std::string sha256;  ///< file: of its bytes (hex)
  std::string link;    ///< link: its target, as readlink(2) gives it
};

struct LocalFile {
  std::string role;    ///< the key that names it: "template", "unit_file" or "src" (copy)
  std::string path;    ///< as opened: relative to the playbook's directory unless absolute
  std::string bytes;
  std::string sha256;  ///< of `bytes` (hex)
  std::vector<TreeEntry> tree;  ///< copy: the entries, parents first (bytes and sha256 unused)
};

/// A file an `include` step entry read (docs/playbook.md, "Include").
struct IncludedFile {
  std::string path;    ///< as opened: relative to the including file's directory unless absolute
  std::string source;  ///< its bytes
  std::string sha256;  ///< of `source`
  /// The include entries that read it, innermost first (the first time it was read).
  std::vector<SourcePos> included_from;
};

struct Playbook {
  std::string path;         ///< as given on the command line
  std::string dir;          ///< directory of the playbook (templates are relative to it)
  std::string source;       ///< the file's bytes
  std::string sha256;       ///< of `source`
  std::string name;
  std::string description;
  std::vector<std::string> targets;
  RunPolicy policy;  ///< top-level `strategy`, `serial`, `max_fail`
  GuardKeys guards;  ///< top-level `lock`, `lock_path`, `audit_log` (a host's win)
  Value vars = Value::table();
  /// Where each var was written: in the file, else "-e" for one only -e sets.
  std::map<std::string, SourcePos> var_pos;
  std::map<std::string, std::string> secrets;  ///< name -> "env:NAME" | "file:PATH" | "-e"
  /// Values of the secrets whose source is "-e" (`-e NAME=VALUE --secret NAME`).
  std::map<std::string, std::string> extra_secrets;
  std::vector<Step> steps;
  std::optional<Inventory> inventory;  ///< an [inventory] table in the playbook
  /// Every `template` and `unit_file` the steps name, by the value as written.
  std::map<std::string, LocalFile> files;
  /// Every file an include read, in the order first read (plan sources, freshness).
  std::vector<IncludedFile> includes;
};

/// The text of `file` as loaded: the playbook's source, or an included file's
/// ("" when it is neither): for the source line of an error at `file`.
const std::string& text_of(const Playbook& pb, const std::string& file);

}  // namespace ratchet::playbook
