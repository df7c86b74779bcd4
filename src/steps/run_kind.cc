// kind = "run": `sh -c COMMAND`; check by `check`/`unless` (exit 0) or `creates`
// (path exists); without one, the action's exit status is the result.
#include <fmt/format.h>

#include "steps/kinds.h"
#include "util/shell.h"

namespace ratchet::steps {

void build_run(const playbook::RunAction& a, const BuildContext& ctx, Rung* out) {
  out->action = action_command(*a.command, ctx.timeout, a.stdin_data.or_else(""));
  out->action->expect.exit_codes = a.expect_exit.or_else({0});

  std::string check_text = a.check.given ? *a.check : a.unless.or_else("");
  if (check_text.empty())
    for (const auto& p : a.creates.or_else({}))
      check_text += (check_text.empty() ? "" : " && ") + ("test -e " + util::shell_quote(p));
  if (!check_text.empty()) out->check.push_back(check_command(check_text, ctx.timeout, Judge::exit0));
}

}  // namespace ratchet::steps
