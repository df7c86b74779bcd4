// kind = "run": `sh -c COMMAND`; check by `check`/`unless` (exit 0) or `creates`
// (path exists); without one, the action's exit status is the result.
#include <fmt/format.h>

#include "steps/kinds.h"
#include "util/shell.h"

namespace ratchet::steps {

bool build_run(const Json& f, const BuildContext& ctx, Rung* out, std::string* err) {
  std::string command, check, unless, input;
  std::vector<std::string> creates;
  if (!field_string(f, "command", &command, err) || !field_string(f, "check", &check, err) ||
      !field_string(f, "unless", &unless, err) || !field_strings(f, "creates", &creates, err) ||
      !field_string(f, "stdin", &input, err))
    return false;
  if (command.empty()) {
    *err = "run: `command` is required";
    return false;
  }
  Json expect = Json::array({0});
  if (f.contains("expect_exit")) {
    const Json& e = f["expect_exit"];
    if (!e.is_array() || e.empty()) {
      *err = "run: `expect_exit` must be an array of exit codes such as [0, 1]";
      return false;
    }
    for (const auto& x : e) {
      if (!x.is_number_integer()) {
        *err = fmt::format("run: `expect_exit` holds {}, not an exit code", x.dump());
        return false;
      }
    }
    expect = e;
  }
  out->action = action_command(command, ctx.timeout, input);
  out->action->expect = expect;

  std::string check_text = !check.empty() ? check : unless;
  if (check_text.empty())
    for (const auto& p : creates) check_text += (check_text.empty() ? "" : " && ") + ("test -e " + util::shell_quote(p));
  if (!check_text.empty()) out->check.push_back(check_command(check_text, ctx.timeout, Judge::exit0));
  return true;
}

}  // namespace ratchet::steps
