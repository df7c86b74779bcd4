// kind = "kill": signal the processes one selector picks (pid, pid_file,
// pattern, holders_of), then poll them for up to `wait`. Check: every process
// selected at action time is dead (same PID and start time), and the selector
// selects nothing alive now.
#include <fmt/format.h>

#include "steps/kinds.h"
#include "util/shell.h"

namespace ratchet::steps {

/// Filter options shared by kill and verify's no_holders, as library flags.
std::string filter_flags(const Json& f, std::string* err, bool* ok) {
  std::vector<std::string> users, exclude;
  bool missing_ok = false;
  *ok = field_strings(f, "user", &users, err) && field_strings(f, "exclude", &exclude, err) &&
        field_bool(f, "missing_ok", &missing_ok, err);
  std::string flags;
  auto joined = [&](const char* key, const std::vector<std::string>& names) {
    std::string out;
    for (const auto& e : names) {
      if (e.find(',') != std::string::npos) {
        *err = fmt::format("`{}`: name \"{}\" contains a comma", key, e);
        *ok = false;
      }
      out += (out.empty() ? "" : ",") + e;
    }
    return util::shell_quote(out);
  };
  if (!users.empty()) flags += " --user " + joined("user", users);
  if (!exclude.empty()) flags += " --exclude " + joined("exclude", exclude);
  if (missing_ok) flags += " --missing-ok";
  return flags;
}

bool build_kill(const Json& f, const BuildContext& ctx, Rung* out, std::string* err) {
  std::vector<std::string> selectors;
  for (const char* k : {"pid", "pid_file", "pattern", "holders_of"})
    if (f.contains(k)) selectors.push_back(k);
  if (selectors.size() != 1) {
    *err = selectors.empty()
               ? "kill: give one selector: `pid`, `pid_file`, `pattern` or `holders_of`"
               : fmt::format("kill: give one selector, not `{}` and `{}`", selectors[0], selectors[1]);
    return false;
  }
  const std::string& sel = selectors[0];
  std::string args;
  if (sel == "pid") {
    long long pid = 0;
    if (!field_int(f, "pid", &pid, err)) return false;
    if (pid <= 1) {
      *err = fmt::format("kill: `pid` must be a process ID above 1, got {}", pid);
      return false;
    }
    args = "pid " + std::to_string(pid);
  } else if (sel == "holders_of") {
    std::vector<std::string> paths;
    if (!field_strings(f, "holders_of", &paths, err)) return false;
    if (paths.empty()) {
      *err = "kill: `holders_of` names no path";
      return false;
    }
    args = "holders_of " + util::shell_join(paths);
  } else {
    std::string v;
    if (!field_string(f, sel.c_str(), &v, err)) return false;
    if (v.empty()) {
      *err = fmt::format("kill: `{}` is empty", sel);
      return false;
    }
    if (sel == "pattern" && !check_regex("pattern", v, err)) return false;
    args = sel + " " + util::shell_quote(v);
  }
  std::string sig = "TERM";
  if (f.contains("signal")) {
    std::string raw;
    if (!field_string(f, "signal", &raw, err)) return false;
    sig = signal_name(raw);
    if (sig.empty()) {
      *err = fmt::format("kill: `signal` must be a signal name such as TERM or KILL, got \"{}\"", raw);
      return false;
    }
  }
  util::Millis wait{5'000};
  bool tree = false, ok = true;
  if (!field_duration(f, "wait", &wait, err) || !field_bool(f, "tree", &tree, err)) return false;
  std::string flags = filter_flags(f, err, &ok);
  if (!ok) return false;

  Command act = action_command(fmt::format("ratchet_kill --signal {} --wait-ms {}{}{} {}", sig, wait.count(),
                         tree ? " --tree" : "", flags, args),
                  ctx.timeout + wait);  // the action polls its targets for up to `wait`
  act.judge = Judge::kill_action;
  out->action = act;

  Command check = check_command(fmt::format("ratchet_kill_check{} {}", flags, args), ctx.timeout, Judge::kill);
  check.stdin_from_action = true;
  out->check.push_back(check);
  return true;
}

}  // namespace ratchet::steps
