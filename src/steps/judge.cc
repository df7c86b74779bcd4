// Reading command results into verdicts, per Command::judge.
#include "steps/judge.h"

#include <fmt/format.h>

#include <algorithm>

#include <regex.h>

#include <stdexcept>
#include <sstream>

#include "steps/action.h"
#include "steps/copy.h"
#include "steps/gpus.h"
#include "steps/holders.h"
#include "steps/respawn.h"

namespace ratchet::steps {

// The one place each judge's name is written.
std::string_view name(Judge j) {
  switch (j) {
    case Judge::exit0: return "exit0";
    case Judge::exit: return "exit";
    case Judge::holders: return "holders";
    case Judge::absent: return "absent";
    case Judge::matches: return "matches";
    case Judge::service: return "service";
    case Judge::write: return "write";
    case Judge::kill: return "kill";
    case Judge::kill_action: return "kill_action";
    case Judge::gpus: return "gpus";
    case Judge::copy: return "copy";
  }
  return "?";  // not reached: every judge is a case above (-Wswitch)
}

std::optional<Judge> parse_judge(std::string_view s) {
  for (Judge j : kJudges)
    if (name(j) == s) return j;
  return std::nullopt;
}

// The first line of s, at most kReasonLine bytes (cut at a character, "..."
// added): a reason is one short line, whatever a command printed.
static std::string first_line(const std::string& s) {
  auto i = s.find('\n');
  std::string l = s.substr(0, i);
  while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.pop_back();
  return short_line(l);
}

static std::string status_text(const transport::ExecResult& r) {
  if (!r.error.empty()) return r.error;
  // The watchdog could not start (sshd's MaxSessions 1, ...): nothing ended it.
  if (r.timed_out && r.watchdog.rfind("watchdog: ", 0) == 0)
    return "timed out, and it may still run on the host (" + r.watchdog + ")";
  if (r.timed_out) return "timed out";
  if (!r.signal.empty()) return "killed by SIG" + r.signal;
  return fmt::format("exit {}", r.exit_code);
}

std::string short_line(const std::string& line) {
  if (line.size() <= kReasonLine) return line;
  size_t cut = kReasonLine;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;  // inside a character
  return line.substr(0, cut) + "...";
}

// The line of a library command's stderr that says why it could not look
// ("ratchet: could not check: ..."), else its first line; "ratchet: " cut.
static std::string library_line(const std::string& err) {
  std::istringstream in(err);
  std::string line, first;
  bool have_first = false;
  while (std::getline(in, line)) {
    if (line.rfind("ratchet: could not check: ", 0) == 0) return first_line(line.substr(9));
    if (!have_first && !line.empty()) first = line, have_first = true;
  }
  first = first_line(first);
  return first.rfind("ratchet: ", 0) == 0 ? first.substr(9) : first;
}

// A verdict of "could not check" with `why` (prefixed unless it says so already).
static Verdict cannot_check(std::string why) {
  Verdict v;
  v.unknown = true;
  v.reason = why.rfind("could not check: ", 0) == 0 ? why : "could not check: " + why;
  return v;
}

// The first "ratchet: warning: ..." line of stderr, "ratchet: " cut; "" if none.
static std::string warning_line(const std::string& err) {
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("ratchet: warning: ", 0) == 0) return first_line(line.substr(9));
  return "";
}

static std::map<std::string, std::string> key_values(const std::string& text) {
  std::map<std::string, std::string> kv;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return kv;
}

