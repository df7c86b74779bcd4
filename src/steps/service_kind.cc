// kind = "service": systemctl start/stop/restart/reload/enable/disable, with an
// optional unit file installed first (then daemon-reload), and a daemon-reload
// first whenever the unit's file changed on disk since systemd loaded it
// (ratchet_service). Check: is-active / is-enabled (systemctl(1)), that the
// loaded definition is the current one (NeedDaemonReload=no), and the
// installed unit file's sha256; a transitional state is polled for at most
// `transition_wait` (default 30 s).
#include <fmt/format.h>

#include <map>

#include "steps/kinds.h"
#include "util/hash.h"
#include "util/shell.h"

namespace ratchet::steps {

/// Where an installed unit file goes (systemd.unit(5): the admin's directory).
static std::string unit_dest(const std::string& unit_file) {
  auto slash = unit_file.rfind('/');
  return "/etc/systemd/system/" + (slash == std::string::npos ? unit_file : unit_file.substr(slash + 1));
}

bool build_service(const Json& f, const BuildContext& ctx, Rung* out, std::string* err) {
  std::string unit, state, unit_file;
  bool has_enabled = f.contains("enabled"), enabled = false;
  util::Millis transition_wait{30'000};
  if (!field_string(f, "unit", &unit, err) || !field_string(f, "state", &state, err) ||
      !field_string(f, "unit_file", &unit_file, err) || !field_bool(f, "enabled", &enabled, err) ||
      !field_duration(f, "transition_wait", &transition_wait, err))
    return false;
  if (unit.empty()) {
    *err = "service: `unit` is required";
    return false;
  }
  if (!state.empty() && state != "started" && state != "stopped" && state != "restarted" &&
      state != "reloaded") {
    *err = fmt::format("service: `state` must be started, stopped, restarted or reloaded, got \"{}\"", state);
    return false;
  }
  if (state.empty() && !has_enabled && unit_file.empty()) {
    *err = "service: give at least one of `state`, `enabled`, `unit_file`";
    return false;
  }
  std::string u = util::shell_quote(unit);
  std::vector<std::string> parts;
  Json expect = Json::object();
  std::string dest;
  if (!unit_file.empty()) {
    dest = unit_dest(unit_file);
    parts.push_back(fmt::format("ratchet_write {} 0644 root root 0 && systemctl daemon-reload",
                                util::shell_quote(dest)));
    expect["file_sha256"] = util::sha256_hex(ctx.unit_file_content);
  }
  if (has_enabled) {
    parts.push_back(fmt::format("ratchet_service {} {}", enabled ? "enable" : "disable", u));
    expect["enabled"] = enabled;
  }
  if (!state.empty()) {
    static const std::map<std::string, std::string> verb = {
        {"started", "start"}, {"stopped", "stop"}, {"restarted", "restart"}, {"reloaded", "reload"}};
    parts.push_back(fmt::format("ratchet_service {} {}", verb.at(state), u));
    expect["state"] = (state == "stopped") ? "stopped" : "started";
    out->always_act = (state == "restarted" || state == "reloaded");
  }
  out->check.push_back(check_command(fmt::format("ratchet_service_state {} {} {}", u, util::shell_quote(dest),
                                                 transition_wait.count()),
                                     ctx.timeout + transition_wait, Judge::service, expect));
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? " && " : "") + parts[i];
  out->action = action_command(text, ctx.timeout, unit_file.empty() ? "" : ctx.unit_file_content);
  return true;
}

}  // namespace ratchet::steps
