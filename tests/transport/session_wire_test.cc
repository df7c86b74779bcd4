#include "transport/session_wire.h"

#include <catch2/catch.hpp>

#include <string>

#include "transport/wire.h"
#include "util/shell.h"

using namespace ratchet;
using namespace ratchet::transport;
using std::chrono::milliseconds;

namespace {

/// Feeds `text` to a split on `marker` in pieces of `step` bytes; returns the output.
std::string split_in_steps(MarkerSplit* m, const std::string& text, size_t step) {
  std::string out;
  for (size_t at = 0; at < text.size(); at += step) m->feed(text.data() + at, std::min(step, text.size() - at), &out);
  return out;
}

}  // namespace

TEST_CASE("session: the end marker splits a stream wherever the pieces fall", "[transport]") {
  const std::string marker = "0123456789abcdef0123456789abcdef";
  // Output that holds the marker's prefixes and a near miss is output.
  const std::string output = std::string("a\0b", 3) + marker.substr(0, 31) + "x" + marker.substr(0, 5) + "\n";
  const std::string after = " end exit 0 0 0\n";
  for (size_t step : {1, 2, 7, 31, 32, 33, 1000}) {
    INFO(step);
    MarkerSplit m(marker);
    std::string out = split_in_steps(&m, output + marker + after, step);
    CHECK(m.found());
    CHECK(out == output);
    CHECK(m.after() == after);
  }
}

TEST_CASE("session: output that could begin the marker is held back until it cannot", "[transport]") {
  MarkerSplit m("abcd");
  std::string out;
  m.feed("xxab", 4, &out);
  CHECK(out == "xx");
  m.feed("x", 1, &out);
  CHECK(out == "xxabx");
  CHECK_FALSE(m.found());
}

TEST_CASE("session: trailers parse and garbled ones are refused", "[transport]") {
  bool bad = false;
  auto t = parse_trailer(" end exit 3 0 0 0\n", &bad);
  REQUIRE(t);
  CHECK(t->exit_code == 3);
  CHECK(t->signal.empty());
  CHECK_FALSE(t->held);
  CHECK(t->helpers.empty());
  t = parse_trailer(" end signal KILL 0 0 0\n", &bad);
  REQUIRE(t);
  CHECK(t->exit_code == -1);
  CHECK(t->signal == "KILL");
  // Held output: the holders follow the line, HLEN bytes.
  CHECK_FALSE(parse_trailer(" end exit 0 1 8 0\n12 sle", &bad));
  CHECK_FALSE(bad);
  t = parse_trailer(" end exit 0 1 9 0\n12 sleep\n", &bad);
  REQUIRE(t);
  CHECK(t->held);
  CHECK(t->holders == "12 sleep\n");
  // The guard's reports follow the holders, GLEN bytes, a line each.
  CHECK_FALSE(parse_trailer(" end signal TERM 1 9 23\n12 sleep\n0 \n3 ratchet-watch", &bad));
  CHECK_FALSE(bad);
  t = parse_trailer(" end signal TERM 1 9 26\n12 sleep\n0 \n3 ratchet-watchdog: no\n", &bad);
  REQUIRE(t);
  CHECK(t->holders == "12 sleep\n");
  REQUIRE(t->helpers.size() == 2);
  CHECK(helper_outcome(t->helpers[0]) == "armed");
  CHECK(helper_outcome(t->helpers[1]) == "watchdog: exit 3: ratchet-watchdog: no");
  CHECK_FALSE(parse_trailer(" end exit 0", &bad));  // not yet a line
  CHECK_FALSE(bad);
  for (const char* garbled : {" end exit x 0 0 0\n", " end quit 0 0 0 0\n", " fin exit 0 0 0 0\n",
                              " end exit 0 2 0 0\n", " end exit 0 0 0 0 0\n", " end exit 256 0 0 0\n",
                              " end exit 0 0 -1 0\n", " end exit 0 0 0 -1\n", " end exit 0 0 0\n"}) {
    INFO(garbled);
    CHECK_FALSE(parse_trailer(garbled, &bad));
    CHECK(bad);
  }
}

TEST_CASE("session: a helper for the guard is its line then the password line and the command", "[transport]") {
  CHECK(session_helper_frame("n1", "kill 0", std::nullopt) == "n1 6 0\nkill 0");
  CHECK(session_helper_frame("n1", "kill 0", std::string("pw")) == "n1 6 1\npw\nkill 0");
  CHECK(helper_outcome("2") == "watchdog: exit 2");
}

TEST_CASE("session: a request is its header line then the library, child and stdin bytes", "[transport]") {
  SessionRequest r;
  r.child = "exec /bin/sh -c true";
  r.stdin_data = std::string("in\0put", 6);
  r.query = "q";
  r.grace = milliseconds(2500);
  r.run_id = "0123456789abcdef";
  CHECK(session_frame("n0", r) == "n0 20 6 2.500 0 0123456789abcdef 0\nq\nexec /bin/sh -c true" + r.stdin_data);
  r.grace = milliseconds(40);
  CHECK(session_frame("n0", r).substr(0, 40) == "n0 20 6 0.040 0 0123456789abcdef 0\nq\nexe");
  r.library = "lib\n";
  CHECK(session_frame("n0", r) == "n0 20 6 0.040 4 0123456789abcdef 0\nq\nlib\nexec /bin/sh -c true" + r.stdin_data);
  r.password = " p w\\ ";
  CHECK(session_frame("n0", r) ==
        "n0 20 6 0.040 4 0123456789abcdef 1\nq\n p w\\ \nlib\nexec /bin/sh -c true" + r.stdin_data);
}