static Verdict judge_service(const Command& c, const transport::ExecResult& r) {
  Verdict v;
  // Nothing to compare with (a plan file that says none): never "holds" unseen.
  if (!c.expect.state && !c.expect.enabled && !c.expect.file_sha256)
    return cannot_check("the check names no state to compare with (no `expect`)");
  if (r.exit_code != 0) {
    std::string why = library_line(r.err.data);
    if (why.rfind("could not check: ", 0) == 0) return cannot_check(why);
    return cannot_check("service state unreadable: " + status_text(r) + (why.empty() ? "" : ": " + why));
  }
  auto kv = key_values(r.out.data);
  // No LoadState: systemctl answered nothing (R09: where systemd is not running it exits 0 so).
  if (kv["load"].empty()) return cannot_check("service state unreadable: systemctl printed no LoadState");
  // Not a system unit, but a user's manager runs one by that name now
  // (ratchet_user_units): "not found" would say stopped of a unit that runs.
  std::vector<std::string> users;
  {
    std::istringstream in(r.out.data);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("user_unit=", 0) == 0) users.push_back(line.substr(10));
  }
  if (kv["load"] == "not-found" && !users.empty()) {
    std::string who;
    for (size_t i = 0; i < users.size(); ++i) who += (i ? ", " : "") + users[i];
    return cannot_check(fmt::format("not a system unit; runs as a user unit of {}: set scope = \"user\", user = \"{}\"",
                                    who, users[0]));
  }
  std::vector<std::string> wrong;
  const Expect& e = c.expect;
  if (e.file_sha256 && kv["file"] != *e.file_sha256)
    wrong.push_back(kv["file"] == "absent" ? "unit file not installed" : "unit file differs");
  if (e.enabled) {
    bool is_on = kv["enabled"] == "enabled" || kv["enabled"] == "enabled-runtime";
    if (is_on != *e.enabled)
      wrong.push_back(fmt::format("is-enabled says \"{}\"", kv["enabled"]));
  }
  if (e.state) {
    const std::string& a = kv["active"];
    // A transitional state that outlasted transition_wait: say which, for how long.
    std::string said = fmt::format("is-active says \"{}\"", a);
    if (kv.count("sub"))
      said = fmt::format("{} ({}){}", a, kv["sub"], kv.count("for") ? fmt::format(" for {}s", kv["for"]) : "");
    if (*e.state == "started" && a != "active") wrong.push_back(said);
    if (*e.state == "started" && a == "active" && kv["reload"] == "yes")
      wrong.push_back("active on an old definition: the unit's file changed on disk (NeedDaemonReload=yes)");
    if (*e.state == "stopped") {
      if (kv["load"] == "not-found") v.reason = "unit not found: counts as stopped";
      else if (a != "inactive" && a != "failed") wrong.push_back(said);
    }
  }
  // Processes left in the cgroup of a stopped unit (KillMode=process or none):
  // evidence, so that a later verify that fails has its cause on screen.
  std::string left;
  int n_left = 0;
  {
    std::istringstream in(r.out.data);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("left=", 0) == 0) {
        std::string p = line.substr(5);
        auto sp = p.find(' ');
        left += (n_left++ ? ", " : "") + (sp == std::string::npos ? "PID " + p
                                                                  : "PID " + p.substr(0, sp) + " (" + p.substr(sp + 1) + ")");
      }
  }
  v.holds = wrong.empty();
  if (!v.holds) {
    v.reason.clear();
    for (size_t i = 0; i < wrong.size(); ++i) v.reason += (i ? "; " : "") + wrong[i];
  }
  if (n_left > 0)
    v.reason += std::string(v.reason.empty() ? "" : "; ") +
                fmt::format("{} process(es) left in the unit's cgroup: {}", n_left, left);
  return v;
}

static Verdict judge_write(const Command& c, const transport::ExecResult& r) {
  Verdict v;
  if (!c.expect.file) return cannot_check("the check names no file state to compare with (no `expect`)");
  if (r.exit_code != 0) {
    std::string why = library_line(r.err.data);
    if (why.rfind("could not check: ", 0) == 0) return cannot_check(why);
    return cannot_check("file state unreadable: " + status_text(r) + (why.empty() ? "" : ": " + why));
  }
  std::istringstream in(r.out.data);
  std::string sha, mode, owner, group;
  in >> sha >> mode >> owner >> group;
  if (sha == "absent") {
    v.reason = "file does not exist";
    return v;
  }
  if (sha == "notfile") {
    v.reason = "path exists and is not a regular file";
    return v;
  }
  std::vector<std::string> wrong;
  const Expect::File e = c.expect.file.value_or(Expect::File{});
  if (sha != e.sha256) wrong.push_back("content differs");
  if (!e.mode.empty() && mode != e.mode)
    wrong.push_back(fmt::format("mode is {}", mode));
  if (!e.owner.empty() && owner != e.owner)
    wrong.push_back(fmt::format("owner is {}", owner));
  if (!e.group.empty() && group != e.group)
    wrong.push_back(fmt::format("group is {}", group));
  v.holds = wrong.empty();
  for (size_t i = 0; i < wrong.size(); ++i) v.reason += (i ? "; " : "") + wrong[i];
  return v;
}

