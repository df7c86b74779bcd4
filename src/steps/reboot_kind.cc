// kind = "reboot": read the boot id, start the reboot detached (so the command
// returns before sshd goes away), then, once the host answers again, wait for
// boot to settle and read the boot id again; a new id proves the reboot. The
// engine (engine/reboot.cc) does the waiting and reconnecting.
#include <fmt/format.h>

#include "steps/kinds.h"
#include "util/shell.h"

namespace ratchet::steps {

namespace {
constexpr const char* kBootId = "cat /proc/sys/kernel/random/boot_id";
}  // namespace

void build_reboot(const playbook::RebootAction& a, const BuildContext& ctx, Rung* out) {
  const std::string command = a.command.or_else("systemctl reboot");
  const util::Millis wait = a.reboot_timeout.or_else(util::Millis(600'000));
  out->check.push_back(check_command(kBootId, ctx.timeout, Judge::exit0));
  // Detached with nohup and all three streams closed: the channel ends at once
  // and the reboot starts a second later, whatever happens to this session.
  out->action = action_command(
      fmt::format("nohup /bin/sh -c {} >/dev/null 2>&1 </dev/null &", util::shell_quote("sleep 1; " + command)),
      ctx.timeout);
  // is-system-running --wait returns once boot has finished (systemctl(1));
  // on a host without systemd the boot id alone is read.
  out->after.push_back(check_command(
      std::string("if command -v systemctl >/dev/null 2>&1; then systemctl is-system-running "
                  "--wait >/dev/null 2>&1 || :; fi; ") + kBootId,
      wait, Judge::exit0));
  if (a.test_command.given) out->after.push_back(check_command(*a.test_command, ctx.timeout, Judge::exit0));
  out->reboot_timeout = wait;
}

}  // namespace ratchet::steps
