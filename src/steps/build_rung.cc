// The commands every builder makes, and the dispatch on the action's kind.
#include <fmt/format.h>

#include <stdexcept>

#include "steps/kinds.h"
#include "util/shell.h"

namespace ratchet::steps {

Command check_command(std::string text, util::Millis timeout, Judge judge, Expect expect) {
  Command c;
  c.role = Role::check;
  c.text = std::move(text);
  c.timeout = timeout;
  c.judge = judge;
  c.expect = std::move(expect);
  return c;
}

Command action_command(std::string text, util::Millis timeout, std::string input) {
  Command c;
  c.role = Role::action;
  c.text = std::move(text);
  c.stdin_data = std::move(input);
  c.timeout = timeout;
  c.judge = Judge::exit;
  c.expect.exit_codes = {0};
  return c;
}

std::string filter_flags(const playbook::Field<std::vector<std::string>>& user,
                         const playbook::Field<std::vector<std::string>>& exclude,
                         const playbook::Field<bool>& missing_ok) {
  std::string flags;
  // Names hold no comma (key_rules.h: read_names): the library splits on it.
  auto joined = [](const std::vector<std::string>& names) { return util::shell_quote(fmt::format("{}", fmt::join(names, ","))); };
  if (user.given && !(*user).empty()) flags += " --user " + joined(*user);
  if (exclude.given && !(*exclude).empty()) flags += " --exclude " + joined(*exclude);
  if (missing_ok.or_else(false)) flags += " --missing-ok";
  return flags;
}

void build_rung(const playbook::ActionKeys& keys, const BuildContext& ctx, Rung* out) {
  struct Visit {
    const BuildContext& ctx;
    Rung* out;
    void operator()(const playbook::RunAction& a) const { out->kind = playbook::Kind::run, build_run(a, ctx, out); }
    void operator()(const playbook::ServiceAction& a) const { out->kind = playbook::Kind::service, build_service(a, ctx, out); }
    void operator()(const playbook::KillAction& a) const { out->kind = playbook::Kind::kill, build_kill(a, ctx, out); }
    void operator()(const playbook::VerifyAction& a) const { out->kind = playbook::Kind::verify, build_verify(a, ctx, out); }
    void operator()(const playbook::WriteAction& a) const { out->kind = playbook::Kind::write, build_write(a, ctx, out); }
    void operator()(const playbook::CopyAction& a) const { out->kind = playbook::Kind::copy, build_copy(a, ctx, out); }
    void operator()(const playbook::FetchAction& a) const { out->kind = playbook::Kind::fetch, build_fetch(a, ctx, out); }
    void operator()(const playbook::RebootAction& a) const { out->kind = playbook::Kind::reboot, build_reboot(a, ctx, out); }
  };
  std::visit(Visit{ctx, out}, keys);
}

}  // namespace ratchet::steps
