// kind = "verify": a check and no action; every condition is one check command
// and all must hold. Escalation rungs (kill, run, service) are optional.
#include <fmt/format.h>

#include "steps/gpus.h"
#include "steps/kinds.h"
#include "util/shell.h"

namespace ratchet::steps {

void build_verify(const playbook::VerifyAction& a, const BuildContext& ctx, Rung* out) {
  auto check = [&](std::string text, Judge judge, Expect expect = {}) {
    out->check.push_back(check_command(std::move(text), ctx.timeout, judge, std::move(expect)));
  };
  if (a.no_holders.given)
    check(fmt::format("ratchet_no_holders{} -- {}", filter_flags(a.user, a.exclude, a.missing_ok),
                      util::shell_join(*a.no_holders)),
          Judge::holders);
  if (a.gpus_idle.given) out->check.push_back(build_gpus_idle(a, ctx));
  for (const auto& re : a.absent.or_else({})) check("ratchet_absent " + util::shell_quote(re), Judge::absent);
  for (int port : a.port_free.or_else({})) check(fmt::format("ratchet_port_free {}", port), Judge::exit0);
  for (int port : a.port_open.or_else({})) check(fmt::format("ratchet_port_open {}", port), Judge::exit0);
  for (const auto& u : a.service_active.or_else({}))
    check("ratchet_service_active " + util::shell_quote(u), Judge::exit0);
  for (const auto& p : a.file_exists.or_else({})) check("test -e " + util::shell_quote(p), Judge::exit0);
  if (a.command.given) {
    if (a.stdout_matches.given) {
      Expect e;
      e.stdout_matches = *a.stdout_matches;
      check(*a.command, Judge::matches, e);
    } else {
      check(*a.command, Judge::exit0);
    }
  }
  if (out->check.empty()) throw std::logic_error("verify: no condition (the loader requires one)");
}

}  // namespace ratchet::steps
