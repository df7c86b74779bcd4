#include "cli/run_settings.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/become_password.h"
#include "cli/commands.h"
#include "cli/make_plan.h"
#include "cli/usage.h"

namespace ratchet::cli {

run::Settings settings_of(const Options& o, const std::vector<std::string>& argv) {
  run::Settings s;
  s.argv = argv;
  s.forks = o.forks;
  s.lock = o.lock;
  s.break_lock = o.break_lock;
  s.artifacts = o.artifacts;
  // Every value a --secret name was given with -e, not only the last that won: run_start's argv holds them all.
  for (const auto& kv : o.extra)
    if (auto eq = kv.find('='); eq != std::string::npos &&
                                std::find(o.secret.begin(), o.secret.end(), kv.substr(0, eq)) != o.secret.end())
      s.extra_secrets.push_back(kv.substr(eq + 1));
  s.become_password = [o](std::string* err) { return read_become_password(o, err); };
  s.endpoint = [o](const playbook::Host& h) { return endpoint_for(h, o); };
  return s;
}

bool parse_run_options(const Options& o, const plan::Plan& P, run::Settings* s) {
  const std::string cmd = o.command.empty() ? "run" : o.command;
  std::string err;
  auto reconnect = o.reconnect_timeout == "0" ? std::optional<util::Millis>(util::Millis(0))
                                              : util::parse_duration(o.reconnect_timeout, &err);
  if (!reconnect) {
    usage_error("run", fmt::format("--reconnect-timeout {}: {} (e.g. 30s, 2m, or 0 for never)",
                                   o.reconnect_timeout, err));
    return false;
  }
  auto lock_wait = o.lock_wait == "0" ? std::optional<util::Millis>(util::Millis(0))
                                      : util::parse_duration(o.lock_wait, &err);
  if (!lock_wait) {
    usage_error(cmd, fmt::format("--lock-wait {}: {} (e.g. 5m, or 0 to fail at once)", o.lock_wait, err));
    return false;
  }
  if ((lock_wait->count() > 0 || o.break_lock) && !o.lock &&
      std::none_of(P.hosts.begin(), P.hosts.end(), [](const plan::HostPlan& hp) { return hp.guards.lock; })) {
    usage_error(cmd, fmt::format("{} needs a lock to act on, and no host takes one: pass --lock too, or set "
                                 "`lock = true` in the playbook or on the hosts",
                                 o.break_lock ? "--break-lock" : "--lock-wait"));
    return false;
  }
  s->reconnect_timeout = *reconnect;
  s->lock_wait = *lock_wait;
  return true;
}

std::string outputs_problem(const Options& o, const plan::Plan& P, const std::string& transcript,
                            const std::string& plan_file) {
  if (std::string hit = clobbered_source(P, transcript, plan_file); !hit.empty())
    return fmt::format("--transcript {} is {}: a transcript goes to a file of its own", transcript, hit);
  if (o.report.empty()) return "";  // checked before anything runs: the report is made from the transcript at the end
  std::string why = report_option_problem(o.report, transcript);
  if (std::string hit = clobbered_source(P, o.report, plan_file); why.empty() && !hit.empty())
    why = fmt::format("--report {} is {}: the report goes to a file of its own", o.report, hit);
  return why;
}

}  // namespace ratchet::cli
