#pragma once
// How a command's result is read (steps/judge.cc): the plan's `judge`.
#include <array>
#include <optional>
#include <string_view>

namespace ratchet::steps {

/// The reading judge_check / judge_action give a command's result.
enum class Judge {
  exit0,        ///< check: holds on exit status 0
  exit,         ///< action: succeeds on an exit status in `expect` (else the step's expect_exit)
  holders,      ///< verify no_holders: exit 0 = nobody holds the files; "holder" lines
  absent,       ///< verify absent: exit 0 = no process matches; "process" lines
  matches,      ///< verify command + stdout_matches: a line of stdout matches `expect`
  service,      ///< service state (ratchet_service_state) against `expect`
  write,        ///< file state (ratchet_stat) against `expect`
  kill,         ///< kill check: no selected process alive; "alive" lines
  kill_action,  ///< kill action: exit 0; the processes signalled ("signalled" lines)
  gpus,         ///< verify gpus_idle: per-GPU evidence judged by steps/gpus.cc
  copy,         ///< copy: one entry's state (ratchet_copy_stat) against `expect` (steps/copy.cc)
};

/// Every judge.
inline constexpr std::array<Judge, 11> kJudges = {Judge::exit0,   Judge::exit,    Judge::holders,
                                                  Judge::absent,  Judge::matches, Judge::service,
                                                  Judge::write,   Judge::kill,    Judge::kill_action,
                                                  Judge::gpus,    Judge::copy};

/// The judge as the plan writes it: "exit0", "exit", "holders", "absent",
/// "matches", "service", "write", "kill", "kill_action", "gpus", "copy".
std::string_view name(Judge j);

/// The judge `s` names exactly (as name() writes it), or nullopt.
std::optional<Judge> parse_judge(std::string_view s);

}  // namespace ratchet::steps