static Verdict judge_kill(const transport::ExecResult& r) {
  Verdict v;
  v.holders = parse_process_lines(r.out.data, "alive");
  // Any "alive" line fails the check, even one that does not parse: a
  // process seen alive is seen, whatever else could not be.
  if (!v.holders.empty() || r.out.data.find("alive\t") != std::string::npos) {
    v.reason = survivors_text(v.holders);
    return v;
  }
  if (r.exit_code != 0) {
    std::string why = library_line(r.err.data);
    auto u = cannot_check(why.empty() ? status_text(r) : why);
    u.holders = v.holders;
    return u;
  }
  v.holds = true;
  v.reason = first_line(r.err.data);
  return v;
}

// holders (verify no_holders) and absent (verify absent).
static Verdict judge_processes(const Command& c, const transport::ExecResult& r) {
  Verdict v;
  const bool holders = c.judge == Judge::holders;
  v.holders = parse_process_lines(r.out.data, holders ? "holder" : "process");
  v.holds = r.exit_code == 0;
  if (v.holds) {
    v.reason = warning_line(r.err.data);
  } else if (r.exit_code == 1) {
    v.reason = holders ? fmt::format("{} process(es) hold the files", v.holders.size())
                       : fmt::format("{} matching process(es) running", v.holders.size());
    // A device held through another node (a container's own): say which, the first one.
    for (const auto& h : v.holders)
      if (!h.nodes.empty()) {
        v.reason += ": " + node_text(h.pid, h.nodes.front());
        break;
      }
    // A holder no /proc/PID/fd shows: a thread with a descriptor table of its own, the first one.
    for (const auto& h : v.holders)
      if (!h.threads.empty()) {
        v.reason += "; " + thread_text(h.pid, h.threads.front());
        break;
      }
    std::string blind = library_line(r.err.data);
    if (blind.rfind("could not check: ", 0) == 0) v.reason += "; and " + blind;
  } else {
    // 2: a pattern that matches nothing; 5: processes it could not see.
    std::string why = library_line(r.err.data);
    auto u = cannot_check(why.empty() ? status_text(r) : why);
    u.holders = v.holders;
    return u;
  }
  return v;
}

static Verdict judge_matches(const Command& c, const transport::ExecResult& r) {
  Verdict v;
  // An empty regex matches every line: it would hold whatever the command printed.
  if (c.expect.stdout_matches.empty()) return cannot_check("the check names no regex to match (no `expect`)");
  if (r.exit_code != 0) {
    std::string why = first_line(r.err.data);
    v.reason = status_text(r) + (why.empty() ? "" : ": " + why);
    return v;
  }
  try {
    // Like grep -E: the pattern matches a line (so ^ and $ anchor lines).
    // regexec(3), not std::regex: it does not recurse per input byte.
    regex_t re;
    if (regcomp(&re, c.expect.stdout_matches.c_str(), REG_EXTENDED | REG_NOSUB) != 0)
      throw std::runtime_error("bad regex");
    std::istringstream lines(r.out.data);
    for (std::string line; !v.holds && std::getline(lines, line);)
      v.holds = regexec(&re, line.c_str(), 0, nullptr, 0) == 0;
    regfree(&re);
  } catch (const std::exception& ex) {
    v.reason = fmt::format("bad stdout_matches pattern: {}", ex.what());
    return v;
  }
  if (!v.holds) v.reason = fmt::format("stdout does not match /{}/", c.expect.stdout_matches);
  return v;
}

