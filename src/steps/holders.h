#pragma once
// Process lines printed by the host library, read into typed holders.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "steps/owner.h"
#include "util/value.h"

namespace ratchet::steps {

/// A device target held through a node that is not the target itself (a
/// container's own /dev/nvidia0): the host library's `node` line.
struct HeldNode {
  std::string target;    ///< the target it holds (a path the step named, decoded)
  std::string node;      ///< the node the process holds, as the process names it (decoded)
  std::string mount_ns;  ///< its mount namespace (inode number); "" when the scan's own, "?" unreadable
  std::string device;    ///< "MAJOR:MINOR", decimal: the number both nodes share
  bool deleted = false;  ///< the node has no name left (unlinked while held: the kernel's "(deleted)")
  bool operator==(const HeldNode&) const = default;
};

/// A target held through a thread's own descriptor table (a thread that called
/// unshare(CLONE_FILES)): the host library's `task` line.
struct HeldThread {
  long long tid = 0;
  std::string target;  ///< the target it holds (decoded)
  bool operator==(const HeldThread&) const = default;
};

/// One process the host library printed: a holder of a file, a process a
/// pattern matched, or one a kill signalled.
struct Holder {
  long long pid = 0;
  std::string user;
  long long start_ticks = 0;  ///< /proc/PID/stat field 22: with pid, names the process
  std::string started;        ///< RFC 3339 UTC; "" = not known
  std::string comm;
  std::string cmdline;
  std::string state;           ///< /proc/PID/stat state letter, "D:WCHAN" for D; "" = not known
  std::optional<Owner> owner;  ///< its unit, container, pod or session (kind "none"); nullopt = not read
  std::vector<std::string> files;  ///< the files it holds (decoded)
  std::vector<HeldNode> nodes;     ///< device targets it holds through another node
  std::vector<HeldThread> threads;  ///< targets it holds through a thread's own descriptor table
  bool operator==(const Holder&) const = default;
};

/// A frozen cgroup a process is in (the host library's `frozen` line): its
/// tasks do not run, so a pending KILL waits until the cgroup is thawed.
struct FrozenCgroup {
  enum class Version { v1, v2 };
  Version version = Version::v2;  ///< v2: cgroup.freeze is 1; v1: the freezer froze it (freezer.self_freezing)
  std::string dir;                ///< the cgroup's directory under /sys/fs/cgroup (decoded)
  bool operator==(const FrozenCgroup&) const = default;
};

/// "v1" or "v2".
std::string_view name(FrozenCgroup::Version v);

/// The shell command that thaws `c`: "echo 0 > DIR/cgroup.freeze" (v2),
/// "echo THAWED > DIR/freezer.state" (v1); the file shell-quoted when it needs it.
std::string thaw_command(const FrozenCgroup& c);

/// True for a wchan that is the freezer's wait (__refrigerator, do_freezer_trap,
/// freezer...): the process is frozen, not stuck in a driver.
bool freezer_wchan(std::string_view wchan);

/// A survivor of KILL in uninterruptible sleep (the host library's
/// `unkillable` line): KILL stays pending until the kernel releases it.
struct Unkillable {
  long long pid = 0;
  std::string comm;   ///< from the survivor's process line; "" when none was printed
  std::string state;  ///< "D"
  std::string wchan;  ///< /proc/PID/wchan: where it waits ("?" unreadable)
  std::vector<FrozenCgroup> frozen;  ///< the frozen cgroups it is in (`frozen` lines), nearest first
  bool operator==(const Unkillable&) const = default;
};

/// A survivor of a signal in a frozen cgroup, in a state other than an
/// unkillable D (a cgroup v2 freeze leaves its tasks in S): its tasks do not
/// run, so the signal stays pending until the cgroup is thawed (v2: KILL still ends it).
struct Frozen {
  long long pid = 0;
  std::string comm;   ///< from the survivor's process line; "" when none was printed
  std::string state;  ///< its state letter from that line ("" = not known)
  std::vector<FrozenCgroup> cgroups;  ///< the frozen cgroups it is in (`frozen` lines), nearest first
  bool operator==(const Frozen&) const = default;
};

/// A survivor of a kill in tracing stop (state t; the host library's `traced`
/// line): CONT does not resume it, only its tracer (a debugger, strace) can;
/// a signal other than KILL stays pending until it runs again.
struct Traced {
  long long pid = 0;
  std::string comm;         ///< from the survivor's process line; "" when none was printed
  long long tracer_pid = 0;  ///< TracerPid of /proc/PID/status; 0: a tracer outside the scan's PID namespace
  std::string tracer_comm;   ///< "?" when unreadable; "" when the tracer is outside
  bool operator==(const Traced&) const = default;
};

/// "PID 4242 holds /x/nvidia0 of mount namespace 4026532711: same device 195:0 as /dev/nvidia0"
/// (no namespace named when it is the scan's own; "the deleted node /x/nvidia0"
/// when it has no name left; a name with a control byte in quotes, escaped).
std::string node_text(long long pid, const HeldNode& n);

/// "PID 4242 holds /dev/nvidia0 through its thread 4250, which has a descriptor
/// table of its own".
std::string thread_text(long long pid, const HeldThread& t);

/// "PID N (comm) is in state D (uninterruptible, wchan W): KILL is pending until
/// the kernel releases it; a reboot or a driver reset may be needed"; for one in
/// a frozen cgroup (or with a freezer wchan) the thaw command instead of a reboot.
std::string unkillable_text(const Unkillable& u);

/// The `unkillable` lines of a kill's output, each with the comm of its
/// `alive` line and its `frozen` lines ("frozen PID v1|v2 DIR").
std::vector<Unkillable> parse_unkillable(std::string_view text);

/// "PID N (comm) is in state S in the frozen cgroup DIR: it does not run, so the
/// signal is pending until it is thawed: echo 0 > DIR/cgroup.freeze".
std::string frozen_text(const Frozen& f);

/// The survivors of a kill's output with `frozen` lines and no `unkillable`
/// line, each with the comm and state of its `alive` line.
std::vector<Frozen> parse_frozen(std::string_view text);

/// "PID N (comm) is stopped by its tracer PID T (gdb): CONT does not resume it;
/// detach or end the tracer"; tracer_pid 0: "by a tracer outside this PID
/// namespace (TracerPid reads 0 here)".
std::string traced_text(const Traced& t);

/// The `traced` lines of a kill's output ("traced PID TRACER_PID TRACER_COMM";
/// "traced PID 0 -": a tracer outside this PID namespace), each with the comm
/// of its `alive` line; malformed lines are skipped.
std::vector<Traced> parse_traced(std::string_view text);

/// Decodes one %-encoded file field of a process line (%25, %09, %0A: any
/// %XX); a '%' not followed by two hex digits stays as it is.
std::string decode_file(std::string_view field);

/// Parses one tab-separated process line ("pid user ticks epoch comm cmdline
/// state owner file file ...", docs/host-library.md); nullopt when the line
/// does not have that shape.
std::optional<Holder> parse_process_line(std::string_view line);

/// Parses every line of `text` that starts with `tag` + TAB (or every line when
/// tag is ""), skipping malformed ones; one holder per PID, first wins. The
/// `node` lines of `text` ("node PID target node mount_ns MAJ:MIN [deleted]") go to
/// their holder's `nodes`, the `task` lines ("task PID TID target") to its `threads`.
std::vector<Holder> parse_process_lines(std::string_view text, std::string_view tag);

/// A holder as data, as templates (`steps.X.holders`) and the transcript see it:
/// {pid, user, start_ticks, started, comm, cmdline, state, owner, files, nodes, threads};
/// start_ticks and started, state, owner are left out when not known (owner:
/// to_value(Owner)), nodes and threads when empty (each node {target, node,
/// device, mount_ns, deleted}: mount_ns left out when the scan's own, deleted
/// (true) unless deleted; each thread {tid, target}).
util::Value to_value(const Holder& h);
util::Value to_value(const std::vector<Holder>& hs);  ///< an array, one table per holder
/// The inverse of to_value(Holder): nullopt when `v` is not a table of that
/// shape (a member missing or of another type, or one to_value never writes).
std::optional<Holder> holder_from(const util::Value& v);

}  // namespace ratchet::steps
