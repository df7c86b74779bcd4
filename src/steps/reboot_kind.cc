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

bool build_reboot(const Json& f, const BuildContext& ctx, Rung* out, std::string* err) {
  std::string command = "systemctl reboot", test;
  util::Millis wait{600'000};
  if (!field_string(f, "command", &command, err) || !field_string(f, "test_command", &test, err) ||
      !field_duration(f, "reboot_timeout", &wait, err))
    return false;
  if (wait < util::Millis(5'000)) {
    *err = "reboot: `reboot_timeout` must be at least 5s (a host needs time to go down and come back)";
    return false;
  }
  if (command.empty()) {
    *err = "reboot: `command` must not be empty";
    return false;
  }
  out->check.push_back(check_command(kBootId, ctx.timeout, Judge::exit0));
  // Detached with nohup and all three streams closed: the channel ends at once
  // and the reboot starts a second later, whatever happens to this session.
  out->action = action_command(
      fmt::format("nohup /bin/sh -c {} >/dev/null 2>&1 </dev/null &",
                  util::shell_quote("sleep 1; " + command)),
      ctx.timeout);
  // is-system-running --wait returns once boot has finished (systemctl(1));
  // on a host without systemd the boot id alone is read.
  out->after.push_back(check_command(
      std::string("if command -v systemctl >/dev/null 2>&1; then systemctl is-system-running "
                  "--wait >/dev/null 2>&1 || :; fi; ") + kBootId,
      wait, Judge::exit0));
  if (!test.empty()) out->after.push_back(check_command(test, ctx.timeout, Judge::exit0));
  out->reboot_timeout = wait;
  return true;
}

}  // namespace ratchet::steps
