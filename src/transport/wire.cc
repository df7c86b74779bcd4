// Wire strings. How a command reaches the host, in words (sshd runs the login
// shell as a session and process-group leader, and `exec` keeps that PID all
// the way down to the command):
//  - The exec request is always kExecRequest, `exec /bin/sh -s ratchet-wire`:
//    one string every login shell (sh, bash, zsh, fish, tcsh, ...) parses
//    alike. Everything else travels on stdin, read by that /bin/sh: first the
//    bootstrap line (exec_line), which holds no part of the command: it sets
//    the go id's first half, checks `$1` (a shell that an rc file exec'd in
//    its place reads stdin with no such argument, and stops), prints the go
//    line "[ratchet-go HEAD-TAIL]" on stdout and stderr, reads exactly the
//    payload's bytes with dd and evals them. The client sends the payload (the
//    command line, payload_of), sudo's password and the command's input only
//    after the go line came: /bin/sh may read ahead on stdin while it reads
//    its line, and a host that did not run the bootstrap whole (an rc file
//    that read some of it, a forced command) must never get the command.
//    Output before the go line is the login's (an rc file's), kept out of the
//    command's; no go line at all means the host ran something else: not a result.
//  - The command line, with a host deadline: `set -- ID COMMAND; RUN; exit`
//    in that same shell, or under become `exec sudo ... /bin/sh -c RUN /bin/sh
//    ID COMMAND`. ID is the run id: 16 random hex digits, new for every
//    command. RUN prints one line on stderr, "[ratchet-pid ID] PID PGID
//    START_TICKS" (its own /proc/self/stat, read with the `read` builtin),
//    exports RATCHET_RUN_ID=ID, then evals COMMAND in that same shell: the
//    command's PID is the one sshd waits for, so sshd reports its exit status
//    or exit signal. No fork, no other program (the bootstrap's dd read it).
//  - The client strips the first such line with its ID (remote_process.h); a
//    line without it, or naming PID or group 1, is output. When the command is
//    still running after arm_after(timeout), the client runs WATCHDOG on a
//    second channel with the same become (its line: `exec env RATCHET_SELF=1
//    /bin/sh -c WATCHDOG ratchet PID PGID START_TICKS MS ID`). It identifies the command by what
//    the pid line recorded, never by what its argv says now (an `exec` changes
//    that): it refuses (exit 3, one line on stderr) PID or group 1, its own
//    group or session, a PID whose start time differs, and a group that the
//    command (or the sudo that runs it) does not lead. Then it double-forks
//    (its channel closes at once), moves its stdio to /dev/null and polls
//    every 0.2 s (clock: /proc/uptime, else tick counting): command still
//    running (same PID, same start time) at the deadline: TERM the whole
//    process group and every process that carries RATCHET_RUN_ID=ID, 1 s
//    later KILL them; command gone: exit at once. MS = 0 stops the command
//    now: the client does that on ^C and at its own deadline, which also
//    reaches root logins and sudo, where sshd's signal request does not. PID
//    0 (the pid line never came) stops what carries RATCHET_RUN_ID=ID alone.
//  - A command that exited while a child it started still holds its output
//    (`nohup worker &` without redirection) is not waited for past the drain
//    grace (transport.h): the client stops reading, names the holders (the
//    processes with RATCHET_RUN_ID=ID, held_output_query) in a warning, and
//    leaves them running. Needs Linux /proc.
//  - What the engine hands over is typed (transport.h: the script as the step
//    asked, become, deadline, stdin); wire_form() below is the one place that
//    turns it into all of the above, for the ssh and the local backend alike.
#include "transport/wire.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "transport/session_wire.h"
#include "transport/transport.h"
#include "util/shell.h"

