// Respawns: the kill action's clock and parent lines, the check's, and the
// judgement that names who brought a killed holder back (R18).
#include <catch2/catch.hpp>

#include <string>

#include "steps/respawn.h"

using namespace ratchet::steps;

namespace {

std::string line(const std::string& tag, long long pid, long long ticks, const std::string& cmd, const std::string& owner) {
  return tag + "\t" + std::to_string(pid) + "\troot\t" + std::to_string(ticks) + "\t1796000000.00\tpython3\t" + cmd +
         "\tS\t" + owner + "\t/dev/nvidia0\n";
}

const std::string kUnit = "kind=unit name=sglang.service scope=system restart=always";

}  // namespace

TEST_CASE("respawn: a new holder of the same unit and command line, after the signal, is named with the unit",
          "[steps][respawn]") {
  KillRound k = parse_kill_round("clock\t5000\nparent\t4242\t1\tsystemd\n" + line("signalled", 4242, 100, "python3 -m sglang", kUnit));
  REQUIRE(k.signalled.size() == 1);
  CHECK(k.clock_ticks == 5000);
  CHECK(k.parents.at(4242).comm == "systemd");
  CHECK(kill_undone_note(k.signalled[0]) ==
        "PID 4242 belongs to sglang.service (Restart=always): a kill will be undone; stop the unit");

  const std::string out = line("alive", 4300, 5010, "python3 -m sglang", kUnit) + line("alive", 77, 90, "python3 other", "-") +
                          "parent\t4300\t1\tsystemd\nparent\t77\t1\tsystemd\n";
  Verdict v;
  v.holders = parse_process_lines(out, "alive");
  v.reason = "2 selected process(es) still alive";
  explain_respawns(&k, out, &v);
  REQUIRE(k.respawned.size() == 1);
  CHECK(v.reason ==
        "PID 4300 (python3) started after the signal: respawned by PID 1 (systemd) / unit sglang.service "
        "(Restart=always); stop the unit instead; 1 other selected process(es) still alive: PID 77 (python3 other)");
}

TEST_CASE("respawn: not one when it started before the signal, has another command line, or no shared parent or owner",
          "[steps][respawn]") {
  KillRound k = parse_kill_round("clock\t5000\nparent\t10\t9\tsh\n" + line("signalled", 10, 100, "sleep 9", "-"));
  auto none = [&](const std::string& alive, const std::string& parents) {
    return find_respawns(k, parse_process_lines(alive, "alive"), parse_parents(parents)).empty();
  };
  CHECK_FALSE(none(line("alive", 11, 5001, "sleep 9", "-"), "parent\t11\t9\tsh\n"));  // the supervisor's again
  CHECK(none(line("alive", 11, 4999, "sleep 9", "-"), "parent\t11\t9\tsh\n"));        // there before the signal
  CHECK(none(line("alive", 11, 5001, "sleep 10", "-"), "parent\t11\t9\tsh\n"));       // another program
  CHECK(none(line("alive", 11, 5001, "sleep 9", "-"), "parent\t11\t8\tsh\n"));        // another parent, no owner
  CHECK(none(line("alive", 10, 100, "sleep 9", "-"), "parent\t10\t9\tsh\n"));         // the one signalled, alive
  auto r = find_respawns(k, parse_process_lines(line("alive", 11, 5001, "sleep 9", "-"), "alive"),
                         parse_parents("parent\t11\t9\tsh\n"));
  REQUIRE(r.size() == 1);
  CHECK(respawn_text(r[0]) ==
        "PID 11 (python3) started after the signal: respawned by PID 9 (sh); stop its supervisor PID 9 (sh) instead");
}

TEST_CASE("respawn: an unknown owner is neither respawned nor not respawned, and a kill of it says so",
          "[steps][respawn]") {
  const std::string unknown = "kind=unknown name=/proc/4242/cgroup";
  KillRound k = parse_kill_round("clock\t5000\nparent\t4242\t7\tsh\n" + line("signalled", 4242, 100, "python3 -m sglang", unknown));
  REQUIRE(k.signalled.size() == 1);
  CHECK(kill_undone_note(k.signalled[0]) ==
        "PID 4242: could not tell the owner: /proc/4242/cgroup unreadable: whether a supervisor will undo the kill "
        "cannot be told");
  // A new holder with its command line and another parent: not dropped as "not respawned".
  const std::string out = line("alive", 4300, 5010, "python3 -m sglang", "kind=unknown name=/proc/4300/cgroup") +
                          "parent\t4300\t1\tsystemd\n";
  Verdict v;
  v.holders = parse_process_lines(out, "alive");
  v.reason = "1 selected process(es) still alive";
  explain_respawns(&k, out, &v);
  REQUIRE(k.respawned.size() == 1);
  CHECK_FALSE(k.respawned[0].by_owner);
  CHECK(k.respawned[0].owner_unknown);
  CHECK(v.reason ==
        "PID 4300 (python3) started after the signal with a signalled holder's command line: whether its owner started "
        "it again cannot be told (could not tell the owner: /proc/4300/cgroup unreadable)");
  // Two unknown owners are never "the same owner".
  KillRound k2 = parse_kill_round("clock\t5000\n" + line("signalled", 10, 100, "sleep 9", "kind=unknown name=/x"));
  auto r = find_respawns(k2, parse_process_lines(line("alive", 11, 5001, "sleep 9", "kind=unknown name=/x"), "alive"), {});
  REQUIRE(r.size() == 1);
  CHECK_FALSE(r[0].by_owner);
  // A known owner beside it: only the unknown side makes it "cannot be told".
  KillRound k3 = parse_kill_round("clock\t5000\n" + line("signalled", 10, 100, "sleep 9", kUnit));
  r = find_respawns(k3, parse_process_lines(line("alive", 11, 5001, "sleep 9", "kind=unknown name=/proc/11/cgroup"), "alive"), {});
  REQUIRE(r.size() == 1);
  CHECK(respawn_text(r[0]).find("cannot be told (could not tell the owner: /proc/11/cgroup unreadable)") !=
        std::string::npos);
  CHECK(kill_undone_note(parse_process_lines(line("signalled", 12, 100, "x", "-"), "signalled")[0]).empty());
}

TEST_CASE("respawn: a container whose restart policy its runtime's files do not say may undo a kill",
          "[steps][respawn]") {
  auto h = parse_process_lines(line("signalled", 12, 100, "x", "kind=container name=web scope=podman id=abc"), "signalled");
  REQUIRE(h.size() == 1);
  CHECK(kill_undone_note(h[0]) ==
        "PID 12 belongs to container web (podman abc), whether something restarts it cannot be told: a kill may be "
        "undone; stop the container");
}
