// kind = "kill": signal the processes one selector picks (pid, pid_file,
// pattern, holders_of), with `tree` their descendants too, then poll them for
// up to `wait`. Check: every process selected at action time is dead (same PID
// and start time), and the selector (with `tree`, and the tree) selects nothing alive now.
#include <fmt/format.h>

#include <stdexcept>

#include "steps/kinds.h"
#include "util/shell.h"

namespace ratchet::steps {

void build_kill(const playbook::KillAction& a, const BuildContext& ctx, Rung* out) {
  std::string args;
  if (a.pid.given) args = "pid " + std::to_string(*a.pid);
  else if (a.pid_file.given) args = "pid_file " + util::shell_quote(*a.pid_file);
  else if (a.pattern.given) args = "pattern " + util::shell_quote(*a.pattern);
  else if (a.holders_of.given) args = "holders_of " + util::shell_join(*a.holders_of);
  else throw std::logic_error("kill: no selector (the loader requires one)");
  const std::string sig = a.signal.given ? (*a.signal).name : "TERM";
  const util::Millis wait = a.wait.or_else(util::Millis(5'000));
  const std::string flags = filter_flags(a.user, a.exclude, a.missing_ok);

  Command act = action_command(fmt::format("ratchet_kill --signal {} --wait-ms {}{}{} {}", sig, wait.count(),
                                           a.tree.or_else(false) ? " --tree" : "", flags, args),
                               ctx.timeout + wait);  // the action polls its targets for up to `wait`
  act.judge = Judge::kill_action;
  out->action = act;
  out->wait = wait;

  // With `tree`, the check selects as the action does (descendants, a leader's
  // session): a probe lists every process a run would signal.
  Command check = check_command(
      fmt::format("ratchet_kill_check{}{} {}", a.tree.or_else(false) ? " --tree" : "", flags, args), ctx.timeout,
      Judge::kill);
  check.stdin_from_action = true;
  out->check.push_back(check);
}

}  // namespace ratchet::steps
