#include "transport/wire.h"
#include "transport/session_wire.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <set>
#include <stdexcept>

#include "transport/transport.h"
#include "util/shell.h"

using namespace ratchet;
using namespace ratchet::transport;
using std::chrono::milliseconds;

TEST_CASE("wire_command without a deadline execs /bin/sh -c with the quoted command",
          "[transport]") {
  CHECK(wire_command("echo hi", milliseconds(0), Become{}) == "exec /bin/sh -c 'echo hi'");
  CHECK(wire_command("echo 'a b'", milliseconds(0), Become{}) ==
        "exec /bin/sh -c 'echo '\\''a b'\\'''");
  CHECK(wire_command("true", milliseconds(0), Become{}) == "exec /bin/sh -c true");
}

TEST_CASE("wire_command with a deadline runs the wrapper in the shell that read the line, then exits",
          "[transport]") {
  const std::string script(run_script());
  // The deadline (ms) and the watchdog's script follow the command: the
  // wrapper starts that watchdog on the host for itself (HostWatch::on).
  const std::string watch = "'" + std::string(watchdog_script()) + "'";
  CHECK(wire_command("sleep 30", milliseconds(60'000), Become{}, "0123456789abcdef") ==
        "set -- 0123456789abcdef 'sleep 30' 60000 " + watch + "; " + script + "; exit");
  CHECK(wire_command("it's", milliseconds(1500), Become{}, "0123456789abcdef") ==
        "set -- 0123456789abcdef 'it'\\''s' 1500 " + watch + "; " + script + "; exit");
  // The session shell's child leaves the deadline to the shell's guard.
  CHECK(wire_command("sleep 30", milliseconds(60'000), Become{}, "0123456789abcdef", HostWatch::off) ==
        "set -- 0123456789abcdef 'sleep 30'; " + script + "; exit");
  // A wrapped command needs a run id: 16 lowercase hex digits.
  for (std::string_view bad : {"", "0123456789abcde", "0123456789ABCDEF", "0123456789abcdefa", "0123456789abcdeg"})
    CHECK_THROWS_AS(wire_command("true", milliseconds(1000), Become{}, bad), std::invalid_argument);
}

TEST_CASE("run ids are 16 hex digits, new every time", "[transport]") {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    std::string id = new_run_id();
    CHECK(valid_run_id(id));
    seen.insert(id);
  }
  CHECK(seen.size() == 100);
}

TEST_CASE("the run, watchdog, session and become scripts travel single-quoted as is", "[transport]") {
  for (std::string_view s : {run_script(), watchdog_script(), session_script(), become_script()}) {
    CHECK(s.find('\'') == std::string_view::npos);  // so quoting never rewrites it
    CHECK(s.find('\\') == std::string_view::npos);  // read alike by sh, csh and fish
    CHECK(s.find('\n') == std::string_view::npos);  // csh rejects newlines in quotes
    CHECK(util::shell_quote(s) == "'" + std::string(s) + "'");
  }
  std::string_view s = run_script();
  // Ends by running the command in the same shell, with nothing of its own left.
  const std::string_view tail = "eval \"unset __rp __rg __rd __rs __rw __rc __c; $__rc\"";
  CHECK(s.substr(s.size() - tail.size()) == tail);
  CHECK(s.find("fork") == std::string_view::npos);
  // One subshell and one background job: the watchdog's start, only with a
  // deadline given ($3), marked as ratchet's own, off the command's streams.
  const size_t sub = s.find('(');
  REQUIRE(sub != std::string_view::npos);
  CHECK(s.find('(', sub + 1) == std::string_view::npos);
  CHECK(s.rfind("if [ -n \"$3\" ]; then", sub) != std::string_view::npos);
  CHECK(s.substr(sub).rfind("( unset RATCHET_RUN_ID; RATCHET_SELF=1; export RATCHET_SELF; "
                            "exec </dev/null >/dev/null 2>&1; /bin/sh -c \"$4\" ratchet ",
                            0) == 0);
  CHECK(s.find(" & );") != std::string_view::npos);
  CHECK(s.find(" & ") == s.rfind(" & "));
}

TEST_CASE("watchdog_command passes pid, group, start time and the ms left", "[transport]") {
  const std::string script = "'" + std::string(watchdog_script()) + "'";
  RemoteProcess p{4242, 4240, 987654};
  const std::string id = "0123456789abcdef";
  CHECK(watchdog_command(p, milliseconds(1500), Become{}, id) ==
        "exec env RATCHET_SELF=1 /bin/sh -c " + script + " ratchet 4242 4240 987654 1500 " + id);
  CHECK(watchdog_command(p, milliseconds(-20), Become{true, "app"}, id) ==
        "exec sudo -n -H -u app -- env RATCHET_SELF=1 /bin/sh -c " + script + " ratchet 4242 4240 987654 0 " + id);
  CHECK(watchdog_command(p, milliseconds(0), Become{true, "", true}, id) ==
        "exec sudo -k -S -p '' -H -- env RATCHET_SELF=1 /bin/sh -c " + script + " ratchet 4242 4240 987654 0 " + id);
}

TEST_CASE("watchdog_report: 'on host' where the second channel failed and the wrapper's watchdog runs",
          "[transport]") {
  RemoteProcess p{4242, 4240, 987654};
  CHECK(watchdog_report("armed", p) == "armed");
  CHECK(watchdog_report("watchdog: h:22: cannot open a session channel: x", p) ==
        "watchdog: h:22: cannot open a session channel: x");
  p.watched = true;
  CHECK(watchdog_report("armed", p) == "armed");
  CHECK(watchdog_report("watchdog: h:22: cannot open a session channel: x", p) == "on host");
}

TEST_CASE("become wraps the whole wire string in sudo -n -H", "[transport]") {
  const std::string script = "'" + std::string(run_script()) + "'";
  CHECK(wire_command("id -u", milliseconds(0), Become{true, ""}) ==
        "exec sudo -n -H -- /bin/sh -c 'id -u'");
  CHECK(wire_command("id -u", milliseconds(0), Become{true, "postgres"}) ==
        "exec sudo -n -H -u postgres -- /bin/sh -c 'id -u'");
  CHECK(wire_command("id -u", milliseconds(0), Become{true, "odd user"}) ==
        "exec sudo -n -H -u 'odd user' -- /bin/sh -c 'id -u'");
  const std::string watch = " 5000 '" + std::string(watchdog_script()) + "'";
  CHECK(wire_command("id -u", milliseconds(5000), Become{true, "app"}, "00000000000000aa") ==
        "exec sudo -n -H -u app -- /bin/sh -c " + script + " /bin/sh 00000000000000aa 'id -u'" + watch);
  CHECK(wire_command("id -u", milliseconds(5000), Become{true, "app"}, "00000000000000aa", HostWatch::off) ==
        "exec sudo -n -H -u app -- /bin/sh -c " + script + " /bin/sh 00000000000000aa 'id -u'");
  CHECK(wire_command("id -u", milliseconds(5000), Become{false, "app"}, "00000000000000aa") ==
        "set -- 00000000000000aa 'id -u'" + watch + "; " + std::string(run_script()) + "; exit");
}

TEST_CASE("become with a password: sudo -k -S with an empty prompt, never -n", "[transport]") {
  CHECK(wire_command("id -u", milliseconds(0), Become{true, "", true}) ==
        "exec sudo -k -S -p '' -H -- /bin/sh -c 'id -u'");
  CHECK(wire_command("id -u", milliseconds(0), Become{true, "app", true}) ==
        "exec sudo -k -S -p '' -H -u app -- /bin/sh -c 'id -u'");
  CHECK(wire_command("id -u", milliseconds(0), Become{false, "app", true}) ==
        "exec /bin/sh -c 'id -u'");
}

TEST_CASE("arm_after is a tenth of the timeout, within 0.5 s and 10 s, never past the timeout",
          "[transport]") {
  CHECK(arm_after(milliseconds(60'000)) == milliseconds(6'000));
  CHECK(arm_after(milliseconds(5'000)) == milliseconds(500));
  CHECK(arm_after(milliseconds(3'600'000)) == milliseconds(10'000));
  CHECK(arm_after(milliseconds(300)) == milliseconds(300));
  CHECK(arm_after(milliseconds(20'000)) == milliseconds(2'000));
}

TEST_CASE("client_deadline adds the grace to the host deadline", "[transport]") {
  CHECK(client_deadline(milliseconds(1000)) == milliseconds(4000));
  CHECK(client_deadline(milliseconds(60'000)) == milliseconds(63'000));
  CHECK(kClientGrace == milliseconds(3000));
}

TEST_CASE("the become probe runs sudo in the C locale and sudo_argv is what a sudoers rule must allow", "[transport]") {
  Become probe{true, "app", false, true};
  CHECK(wire_command("true", milliseconds(0), probe) == "exec env LC_ALL=C sudo -n -H -u app -- /bin/sh -c true");
  probe.password = true;
  CHECK(wire_command("true", milliseconds(0), probe) ==
        "exec env LC_ALL=C sudo -k -S -p '' -H -u app -- /bin/sh -c true");
  CHECK(sudo_argv(Become{true, "", false}, "id -u") == "sudo -n -H -- /bin/sh -c 'id -u'");
  CHECK(sudo_argv(Become{true, "app", true, true}, "...") == "sudo -k -S -p '' -H -u app -- /bin/sh -c ...");
}

TEST_CASE("the wire scripts' sources join into one equivalent line", "[transport]") {
  // Every code line of src/transport/sh/*.sh ends a command, so that joining
  // lines with a space means what the file means; sh -n accepts both.
  for (const char* name : {"run.sh", "watchdog.sh", "session.sh", "become.sh"}) {
    INFO(name);
    std::ifstream in(std::string(RATCHET_SOURCE_DIR) + "/src/transport/sh/" + name);
    REQUIRE(in);
    std::string line, last;
    for (int n = 1; std::getline(in, line); ++n) {
      while (!line.empty() && (line.front() == ' ')) line.erase(0, 1);
      if (line.empty() || line[0] == '#') continue;
      INFO(n << ": " << line);
      CHECK(line.find(" #") == std::string::npos);  // no comment after code (it would swallow the rest)
      last = line;
      bool ends_command = false;
      for (std::string_view end : {";", "&&", "||", "|", "then", "do", "else", "{", "(", ") & )"})
        if (line.size() >= end.size() && line.compare(line.size() - end.size(), end.size(), end) == 0)
          ends_command = true;
      if (!ends_command) CHECK(in.peek() == EOF);  // only the last line may end without one
    }
  }
  for (std::string_view s : {run_script(), watchdog_script(), session_script(), become_script()})
    CHECK(std::system(("sh -n -c " + util::shell_quote(s)).c_str()) == 0);
}

namespace {

const Library kLib{"ratchet_hi() { echo hi; }", "# <lib by reference>", "ratchet_"};

ExecRequest typed(std::string script, int host_ms) {
  ExecRequest req;
  req.script = std::move(script);
  req.library = &kLib;
  req.host_timeout = milliseconds(host_ms);
  req.run_id = "0123456789abcdef";
  return req;
}

}  // namespace

TEST_CASE("wire_form of a typed command: the library ahead of a script that calls it, then the wrapper",
          "[transport]") {
  ExecRequest req = typed("ratchet_hi", 5000);
  Wire w = wire_form(req);
  const std::string id = "0123456789abcdef";
  CHECK(w.command == "exec /bin/sh -s ratchet-wire");  // always: no quote, `!`, `$` or backslash
  const std::string payload =
      payload_of(wire_command("ratchet_hi() { echo hi; }\nratchet_hi", milliseconds(5000), Become{}, id));
  // The first line holds nothing of the command; the command follows the go line.
  CHECK(w.line == exec_line(id, payload.size()));
  CHECK(w.line.find("ratchet_hi") == std::string::npos);
  CHECK(w.stdin_data == payload);
  CHECK(w.run_id == id);
  CHECK(w.go_id == id);
  CHECK(w.become_stdin.empty());
  req.script = "echo plain";  // calls nothing of it: sent alone
  CHECK(wire_form(req).stdin_data == payload_of(wire_command("echo plain", milliseconds(5000), Become{}, id)));
  req.library = nullptr;
  req.script = "ratchet_hi";
  CHECK(wire_form(req).stdin_data == payload_of(wire_command("ratchet_hi", milliseconds(5000), Become{}, id)));
  // No host deadline: plain /bin/sh -c, no run id on the wire, a fresh go id.
  req = typed("echo hi", 0);
  w = wire_form(req);
  CHECK(w.command == "exec /bin/sh -s ratchet-wire");
  CHECK(w.stdin_data == payload_of("exec /bin/sh -c 'echo hi'"));
  CHECK(w.line == exec_line(w.go_id, w.stdin_data.size()));
  CHECK(valid_run_id(w.go_id));
  CHECK(w.run_id.empty());
  // A deadline needs a run id (the transports draw one when it is "").
  req = typed("echo hi", 1000);
  req.run_id = "nope";
  CHECK_THROWS_AS(wire_form(req), std::invalid_argument);
}

TEST_CASE("exec_line: one line, the go id split around the guard, the payload's size", "[transport]") {
  const std::string line = exec_line("0123456789abcdef", 1234);
  CHECK(line.find('\n') == line.size() - 1);
  CHECK(line.rfind("__g=01234567; [ \"$1\" = ratchet-wire ] || exit 121; ", 0) == 0);
  CHECK(line.find("0123456789abcdef") == std::string::npos);  // no whole go id before the guard ran
  CHECK(line.find("[ratchet-go $__g-89abcdef]") != std::string::npos);
  CHECK(line.find("dd bs=1234 count=1 iflag=fullblock") != std::string::npos);
  CHECK(go_line("0123456789abcdef") == "[ratchet-go 01234567-89abcdef]\n");
  CHECK(payload_of("true") == "true\n#ratchet-end");
}

TEST_CASE("wire_form: the payload, then sudo's password line on stdin, and to each second channel", "[transport]") {
  ExecRequest req = typed("id -u", 5000);
  req.stdin_data = "input";
  req.become = Become{true, "app", false};
  req.become_password = "pw";  // not asked for (sudo -n): not sent
  Wire w = wire_form(req);
  const std::string payload = payload_of(wire_command("id -u", milliseconds(5000), req.become, req.run_id));
  CHECK(payload.rfind("exec sudo -n -H -u app -- /bin/sh -c ", 0) == 0);
  CHECK(w.stdin_data == payload + "input");
  CHECK(w.become_stdin.empty());
  req.become.password = true;
  w = wire_form(req);
  const std::string with_pw = payload_of(wire_command("id -u", milliseconds(5000), req.become, req.run_id));
  CHECK(with_pw.rfind("exec sudo -k -S -p '' -H -u app -- /bin/sh -c ", 0) == 0);
  CHECK(w.stdin_data == with_pw + "pw\ninput");
  CHECK(w.become_stdin == "pw\n");
  CHECK(w.line.find("pw") == std::string::npos);
  req.become.c_locale = true;  // the become probe
  CHECK(wire_form(req).stdin_data.rfind("exec env LC_ALL=C sudo -k -S -p '' -H -u app -- ", 0) == 0);
}

TEST_CASE("sent_form: the command line with the library by reference and never the password", "[transport]") {
  ExecRequest req = typed("ratchet_hi", 5000);
  req.become = Become{true, "", true};
  req.become_password = "hunter2";
  req.stdin_data = "input";
  CHECK(sent_form(req) == wire_command("# <lib by reference>\nratchet_hi", milliseconds(5000), req.become,
                                       "0123456789abcdef"));
  CHECK(sent_form(req).find("hunter2") == std::string::npos);
  req.script = "echo plain";
  CHECK(payload_of(sent_form(req)) + "hunter2\ninput" == wire_form(req).stdin_data);  // no library: as sent
}

TEST_CASE("unsendable: a NUL byte, or under become a sudo argument over MAX_ARG_STRLEN, is refused before sending",
          "[transport]") {
  CHECK(unsendable(typed("echo hi", 5000)).empty());
  CHECK(unsendable(typed(std::string("echo a\0b", 8), 5000)) ==
        "refused: the command holds a NUL byte, which no shell command line can carry (pass the value on stdin)");
  // Without become the command travels on stdin: no argument limit.
  CHECK(unsendable(typed("test -n " + std::string(140000, 'A'), 5000)).empty());
  ExecRequest big = typed("test -n " + std::string(140000, 'A'), 5000);
  big.become = Become{true, "", false};
  const size_t bytes = wire_command(big.script, big.host_timeout, big.become, big.run_id).size();
  CHECK(unsendable(big) == "refused: the command is " + std::to_string(bytes) +
                               " bytes as sent; Linux takes less than 131072 in one argument (MAX_ARG_STRLEN, "
                               "execve(2)): pass large values on stdin");
  big.run_id = "";  // the size does not depend on the run id
  CHECK(unsendable(big).find(std::to_string(bytes) + " bytes as sent") != std::string::npos);
  // The library counts: a script under the limit alone, over it with the library.
  std::string lib_text(100000, '#');
  Library heavy{lib_text, "#", "ratchet_"};
  ExecRequest with = typed("ratchet_x " + std::string(40000, 'B'), 5000);
  with.become = Become{true, "", false};
  with.library = &heavy;
  CHECK_FALSE(unsendable(with).empty());
  with.library = nullptr;
  CHECK(unsendable(with).empty());
}