TEST_CASE("session: the child runs through the run wrapper after its status trap", "[transport]") {
  ExecRequest req;
  req.script = "echo hi";
  req.run_id = "0123456789abcdef";
  const std::string child = session_child(req, "/tmp/ratchet-session.x");
  // Wrapped even without a host deadline: the pid line is what ^C needs. The
  // wrapper runs in the child's own shell, its arguments set first.
  CHECK(child.rfind("set -- 0123456789abcdef 'trap ", 0) == 0);
  CHECK(child.substr(child.size() - run_script().size()) == run_script());
  CHECK(child.find("/tmp/ratchet-session.x/s") != std::string::npos);
  CHECK(child.find("EXIT") != std::string::npos);
  // sudo -S reads its password first; then no holder query (it would have no stdin).
  req.become = Become{true, "", true, false};
  req.become_password = "pw";
  req.stdin_data = "data";
  SessionRequest r = session_request(req, "/d", false);
  CHECK(r.password == std::optional<std::string>("pw"));  // on its own line, to a fifo: in no file
  CHECK(r.stdin_data == "data");
  CHECK(r.query.empty());
  req.become_password = "p\nw";  // one line cannot carry it: ahead of the stdin, as on a channel
  CHECK_FALSE(session_request(req, "/d", false).password);
  CHECK(session_request(req, "/d", false).stdin_data == "p\nw\ndata");
  CHECK(r.child.rfind("exec sudo -k -S -p '' -H -- /bin/sh -c ", 0) == 0);
  req.become.password = false;
  CHECK_FALSE(session_request(req, "/d", false).query.empty());
}

TEST_CASE("session: the host library goes once per shell into DIR/l unless sudo runs as another user",
          "[transport]") {
  const Library lib{"ratchet_hi() { echo hi; }", "# <lib>", "ratchet_"};
  ExecRequest req;
  req.script = "ratchet_hi";
  req.run_id = "0123456789abcdef";
  req.library = &lib;
  SessionRequest first = session_request(req, "/d", false);
  CHECK(first.library == "ratchet_hi() { echo hi; }\n");
  CHECK(first.child.find(". /d/l") != std::string::npos);
  CHECK(first.child.find("ratchet_hi()") == std::string::npos);
  CHECK(session_request(req, "/d", true).library.empty());
  // A script that calls none of it gets none of it.
  req.script = "true";
  CHECK_FALSE(library_from_file(req));
  CHECK(session_request(req, "/d", false).library.empty());
  CHECK(session_request(req, "/d", false).child.find("/d/l") == std::string::npos);
  // sudo to root reads DIR/l; sudo to another user cannot: the text goes inline.
  req.script = "ratchet_hi";
  req.become = Become{true, "", false, false};
  CHECK(library_from_file(req));
  req.become.user = "nobody";
  CHECK_FALSE(library_from_file(req));
  SessionRequest other = session_request(req, "/d", false);
  CHECK(other.library.empty());
  CHECK(other.child.find("ratchet_hi()") != std::string::npos);
}

TEST_CASE("session: nonces are 32 hex digits and the start line names its hello", "[transport]") {
  std::string n = new_session_nonce();
  CHECK(n.size() == 32);
  CHECK(n.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(new_session_nonce() != n);
  // Sent after the bootstrap's go line: the shell under its own name, marked
  // as ratchet's own (kSelfEnv), then the payload's end.
  CHECK(session_start_payload("h1") == "exec env RATCHET_SELF=1 /bin/sh -c " + util::shell_quote(session_script()) +
                                           " ratchet-session h1\n#ratchet-end");
  CHECK(session_ready_prefix("h1") == "ratchet-session h1 ready ");
}

TEST_CASE("session: a become shell starts through one sudo -k -A, as the login user's starter", "[transport]") {
  const std::string p = become_start_payload("h2", "app");
  const std::string head = "exec env RATCHET_SELF=1 /bin/sh -c " + util::shell_quote(become_script()) + " ratchet-become app ";
  REQUIRE(p.rfind(head, 0) == 0);
  CHECK(p.size() > head.size() + kPayloadEnd.size());
  CHECK(p.substr(p.size() - kPayloadEnd.size()) == kPayloadEnd);
  // ROOT: the login's LC_ALL back, then the session shell, marked as ratchet's own, named by its hello.
  const std::string root = p.substr(head.size(), p.size() - head.size() - kPayloadEnd.size());
  CHECK(root.find("exec env RATCHET_SELF=1 /bin/sh -c ") != std::string::npos);
  CHECK(root.find(" ratchet-session h2") != std::string::npos);
  CHECK(root.find("unset LC_ALL") != std::string::npos);
  // sudo: once, its password from the askpass helper (never from the stdin
  // the requests come on), asking even with a cached credential (-k).
  const std::string_view s = become_script();
  CHECK(s.find("sudo -k -A -p \"\" -H -u \"$1\" -- /bin/sh -c \"$2\"") != std::string_view::npos);
  CHECK(s.find("sudo -k -A -p \"\" -H -- /bin/sh -c \"$2\"") != std::string_view::npos);
  CHECK(s.find("-S") == std::string_view::npos);
  CHECK(s.find("SUDO_ASKPASS=") != std::string_view::npos);
  CHECK(become_start_payload("h2", "").rfind("exec env RATCHET_SELF=1 /bin/sh -c " + util::shell_quote(become_script()) +
                                                 " ratchet-become '' ",
                                             0) == 0);
}
