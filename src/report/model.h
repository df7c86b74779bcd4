#pragma once
// One run of a transcript as the report draws it: its header, and per host its
// connection, its steps (each with its commands, output and evidence) and the
// marks (reconnects, reboots) on its timeline. Built from the events alone.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "transcript/reader.h"

namespace ratchet::report {

struct Output {
  std::string stream;     ///< stdout or stderr
  long long bytes = 0;    ///< all the command wrote on it
  std::string data;       ///< what the transcript kept (decoded from data_b64 when that)
  bool binary = false;    ///< kept as data_b64: not UTF-8
  long long dropped = 0;  ///< bytes the capture cap cut from the middle
  bool redacted = false;  ///< nothing kept: the input held a secret
};

struct Command {
  int rung = 0;
  std::string role, command;
  long long t = 0;  ///< sent, ms since the epoch (0 unknown)
  long long timeout_ms = 0;
  bool ended = false;             ///< its exit event is there
  std::optional<long long> code;  ///< exit status (-1: none came)
  std::string signal, error, warning;
  long long ms = 0;
  bool timed_out = false;
  std::vector<Output> outputs;
};

/// A device target a holder holds through another node of the same device
/// number (a container's own /dev/nvidia0): a holder's `nodes` entry.
struct HeldNode {
  std::string target;    ///< the target the step named
  std::string node;      ///< the node the process holds, as it names it
  std::string device;    ///< "MAJOR:MINOR"
  std::string mount_ns;  ///< its mount namespace; "" when the scan's own
  bool deleted = false;  ///< the node has no name left
};

/// A target held through a thread's own descriptor table: a holder's `threads` entry.
struct HeldThread {
  std::string tid, target;
};

/// A process in a holders/signalled list.
struct Holder {
  std::string pid, user, comm, cmdline, started, files;
  std::string state, owner;  ///< owner in words (util::owner_words)
  std::vector<HeldNode> nodes;
  std::vector<HeldThread> threads;
};

struct Evidence {
  int rung = 0;
  std::string role, note;
  std::optional<bool> holds, ok;
  bool could_not_check = false;
  std::vector<Holder> holders, signalled;
  /// Every other field (gpus, boot ids, ...), name and value as compact JSON.
  std::vector<std::pair<std::string, std::string>> other;
};

/// Something on a host's timeline that is no step: a reconnect attempt, a wait for a reboot.
struct Mark {
  enum class Kind { reconnect, reboot_wait, back_after_reboot };
  Kind kind = Kind::reconnect;
  long long t = 0;
  bool ok = false;
  std::string step, text;
};

struct Step {
  std::string id, name, kind;
  std::string status;  ///< step_end's status; "" when the step has no step_end (cut, interrupted)
  int rung = 0;
  long long ms = 0, t_start = 0, t_end = 0;  ///< t_end 0 when it has no step_end
  std::string reason;
  std::vector<Command> commands;
  std::vector<Evidence> evidence;
};

struct Host {
  std::string name;
  bool connected = false;
  std::string address, user, fingerprint, auth_method, via;
  long long port = 0, connect_ms = 0, t_connect = 0;
  std::string unreachable_cause, unreachable_message;
  std::vector<Step> steps;
  std::vector<Mark> marks;
  bool ended = false;  ///< its host_end is there
  std::string status, reason, stopped_at;
  long long ms = 0, t_end = 0;
  std::vector<std::pair<std::string, long long>> counts;  ///< host_end's counts, in name order
};

struct Run {
  std::string run_id, mode, playbook, playbook_path, playbook_sha256, ratchet_version, exec, run_by;
  std::string argv;  ///< the command line, its words joined by blanks
  std::string plan_digest, plan_path, plan_made_by, plan_made_at;
  long long t_start = 0, t_last = 0;  ///< run_start's t, and the latest t of any event
  bool ended = false;                 ///< run_end is there
  std::string status;
  long long exit_code = -1, ms = 0;
  std::vector<Host> hosts;  ///< run_start's targets first, in order; then any other host seen
  size_t events = 0;
  std::vector<std::string> unknown;  ///< event names this ratchet does not know
};

/// Every run of a read transcript, in file order: each run_start begins one
/// (events before any run_start belong to none and are dropped). Tolerates any
/// field of any type: what does not fit is left out, never thrown.
std::vector<Run> build_runs(const transcript::ReadResult& read);

}  // namespace ratchet::report
