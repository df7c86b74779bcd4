#pragma once
// What a step turns into: commands to run and how to judge their results.
// Steps never do I/O; the engine runs these commands through a transport.
#include <optional>
#include <string>
#include <vector>

#include "playbook/kind.h"
#include "steps/holders.h"
#include "steps/judge.h"
#include "steps/role.h"
#include "transport/transport.h"
#include "util/duration.h"

namespace ratchet::steps {

/// What a command's judge compares its result against (by Command::judge).
struct Expect {
  std::vector<int> exit_codes;             ///< exit, kill_action: statuses that succeed
  std::string stdout_matches;              ///< matches: a regex some stdout line must match
  std::optional<std::string> state;        ///< service: "started" or "stopped"
  std::optional<bool> enabled;             ///< service: is-enabled
  std::optional<std::string> file_sha256;  ///< service: the installed unit file's sha256 (hex)
  /// write: the file's content sha256 (hex), mode (as stat prints it), owner, group ("" = any).
  struct File {
    std::string sha256, mode, owner, group;
    bool operator==(const File&) const = default;
  };
  std::optional<File> file;
  /// copy: one entry's state on the host ("file", "dir" or "link"; sha256 of a
  /// file's bytes, or of a link's target and a newline; mode as stat prints
  /// it; owner, group: "" = any).
  struct Entry {
    std::string path;  ///< for reasons: the entry on the host
    std::string type, sha256, mode, owner, group;
    bool operator==(const Entry&) const = default;
  };
  std::optional<Entry> entry;
  /// gpus (verify gpus_idle): the GPUs selected ({"all"} or indexes / UUIDs), the
  /// memory a GPU may show used (MiB), and the filters that left processes out.
  struct Gpus {
    std::vector<std::string> gpus{"all"};
    long long max_memory_used_mib = 0;
    std::vector<std::string> user, exclude;
    bool operator==(const Gpus&) const = default;
  };
  std::optional<Gpus> gpus;
  bool operator==(const Expect&) const = default;
};

/// A local file sent on a command's stdin (copy's uploads), streamed as it is
/// read, with the size and sha256 it had when the plan was made.
struct LocalInput {
  std::string path;  ///< absolute
  unsigned long long size = 0;
  std::string sha256;
  bool operator==(const LocalInput&) const = default;
};

/// One remote command a step wants run.
struct Command {
  Role role = Role::check;  ///< the transcript's and the plan's `role`
  std::string text;         ///< as the playbook asked, rendered: what plan prints
  std::string stdin_data;   ///< sent on stdin, never in the command line
  std::optional<LocalInput> stdin_file;  ///< streamed after stdin_data (copy)
  bool stdin_secret = false;     ///< stdin holds a secret: never recorded
  bool stdin_from_action = false;  ///< kill check: stdin = the action's selection
  util::Millis timeout{60'000};  ///< host-side deadline for this command
  Judge judge = Judge::exit0;  ///< how to read the result
  Expect expect;            ///< what the judge compares against
};

/// What one check command found.
struct Verdict {
  bool holds = false;
  /// The check could not look (it never ran, did not finish, or the host could
  /// not see everything it needed): neither holds nor fails, and no action or
  /// rung may follow. `reason` then begins "could not check: ".
  bool unknown = false;
  std::string reason;    ///< why not (one line), or a note ("unit not found: stopped")
  std::vector<Holder> holders;  ///< processes found (holders, live kill targets)
  /// kill action: survivors of KILL in state D; no rung or retry can end them
  std::vector<Unkillable> unkillable;
  /// kill action: survivors in tracing stop (state t), with their tracer; a
  /// stronger signal (KILL) still ends them
  std::vector<Traced> traced;
  /// kill action: survivors in a frozen cgroup (any state but an unkillable D),
  /// with the command that thaws it
  std::vector<Frozen> frozen;
  util::Value gpus = util::Value::array();  ///< verify gpus_idle: the per-GPU evidence (steps/gpus.h)
};

/// One rung: 0 is the step's own check and action, k the k-th escalation.
struct Rung {
  playbook::Kind kind = playbook::Kind::run;  ///< the builder that made it
  std::vector<Command> check;      ///< rung 0 only; all must hold
  std::optional<Command> action;   ///< none for verify
  /// copy: more actions, run after `action` in order while each succeeds
  /// (one per entry of the tree: `action` is the first).
  std::vector<Command> more_actions;
  util::Millis settle{0};
  int retries = 0;
  util::Millis delay{1'000};
  bool always_act = false;         ///< service restarted/reloaded: skip the first check
  /// kind reboot only: check[0] reads the boot id, `action` starts the
  /// reboot; once the host answers again, after[0] waits for boot to settle and
  /// prints the new boot id, after[1] (optional) is the test_command.
  std::vector<Command> after;
  util::Millis reboot_timeout{0};  ///< reboot only: bound on going down and coming back
  util::Millis wait{0};            ///< kill only: how long the action polls its targets
  unsigned long long max_size = 0; ///< fetch only: the most bytes fetched of one file
};

/// A step ready to run on one host: rung 0 and its escalation rungs.
struct PreparedStep {
  std::vector<Rung> rungs;
  /// run without check/creates/unless: the action's exit status is the result.
  bool action_is_result = false;
  std::vector<int> expect_exit{0};
};

/// Most bytes of one line of command output that a reason quotes.
inline constexpr size_t kReasonLine = 200;

/// `line` cut to kReasonLine bytes at a UTF-8 character boundary, with "..."
/// appended when cut; unchanged when shorter.
std::string short_line(const std::string& line);

/// Judges a check command's result.
Verdict judge_check(const Command& c, const transport::ExecResult& r);

/// Whether an action succeeded on its own terms (exit status in `expect_exit`,
/// or 0). Kill actions also return their selection as holders.
Verdict judge_action(const Command& c, const transport::ExecResult& r,
                     const std::vector<int>& expect_exit);

}  // namespace ratchet::steps
