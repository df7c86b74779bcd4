#include "transport/session_wire.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <sstream>
#include <stdexcept>

#include "transport/wire.h"
#include "util/shell.h"

namespace ratchet::transport {

std::string session_start_payload(std::string_view hello) {
  // The shell execs itself once more under `env`, so that it and what it
  // starts carry kSelfEnv in their environment (but for the child:
  // session.sh), with an argv that names it.
  return payload_of(fmt::format("exec env {} /bin/sh -c {} ratchet-session {}", kSelfEnv,
                                util::shell_quote(session_script()), hello));
}

std::string become_start_payload(std::string_view hello, const std::string& user) {
  // sudo ran under LC_ALL=C (its messages in English); where sudo kept that
  // LC_ALL, the login's own value ($1 when $2 is 1) or none is put back, so
  // that the commands get the locale a `sudo` of their own would give them.
  const std::string root = fmt::format(
      "if [ -n \"${{LC_ALL+1}}\" ]; then if [ \"$2\" = 1 ]; then LC_ALL=$1; export LC_ALL; else unset LC_ALL; fi; "
      "fi; exec env {} /bin/sh -c {} ratchet-session {}",
      kSelfEnv, util::shell_quote(session_script()), hello);
  return payload_of(fmt::format("exec env {} /bin/sh -c {} ratchet-become {} {}", kSelfEnv,
                                util::shell_quote(become_script()), util::shell_quote(user), util::shell_quote(root)));
}

std::string session_ready_prefix(std::string_view hello) {
  return fmt::format("ratchet-session {} ready ", hello);
}

std::string new_session_nonce() { return new_run_id() + new_run_id(); }

bool library_from_file(const ExecRequest& req) {
  const Library* lib = req.library;
  if (lib == nullptr || req.script.find(lib->marker) == std::string::npos) return false;
  return !req.become.enabled || req.become.user.empty() || req.become.user == "root";
}

std::string session_child(const ExecRequest& req, std::string_view dir) {
  // The trap is the only witness of a normal exit: sh reads both `exit 137`
  // and a death by KILL as 137 (docs/transport.md).
  const std::string d(dir);
  const std::string trap = "trap " + util::shell_quote("echo $? 2>/dev/null >" + util::shell_quote(d + "/s")) + " EXIT";
  std::string script = trap + "\n";
  if (library_from_file(req)) {
    const std::string l = util::shell_quote(d + "/l");
    // A command may remove the session's directory: then say so, run nothing.
    script += fmt::format("[ -r {0} ] || {{ echo 'ratchet-session: the host library {0} is gone' >&2; exit 125; }}\n. {0}\n",
                          l) + req.script;
  } else {
    script += with_library(req.script, req.library);
  }
  // Always wrapped: the pid line lets ^C and the watchdog reach the command.
  const util::Millis t = std::max(req.host_timeout, util::Millis(1));
  if (req.become.enabled) return wire_command(script, t, req.become, req.run_id, HostWatch::off);
  if (!valid_run_id(req.run_id)) throw std::invalid_argument("session_child: not a run id: " + req.run_id);
  // The run wrapper itself, in the child's own shell (one exec fewer than
  // `exec /bin/sh -c RUN /bin/sh RUN_ID SCRIPT`, the same $0, $1 and $2).
  return fmt::format("set -- {} {}\n{}", req.run_id, util::shell_quote(script), run_script());
}

SessionRequest session_request(const ExecRequest& req, std::string_view dir, bool library_sent) {
  SessionRequest r;
  if (library_from_file(req) && !library_sent) r.library = std::string(req.library->text) + "\n";
  r.child = session_child(req, dir);
  if (req.become.enabled && req.become.password) {
    if (req.become_password.find_first_of(std::string("\n\0", 2)) == std::string::npos)
      r.password = req.become_password;
    else
      r.stdin_data = req.become_password + "\n";
  }
  r.stdin_data += req.stdin_data;
  if (!(req.become.enabled && req.become.password)) r.query = held_output_query(req.run_id, req.become);
  if (r.query.find('\n') != std::string::npos) r.query.clear();  // it travels as one line
  r.grace = req.drain_grace;
  r.run_id = req.run_id;
  return r;
}

std::string session_frame(std::string_view nonce, const SessionRequest& r) {
  const long long ms = std::max<long long>(0, r.grace.count());
  std::string out = fmt::format("{} {} {} {}.{:03} {} {} {}\n", nonce, r.child.size(), r.stdin_data.size(),
                                ms / 1000, ms % 1000, r.library.size(), r.run_id, r.password ? 1 : 0);
  out += r.query;  // one line: held_output_query() has no newline
  out += '\n';
  if (r.password) out += *r.password + '\n';
  out += r.library;
  out += r.child;
  out += r.stdin_data;
  return out;
}

std::string session_helper_frame(std::string_view nonce, const std::string& command_line,
                                 const std::optional<std::string>& password) {
  std::string out = fmt::format("{} {} {}\n", nonce, command_line.size(), password ? 1 : 0);
  if (password) out += *password + '\n';
  return out + command_line;
}

std::string helper_outcome(std::string_view line) {
  const size_t sp = line.find(' ');
  const std::string_view code = line.substr(0, sp);
  const std::string_view said = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
  if (code == "0") return "armed";
  return fmt::format("watchdog: exit {}{}{}", code, said.empty() ? "" : ": ", said);
}

void MarkerSplit::feed(const char* data, size_t n, std::string* out) {
  if (found_) {
    after_.append(data, n);
    return;
  }
  held_.append(data, n);
  size_t at = held_.find(marker_);
  if (at != std::string::npos) {
    out->append(held_, 0, at);
    after_ = held_.substr(at + marker_.size());
    held_.clear();
    found_ = true;
    return;
  }
  // Keep back only what could still be the marker's beginning.
  size_t keep = std::min(held_.size(), marker_.size() - 1);
  while (keep > 0 && held_.compare(held_.size() - keep, keep, marker_, 0, keep) != 0) --keep;
  out->append(held_, 0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
}

std::optional<SessionTrailer> parse_trailer(std::string_view after, bool* bad) {
  *bad = false;
  size_t nl = after.find('\n');
  if (nl == std::string_view::npos) {
    *bad = after.size() > 256;  // a trailer line is short
    return std::nullopt;
  }
  std::istringstream in{std::string(after.substr(0, nl))};
  std::string end, kind, value, rest;
  int held = -1;
  long long hlen = -1, glen = -1;
  in >> end >> kind >> value >> held >> hlen >> glen;
  if (!in || (in >> rest) || end != "end" || (kind != "exit" && kind != "signal") || (held != 0 && held != 1) ||
      hlen < 0 || glen < 0) {
    *bad = true;
    return std::nullopt;
  }
  SessionTrailer t;
  if (kind == "exit") {
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), t.exit_code);
    if (ec != std::errc() || p != value.data() + value.size() || t.exit_code < 0 || t.exit_code > 255) {
      *bad = true;
      return std::nullopt;
    }
  } else {
    t.signal = value;
  }
  t.held = held == 1;
  if (after.size() - nl - 1 < size_t(hlen) + size_t(glen)) return std::nullopt;
  t.holders = std::string(after.substr(nl + 1, size_t(hlen)));
  std::string_view reports = after.substr(nl + 1 + size_t(hlen), size_t(glen));
  while (!reports.empty()) {
    const size_t end_of = reports.find('\n');
    t.helpers.emplace_back(reports.substr(0, end_of));
    reports.remove_prefix(end_of == std::string_view::npos ? reports.size() : end_of + 1);
  }
  return t;
}

}  // namespace ratchet::transport
