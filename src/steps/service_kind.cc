// kind = "service": systemctl start/stop/restart/reload/enable/disable, with an
// optional unit file installed first (then daemon-reload), and a daemon-reload
// first whenever the unit's file changed on disk since systemd loaded it
// (ratchet_service). Check: is-active / is-enabled (systemctl(1)), that the
// loaded definition is the current one (NeedDaemonReload=no), and the
// installed unit file's sha256; a transitional state is polled for at most
// `transition_wait` (default 30 s). `scope = "user"`: the same against `user`'s
// own manager (the library's `--user NAME`; a unit file goes to
// /etc/systemd/user/, the admin's directory of user units).
#include <fmt/format.h>

#include "steps/kinds.h"
#include "util/hash.h"
#include "util/shell.h"

namespace ratchet::steps {

/// Where an installed unit file goes (systemd.unit(5): the admin's directory,
/// of system units or of user units).
static std::string unit_dest(const std::string& unit_file, bool user) {
  auto slash = unit_file.rfind('/');
  return std::string(user ? "/etc/systemd/user/" : "/etc/systemd/system/") +
         (slash == std::string::npos ? unit_file : unit_file.substr(slash + 1));
}

void build_service(const playbook::ServiceAction& a, const BuildContext& ctx, Rung* out) {
  const util::Millis transition_wait = a.transition_wait.or_else(util::Millis(30'000));
  const bool user = a.scope.or_else(playbook::ServiceScope::system) == playbook::ServiceScope::user;
  // The functions' `--user NAME`: that user's own manager (ratchet_sd_user).
  const std::string scope = user ? " --user " + util::shell_quote(*a.user) : "";
  const std::string u = util::shell_quote(*a.unit);
  std::vector<std::string> parts;
  Expect expect;
  std::string dest;
  if (a.unit_file.given) {
    dest = unit_dest(*a.unit_file, user);
    // restarted/reloaded act without a first check: nothing is written where systemd is not running.
    parts.push_back(fmt::format("ratchet_need_systemd && ratchet_write {} 0644 root root 0 && {}", util::shell_quote(dest),
                                user ? "ratchet_service" + scope + " daemon-reload" : "systemctl daemon-reload"));
    expect.file_sha256 = util::sha256_hex(ctx.unit_file_content);
  }
  if (a.enabled.given) {
    parts.push_back(fmt::format("ratchet_service{} {} {}", scope, *a.enabled ? "enable" : "disable", u));
    expect.enabled = *a.enabled;
  }
  if (a.state.given) {
    using S = playbook::ServiceState;
    const S st = *a.state;
    const char* verb = st == S::started ? "start" : st == S::stopped ? "stop" : st == S::restarted ? "restart" : "reload";
    parts.push_back(fmt::format("ratchet_service{} {} {}", scope, verb, u));
    expect.state = st == S::stopped ? "stopped" : "started";
    out->always_act = st == S::restarted || st == S::reloaded;
  }
  out->check.push_back(check_command(fmt::format("ratchet_service_state{} {} {} {}", scope, u, util::shell_quote(dest),
                                                 transition_wait.count()),
                                     ctx.timeout + transition_wait, Judge::service, expect));
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? " && " : "") + parts[i];
  out->action = action_command(text, ctx.timeout, a.unit_file.given ? ctx.unit_file_content : "");
}

}  // namespace ratchet::steps
