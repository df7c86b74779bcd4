// kind = "verify": a check and no action; every condition is one check command
// and all must hold. Escalation rungs (kill, run, service) are optional.
#include <fmt/format.h>

#include "steps/gpus.h"
#include "steps/kinds.h"
#include "util/shell.h"

namespace ratchet::steps {

std::string filter_flags(const Json& f, std::string* err, bool* ok);  // kill_kind.cc

static Command check_cmd(std::string text, const BuildContext& ctx, Judge judge,
                         Json expect = nullptr) {
  return check_command(std::move(text), ctx.timeout, judge, std::move(expect));
}

bool build_verify(const Json& f, const BuildContext& ctx, Rung* out, std::string* err) {
  if (f.contains("no_holders")) {
    std::vector<std::string> paths;
    bool ok = true;
    if (!field_strings(f, "no_holders", &paths, err)) return false;
    std::string flags = filter_flags(f, err, &ok);
    if (!ok) return false;
    if (paths.empty()) {
      *err = "verify: `no_holders` names no path";
      return false;
    }
    out->check.push_back(
        check_cmd(fmt::format("ratchet_no_holders{} -- {}", flags, util::shell_join(paths)), ctx,
                  Judge::holders));
  }
  if (f.contains("gpus_idle")) {
    Command c;
    if (!build_gpus_idle(f, ctx, &c, err)) return false;
    out->check.push_back(std::move(c));
  }
  std::vector<std::string> absent;
  if (!field_strings(f, "absent", &absent, err)) return false;
  for (const auto& re : absent) {
    if (!check_regex("absent", re, err)) return false;
    out->check.push_back(check_cmd("ratchet_absent " + util::shell_quote(re), ctx, Judge::absent));
  }
  for (const char* k : {"port_free", "port_open"}) {
    std::vector<std::string> ports;
    if (!field_strings(f, k, &ports, err)) return false;
    for (const auto& p : ports) {
      long long port = 0;
      if (!field_int(Json{{k, p}}, k, &port, err)) return false;
      if (port < 1 || port > 65535) {
        *err = fmt::format("verify: `{}` must be a port 1..65535, got {}", k, port);
        return false;
      }
      out->check.push_back(check_cmd(fmt::format("ratchet_{} {}", k, port), ctx, Judge::exit0));
    }
  }
  std::vector<std::string> units, files;
  if (!field_strings(f, "service_active", &units, err) || !field_strings(f, "file_exists", &files, err))
    return false;
  for (const auto& u : units)
    out->check.push_back(check_cmd("systemctl is-active --quiet -- " + util::shell_quote(u), ctx, Judge::exit0));
  for (const auto& p : files) out->check.push_back(check_cmd("test -e " + util::shell_quote(p), ctx, Judge::exit0));
  if (f.contains("command")) {
    std::string cmd, re;
    if (!field_string(f, "command", &cmd, err) || !field_string(f, "stdout_matches", &re, err)) return false;
    if (!re.empty() && !check_regex("stdout_matches", re, err)) return false;
    out->check.push_back(re.empty() ? check_cmd(cmd, ctx, Judge::exit0)
                                    : check_cmd(cmd, ctx, Judge::matches, re));
  } else if (f.contains("stdout_matches")) {
    *err = "verify: `stdout_matches` needs `command`";
    return false;
  }
  if (out->check.empty()) {
    *err = "verify: give at least one condition (no_holders, gpus_idle, absent, port_free, port_open, "
           "service_active, file_exists, command)";
    return false;
  }
  return true;
}

}  // namespace ratchet::steps
