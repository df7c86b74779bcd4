// Wire strings. The deadline wrapper, in words (sshd runs the login shell as a
// session and process-group leader, and `exec` keeps that PID all the way down):
//  - The wrapper double-forks a watchdog, so the watchdog is no child of the
//    command (a command's wait(2) never sees it), then execs `/bin/sh -c
//    COMMAND`: sshd reports the command's own exit status or exit signal (no
//    128+N translation). The wrapper itself runs no external program.
//  - The watchdog moves its stdin/stdout/stderr to /dev/null at once (it never
//    holds the channel open), keeping copies on fds 8 and 9 just long enough for
//    one readlink(1) that names the channel's stdout/stderr ("pipe:[123]").
//  - It polls every 0.2 s (clock: /proc/uptime, else tick counting):
//    * command still running at the deadline: TERM the whole process group,
//      1 s later KILL it (the watchdog ignores TERM and dies by that KILL);
//    * command gone and no group member holds the channel's stdout/stderr:
//      exit at once;
//    * command gone but group members still hold them (`sleep 30 & echo hi`):
//      at the deadline TERM those holders, 1 s later KILL the ones left.
//  Processes that left the group (setsid) or the channel (redirected) are left
//  alone once the command has ended. Needs Linux /proc; holders need pgrep(1)
//  (without it a held channel is bounded by the client deadline only).
#include "transport/wire.h"

#include <fmt/format.h>

#include "util/shell.h"

namespace ratchet::transport {

namespace {

// One line with no single quote, backslash or newline: it travels single-quoted
// through any login shell (csh rejects a newline inside quotes). $1 = command,
// $2 = deadline in ms; m = the command's PID, g = its process group, r = the
// channel's link targets, T/D = now/deadline in centiseconds, h = holders.
constexpr std::string_view kDeadlineScript =
    "( ( exec 8>&1 9>&2 </dev/null >/dev/null 2>&1; "
    "set -f; trap \"\" TERM HUP INT PIPE; m=$$ g=$$ r= T=0; "
    "for l in $(readlink /proc/self/fd/8 /proc/self/fd/9); do"
    " case $l in pipe:*|socket:*) r=\"$r $l \";; esac; done; "
    "exec 8>&- 9>&-; "
    "read -r _ _ _ _ g _ </proc/self/stat; "
    "now() { if read -r u _ </proc/uptime; then T=$((${u%.*}*100+1${u#*.}-100));"
    " else T=$((T+20)); fi; }; "
    "scan() { h=; [ -n \"$r\" ] || return; for p in $(pgrep -g $g); do"
    " for l in $(readlink /proc/$p/fd/1 /proc/$p/fd/2); do"
    " case $r in *\" $l \"*) h=\"$h $p\";; esac; done; done; }; "
    "now; D=$((T+($2+9)/10)); "
    "while sleep 0.2 || sleep 1; do now; "
    "if kill -0 $m; then [ $T -lt $D ] && continue; "
    "kill -TERM -$g; sleep 1; kill -KILL -$g; exit; fi; "
    "scan; [ -n \"$h\" ] || exit 0; [ $T -lt $D ] && continue; "
    "kill -TERM $h; sleep 1; scan; [ -z \"$h\" ] || kill -KILL $h; exit; "
    "done ) & ); "
    "exec /bin/sh -c \"$1\"";

}  // namespace

util::Millis client_deadline(util::Millis timeout) { return timeout + kClientGrace; }

std::string_view deadline_script() { return kDeadlineScript; }

std::string wire_command(const std::string& command, util::Millis timeout, const Become& b) {
  std::string prefix = "exec ";
  if (b.enabled) {
    prefix += b.password ? "sudo -k -S -p '' -H " : "sudo -n -H ";
    if (!b.user.empty()) prefix += "-u " + util::shell_quote(b.user) + " ";
    prefix += "-- ";
  }
  if (timeout.count() <= 0) return prefix + "/bin/sh -c " + util::shell_quote(command);
  return fmt::format("{}/bin/sh -c {} ratchet {} {}", prefix, util::shell_quote(kDeadlineScript),
                     util::shell_quote(command), timeout.count());
}

}  // namespace ratchet::transport