namespace ratchet::transport {

namespace {

#include "ratchet/wire_scripts.inc"

// One line each (src/transport/sh/*.sh, joined): comment lines dropped, each
// line's indentation cut, lines joined with a space. With no single quote,
// backslash or newline, they travel single-quoted through any login shell
// (csh rejects a newline inside quotes).
std::string join_script(std::string_view src) {
  std::string out;
  size_t at = 0;
  while (at < src.size()) {
    size_t nl = src.find('\n', at);
    std::string_view line = src.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    at = nl == std::string_view::npos ? src.size() : nl + 1;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    if (!out.empty()) out += ' ';
    out += line;
  }
  return out;
}

const std::string& run_text() {
  static const std::string s = join_script(kRunScriptSource);
  return s;
}
const std::string& watchdog_text() {
  static const std::string s = join_script(kWatchdogScriptSource);
  return s;
}
const std::string& session_text() {
  static const std::string s = join_script(kSessionScriptSource);
  return s;
}
const std::string& become_text() {
  static const std::string s = join_script(kBecomeScriptSource);
  return s;
}

std::string become_prefix(const Become& b) {
  std::string prefix = "exec ";
  if (b.enabled) {
    if (b.c_locale) prefix += "env LC_ALL=C ";
    prefix += b.password ? "sudo -k -S -p '' -H " : "sudo -n -H ";
    if (!b.user.empty()) prefix += "-u " + util::shell_quote(b.user) + " ";
    prefix += "-- ";
  }
  return prefix;
}

}  // namespace

util::Millis client_deadline(util::Millis timeout) { return timeout + kClientGrace; }

util::Millis arm_after(util::Millis timeout) {
  util::Millis a = std::clamp(timeout / 10, util::Millis(500), util::Millis(10'000));
  return std::min(a, timeout);
}

std::string_view run_script() { return run_text(); }
std::string_view watchdog_script() { return watchdog_text(); }
std::string_view session_script() { return session_text(); }
std::string_view become_script() { return become_text(); }

std::string sudo_argv(const Become& b, const std::string& command) {
  Become plain = b;
  plain.c_locale = false;
  std::string p = become_prefix(plain);
  return p.substr(5) + "/bin/sh -c " + util::shell_quote(command);  // without "exec "
}

bool valid_run_id(std::string_view id) {
  return id.size() == 16 &&
         std::all_of(id.begin(), id.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string new_run_id() {
  std::random_device rd;
  unsigned long long v = (static_cast<unsigned long long>(rd()) << 32) ^ rd();
  return fmt::format("{:016x}", v);
}

std::string go_line(std::string_view go_id) {
  return fmt::format("[ratchet-go {}-{}]\n", go_id.substr(0, 8), go_id.substr(8));
}

std::string payload_of(std::string_view command_line) { return std::string(command_line) + std::string(kPayloadEnd); }

std::string exec_line(std::string_view go_id, size_t payload_bytes) {
  // The id is hex: nothing to quote. Its first half is set before the guard,
  // so that a line whose first bytes an rc file read prints no go line.
  // `$(...; echo .)` keeps trailing newlines; a payload cut short (EOF before
  // payload_bytes) lacks kPayloadEnd and is not run.
  const std::string head(go_id.substr(0, 8)), tail(go_id.substr(8));
  return fmt::format(
      "__g={0}; [ \"$1\" = ratchet-wire ] || exit 121; echo \"[ratchet-go $__g-{1}]\"; "
      "echo \"[ratchet-go $__g-{1}]\" >&2; __c=$(dd bs={2} count=1 iflag=fullblock 2>/dev/null; echo .); "
      "case $__c in *\"#ratchet-end.\") ;; *) echo \"ratchet: the command came short (dd with iflag=fullblock is "
      "needed)\" >&2; exit 122;; esac; unset __g; eval \"${{__c%#ratchet-end.}}\"; exit\n",
      head, tail, payload_bytes);
}

std::string wire_command(const std::string& command, util::Millis timeout, const Become& b,
                         std::string_view run_id, HostWatch w) {
  const std::string prefix = become_prefix(b);
  if (timeout.count() <= 0) return prefix + "/bin/sh -c " + util::shell_quote(command);
  if (!valid_run_id(run_id)) throw std::invalid_argument("wire_command: a run id is 16 hex digits");
  // The wrapper's own watchdog: the deadline in ms, then its script.
  const std::string watch =
      w == HostWatch::on ? fmt::format(" {} {}", timeout.count(), util::shell_quote(watchdog_text())) : "";
  // In the shell that read the line: one exec fewer. `exit` ends it there,
  // so that nothing after the line on stdin is ever read as commands.
  if (!b.enabled)
    return fmt::format("set -- {} {}{}; {}; exit", run_id, util::shell_quote(command), watch, run_text());
  return fmt::format("{}/bin/sh -c {} /bin/sh {} {}{}", prefix, util::shell_quote(run_text()), run_id,
                     util::shell_quote(command), watch);
}

std::string watchdog_report(const std::string& second, const RemoteProcess& p) {
  if (second == "armed" || !p.watched) return second;
  return "on host";
}

std::string held_output_query(std::string_view run_id, const Become& b) {
  // environ is NUL-separated: a fixed-string match of the whole assignment.
  return become_prefix(b) + "/bin/sh -c " +
         util::shell_quote(fmt::format(
             "for d in /proc/[0-9]*; do grep -q -a -F -e RATCHET_RUN_ID={} \"$d/environ\" 2>/dev/null && "
             "{{ read -r c <\"$d/comm\"; echo \"${{d#/proc/}} $c\"; }} 2>/dev/null; done; true",
             run_id));
}

std::string watchdog_command(const RemoteProcess& p, util::Millis left, const Become& b,
                             std::string_view run_id) {
  return fmt::format("{}env {} /bin/sh -c {} ratchet {} {} {} {} {}", become_prefix(b), kSelfEnv,
                     util::shell_quote(watchdog_text()), p.pid, p.pgid, p.start_ticks,
                     std::max<long long>(0, left.count()), util::shell_quote(run_id));
}

std::string with_library(const std::string& script, const Library* lib) {
  if (lib == nullptr || script.find(lib->marker) == std::string::npos) return script;
  return std::string(lib->text) + "\n" + script;
}

std::string with_library_reference(const std::string& script, const Library* lib) {
  if (lib == nullptr || script.find(lib->marker) == std::string::npos) return script;
  return std::string(lib->reference) + "\n" + script;
}

Wire wire_form(const ExecRequest& req) {
  Wire w;
  if (req.host_timeout.count() > 0) w.run_id = req.run_id;
  w.go_id = w.run_id.empty() ? new_run_id() : w.run_id;
  const std::string payload =
      payload_of(wire_command(with_library(req.script, req.library), req.host_timeout, req.become, req.run_id));
  w.line = exec_line(w.go_id, payload.size());
  // sudo -S reads the first line after the payload; the rest is the command's own input.
  if (req.become.enabled && req.become.password) w.become_stdin = req.become_password + "\n";
  w.stdin_data = payload + w.become_stdin + req.stdin_data;
  return w;
}

Wire helper_wire(const std::string& command_line, const std::string& become_stdin) {
  Wire w;
  w.go_id = new_run_id();
  const std::string payload = payload_of(command_line);
  w.line = exec_line(w.go_id, payload.size());
  w.become_stdin = become_stdin;
  w.stdin_data = payload + become_stdin;
  return w;
}

std::string sent_form(const ExecRequest& req) {
  return wire_command(with_library_reference(req.script, req.library), req.host_timeout, req.become, req.run_id);
}

std::string unsendable(const ExecRequest& req) {
  // What the host's shell could not even start must not read as a command that
  // ran and failed (a check would then "fail" and the action run).
  if (req.script.find('\0') != std::string::npos)
    return "refused: the command holds a NUL byte, which no shell command line can carry "
           "(pass the value on stdin)";
  // Only sudo takes the command in an argument; without become it travels
  // on stdin, where no limit applies. Any run id has 16 digits: the size
  // does not depend on which.
  if (!req.become.enabled) return "";
  const std::string id = valid_run_id(req.run_id) ? req.run_id : std::string(16, '0');
  const size_t bytes = wire_command(with_library(req.script, req.library), req.host_timeout, req.become, id).size();
  if (bytes > kMaxWireBytes)
    return fmt::format("refused: the command is {} bytes as sent; Linux takes less than {} in one argument "
                       "(MAX_ARG_STRLEN, execve(2)): pass large values on stdin",
                       bytes, kMaxWireBytes + 1);
  return "";
}

}  // namespace ratchet::transport
