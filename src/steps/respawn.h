#pragma once
// Holders that a supervisor brings back after a kill (docs/playbook.md, "kill"):
// the kill action's clock and parent lines, the kill check's, and the
// judgement "PID B started after the signal: respawned by ...".
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "steps/action.h"
#include "steps/holders.h"

namespace ratchet::steps {

/// A process's parent, from a "parent<TAB>PID<TAB>PPID<TAB>COMM" line (ratchet_parents).
struct Parent {
  long long ppid = 0;
  std::string comm;  ///< the parent's comm ("" = not readable)
};

/// The parent lines of a library command's output, by PID.
std::map<long long, Parent> parse_parents(std::string_view out);
/// One holder that came back: `now` (a PID the round did not signal, started
/// after it, with a signalled holder's command line) and who brought it back.
struct Respawn {
  Holder now;
  Parent by;           ///< its parent (by.ppid 0: not known)
  bool by_parent = false;  ///< its parent is a signalled holder's parent (the supervisor)
  bool by_owner = false;   ///< it has a signalled holder's owner (kind other than none and unknown)
  bool owner_unknown = false;  ///< its owner or the signalled holder's could not be read: neither said
};

/// What one kill action did: whom it signalled, their parents, and when; and
/// what the check after it found respawned.
struct KillRound {
  std::vector<Holder> signalled;
  std::map<long long, Parent> parents;  ///< by PID
  long long clock_ticks = -1;           ///< clock ticks since boot right before the signals; -1 = not known
  std::vector<Respawn> respawned;       ///< set by explain_respawns
};

/// The alive holders of the check after `round` that are respawns: new PID,
/// started after the signals (or the clock unknown), the command line of a
/// signalled holder, and that holder's parent or owner; or whose owner (or the
/// signalled holder's) is unknown (owner_unknown: "cannot be told").
std::vector<Respawn> find_respawns(const KillRound& round, const std::vector<Holder>& alive,
                                   const std::map<long long, Parent>& parents_now);

/// The kill action's output (ratchet_kill): signalled lines, parents, clock.
KillRound parse_kill_round(std::string_view action_out);

/// "PID B (comm) started after the signal: respawned by PID S (comm) / unit
/// X.service (Restart=always); stop the unit instead"; for an unknown owner
/// alone, "... whether its owner started it again cannot be told (...)".
std::string respawn_text(const Respawn& r);

/// The survivors of a kill, each by PID and command: "2 selected process(es)
/// still alive: PID 70 (sleep 300), PID 71 (sh -c ...)" (`what` "selected" or
/// "other selected"; at most 5 named, then "and N more").
std::string survivors_text(const std::vector<Holder>& alive, std::string_view what = "selected");

/// A failed kill check after `round` (its output `check_out`): when alive
/// holders are respawns, records them in round->respawned and makes v's reason
/// say so (then "N other selected process(es) still alive" for the rest).
void explain_respawns(KillRound* round, std::string_view check_out, Verdict* v);

/// The warning for a holder about to be signalled whose owner brings it back:
/// "PID 4242 belongs to unit sglang.service (Restart=always): a kill will be
/// undone; stop the unit"; for an unknown owner, "PID N: could not tell the
/// owner: ...: whether a supervisor will undo the kill cannot be told"; "" when
/// its owner does not restart it.
std::string kill_undone_note(const Holder& h);

}  // namespace ratchet::steps
