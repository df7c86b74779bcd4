#pragma once
// The typed keys of each step kind (docs/playbook.md, "Kinds"): one struct per
// kind, each key a Field (its value, or a template each host renders). The
// loader fills them (playbook/schema.h's table holds each key's rule); the
// builders (steps/kinds.h) read them once every template is resolved.
#include <string>
#include <variant>
#include <vector>

#include "playbook/field.h"
#include "playbook/kind.h"
#include "util/duration.h"
#include "util/rules.h"

namespace ratchet::playbook {

/// A file mode as chmod(1) takes it: 1 to 4 octal digits, as written ("0644").
struct FileMode {
  std::string octal;
  /// Without leading zeros ("644", "0" for "0000"): as stat(1) prints it.
  std::string bare() const;
};

/// A service step's `state`.
enum class ServiceState { started, stopped, restarted, reloaded };

/// A service step's `scope`: the system manager, or a user's own (systemd --user).
enum class ServiceScope { system, user };

/// kind = "run": `command`, checked by `check`, `unless` or `creates`.
struct RunAction {
  Field<std::string> command, check, unless;
  Field<std::vector<std::string>> creates;
  Field<std::vector<int>> expect_exit;  ///< default [0]
  Field<std::string> stdin_data;        ///< key `stdin`
};

/// kind = "service": a systemd unit's state, enablement and unit file.
struct ServiceAction {
  Field<std::string> unit;
  Field<ServiceState> state;
  Field<bool> enabled;
  Field<std::string> unit_file;           ///< a local file, read at load (Playbook::files)
  Field<util::Millis> transition_wait;    ///< default 30 s
  Field<ServiceScope> scope;              ///< default system
  Field<std::string> user;                ///< scope = "user": whose manager (required then, only then)
};

/// kind = "kill": one selector (pid, pid_file, pattern, holders_of), a signal, a wait.
struct KillAction {
  Field<long long> pid;
  Field<std::string> pid_file, pattern;
  Field<std::vector<std::string>> holders_of;
  Field<std::vector<std::string>> user, exclude;  ///< only processes of these users; never these names
  Field<bool> missing_ok;                         ///< holders_of: a path that matches no file is no error
  Field<bool> tree;
  Field<util::SignalSpec> signal;  ///< default TERM
  Field<util::Millis> wait;        ///< default 5 s
};

/// kind = "verify": conditions, all of which must hold.
struct VerifyAction {
  Field<std::vector<std::string>> no_holders;
  Field<bool> gpus_idle;                          ///< the GPU condition (steps/gpus.h); true when given
  Field<std::vector<std::string>> gpus;           ///< gpus_idle: {"all"} or GPU indexes / UUIDs
  Field<long long> max_memory_used;               ///< gpus_idle: MiB a GPU may show used (default 512)
  Field<std::vector<std::string>> gpu_devices;    ///< gpus_idle: the device files (default /dev/nvidia*)
  Field<std::string> nvidia_smi;                  ///< gpus_idle: the program (default nvidia-smi)
  Field<util::Millis> smi_timeout;                ///< gpus_idle: bound on each nvidia-smi call (default 10 s)
  Field<std::vector<std::string>> user, exclude;  ///< no_holders' and gpus_idle's filters, as kill's
  Field<bool> missing_ok;
  Field<std::vector<std::string>> absent, service_active, file_exists;
  Field<std::vector<int>> port_free, port_open;
  Field<std::string> command, stdout_matches;
};

/// kind = "write": a file's content (inline or a local template), mode and owner.
struct WriteAction {
  Field<std::string> path;
  Field<std::string> content;
  Field<std::string> template_file;  ///< key `template`: a local file, read at load
  Field<FileMode> mode;
  Field<std::string> owner, group;
  Field<bool> backup;
};

/// kind = "copy": a local file or directory tree (`src`, read at load into
/// Playbook::files' tree) uploaded to `dest`, file by file.
struct CopyAction {
  Field<std::string> src;   ///< relative to the playbook; literal
  Field<std::string> dest;  ///< absolute path on the host
  Field<FileMode> mode;     ///< files' mode; default each file's source bits
  Field<std::string> owner, group;
  Field<std::vector<std::string>> exclude;  ///< globs over the relative path or the name; literal
  Field<bool> follow;       ///< symlinks in the source are followed (default: recreated)
};

/// kind = "fetch": files on the host (paths or globs, expanded there) into the
/// run's artifact directory (engine/fetch.h).
struct FetchAction {
  Field<std::vector<std::string>> src;
  Field<long long> max_size;  ///< bytes per file; default kDefaultMaxSize
  Field<bool> missing_ok;     ///< a pattern that matches nothing is no error
};

/// fetch's default `max_size`: 64 MiB.
inline constexpr long long kDefaultMaxSize = 64LL << 20;

/// kind = "reboot": the reboot command, a test once it is back, a bound.
struct RebootAction {
  Field<std::string> command;         ///< default "systemctl reboot"
  Field<std::string> test_command;
  Field<util::Millis> reboot_timeout;  ///< default 10 min
};

/// One action's keys, by kind.
using ActionKeys =
    std::variant<RunAction, ServiceAction, KillAction, VerifyAction, WriteAction, CopyAction, FetchAction, RebootAction>;

/// Empty keys of kind `k`.
ActionKeys keys_of(Kind k);

}  // namespace ratchet::playbook