// exit0: the command's exit status is the check.
static Verdict judge_exit0(const transport::ExecResult& r) {
  Verdict v;
  v.holds = r.exit_code == 0;
  // A library check that could not look (exit 5: no /proc/net/tcp, no systemctl) saw no state.
  if (r.exit_code == 5) {
    const std::string why = library_line(r.err.data);
    if (why.rfind("could not check: ", 0) == 0) return cannot_check(why);
  }
  if (!v.holds) {
    std::string why = first_line(r.out.data);
    if (why.empty()) why = first_line(r.err.data);
    v.reason = why.empty() ? status_text(r) : status_text(r) + ": " + why;
    // Evidence a library check prints beside its words (port_free: who listens).
    v.holders = parse_process_lines(r.out.data, "holder");
  }
  return v;
}

Verdict judge_check(const Command& c, const transport::ExecResult& r) {
  if (!r.error.empty() || r.timed_out || !r.signal.empty()) {
    // The check may not have run at all, or did not finish: it saw nothing.
    return cannot_check(r.error.empty() ? "the check " + status_text(r) : r.error);
  }
  switch (c.judge) {  // no default: a judge added to the enum must be handled here
    case Judge::service: return judge_service(c, r);
    case Judge::write: return judge_write(c, r);
    case Judge::kill: return judge_kill(r);
    case Judge::holders:
    case Judge::absent: return judge_processes(c, r);
    case Judge::matches: return judge_matches(c, r);
    case Judge::gpus: return judge_gpus(c, r);
    case Judge::copy: return judge_copy(c, r);
    case Judge::exit0:
    case Judge::exit:  // an action's judge on a check: its exit status
    case Judge::kill_action: return judge_exit0(r);
  }
  return judge_exit0(r);  // not reached
}

Verdict judge_action(const Command& c, const transport::ExecResult& r,
                     const std::vector<int>& expect_exit) {
  Verdict v;
  if (!r.error.empty() || r.timed_out || !r.signal.empty()) {
    v.reason = status_text(r);
    return v;
  }
  switch (c.judge) {  // no default: a judge added to the enum must be handled here
    case Judge::kill_action:
      v.holders = parse_process_lines(r.out.data, "signalled");
      v.unkillable = parse_unkillable(r.out.data);
      v.holds = r.exit_code == 0;
      if (!v.holds) v.reason = first_line(r.err.data).empty() ? status_text(r) : first_line(r.err.data);
      else if (v.holders.empty()) v.reason = first_line(r.err.data);
      v.traced = parse_traced(r.out.data);
      // A stopped holder keeps the signal pending: CONT followed it (`continued`
      // lines). One its tracer holds (state t) CONT does not resume: said so instead.
      for (const auto& h : parse_process_lines(r.out.data, "continued"))
        if (std::none_of(v.traced.begin(), v.traced.end(), [&](const Traced& t) { return t.pid == h.pid; }))
          v.reason += fmt::format("{}PID {} ({}) was stopped: CONT sent after the signal",
                                  v.reason.empty() ? "" : "; ", h.pid, h.comm);
      for (const auto& t : v.traced) v.reason += (v.reason.empty() ? "" : "; ") + traced_text(t);
      v.frozen = parse_frozen(r.out.data);
      for (const auto& f : v.frozen) v.reason += (v.reason.empty() ? "" : "; ") + frozen_text(f);
      return v;
    case Judge::exit:
    case Judge::exit0:  // a check's judge on an action: its exit status, as `exit`
    case Judge::holders:
    case Judge::absent:
    case Judge::matches:
    case Judge::service:
    case Judge::write:
    case Judge::kill:
    case Judge::gpus:
    case Judge::copy:
      break;
  }
  // A command that succeeded but left its output held open: say so; else the
  // host library's own "ratchet: warning:" line (write: an ACL, an extended
  // attribute or a hard link it could not keep).
  if (!r.warning.empty()) v.reason = "warning: " + r.warning;
  else v.reason = warning_line(r.err.data);
  const std::vector<int>& ok = c.expect.exit_codes.empty() ? expect_exit : c.expect.exit_codes;
  v.holds = std::find(ok.begin(), ok.end(), r.exit_code) != ok.end();
  if (!v.holds) {
    std::string why = first_line(r.err.data);
    v.reason = why.empty() ? status_text(r) : status_text(r) + ": " + why;
    // Evidence a library check prints beside its words (port_free: who listens).
    v.holders = parse_process_lines(r.out.data, "holder");
  }
  return v;
}

}  // namespace ratchet::steps
