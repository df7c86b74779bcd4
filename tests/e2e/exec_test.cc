// `ratchet exec` over several hosts through the binary, against loopback sshd
// hosts: line prefixes, the recap, --json, exit codes (one host failing -> 1,
// one unreachable -> 3), --lock and --timeout over a group, the single host's
// byte-exact output, and --user/--port/--identity for ad hoc targets.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"
#include "util/shell.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

/// Three sshd hosts a, b, c in group `lab`, each with its own lock_path and
/// audit_log under the test's directory; `dead` refuses connections.
struct Lab {
  std::vector<std::unique_ptr<SshdHost>> sshd;
  std::string dir = temp_dir("ratchet-exec");
  std::string inv = dir + "/inv.toml";

  Lab() {
    std::string text;
    const char* names[] = {"a", "b", "c"};
    for (int i = 0; i < 3; ++i) {
      sshd.push_back(std::make_unique<SshdHost>());
      const auto& s = *sshd.back();
      text += fmt::format(
          "[hosts.{0}]\naddress = \"127.0.0.1\"\nport = {1}\nuser = \"root\"\nidentity = \"{2}\"\n"
          "known_hosts = \"{3}\"\nlock_path = \"{4}/{0}.lock\"\naudit_log = \"{4}/{0}-audit.log\"\n\n",
          names[i], s.port(), s.client_key(), s.known_hosts(), dir);
    }
    text += fmt::format("[hosts.dead]\naddress = \"127.0.0.1\"\nport = {}\nuser = \"root\"\n\n", free_port());
    text += "[groups]\nlab = [\"a\", \"b\", \"c\"]\nwith_dead = [\"a\", \"dead\"]\none = [\"a\"]\n";
    std::ofstream(inv) << text;
  }
  int port(size_t i) const { return sshd[i]->port(); }
  ShellResult exec(const std::string& args) const {
    return run_sh(std::string(RATCHET_BINARY) + " exec -i " + inv + " -F none " + args);
  }
};

std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  std::sort(out.begin(), out.end());
  return out;
}

/// The recap row of `host` in `text` ("" = none): the line that starts with the name and a blank.
std::string recap_row(const std::string& text, const std::string& host) {
  auto at = text.find("\nRECAP\n");
  if (at == std::string::npos) return "";
  std::istringstream in(text.substr(at));
  for (std::string l; std::getline(in, l);)
    if (l.rfind(host + " ", 0) == 0) return l;
  return "";
}

}  // namespace

TEST_CASE("exec over a group prefixes each line with its host and prints the recap", "[ssh][e2e][exec]") {
  Lab lab;
  auto r = lab.exec("lab -- 'echo hello; echo warn >&2; printf no-newline'");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(sorted_lines(r.out) == std::vector<std::string>{"a | hello", "a | no-newline", "b | hello",
                                                        "b | no-newline", "c | hello", "c | no-newline"});
  // The recap holds what an ad hoc command has (exit, time, output bytes), not a
  // playbook's step columns (changed, escalated).
  CHECK(r.err.find("\nRECAP\nhost  status          exit     time     stdout     stderr\n") != std::string::npos);
  CHECK(r.err.find("changed") == std::string::npos);
  CHECK(r.err.find("escalated") == std::string::npos);
  for (const char* h : {"a", "b", "c"}) {
    CHECK(r.err.find(std::string(h) + " | warn\n") != std::string::npos);
    std::string row = recap_row(r.err, h);
    CHECK(row.rfind(std::string(h) + "     ok                 0 ", 0) == 0);
    CHECK(row.find("       16 B        5 B") != std::string::npos);  // "hello\nno-newline", "warn\n"
  }
  CHECK(recap_row(r.err, "total") == "total 3 host(s): 3 ok");
  CHECK(r.err.find("\nok (exit 0) in ") != std::string::npos);
  // A host's lines stay together, in its order.
  std::string a_lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);)
    if (l.rfind("a | ", 0) == 0) a_lines += l + "\n";
  CHECK(a_lines == "a | hello\na | no-newline\n");
}

TEST_CASE("exec over a group exits 1 when one host's command fails and 3 when one is unreachable", "[ssh][e2e][exec]") {
  Lab lab;
  // Only b's command fails: its sshd's port ends SSH_CONNECTION.
  auto r = lab.exec(fmt::format("lab -- '[ \"${{SSH_CONNECTION##* }}\" = {} ] && exit 3; echo fine'", lab.port(1)));
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(sorted_lines(r.out) == std::vector<std::string>{"a | fine", "c | fine"});
  CHECK(recap_row(r.err, "b").find("failed") != std::string::npos);
  CHECK(recap_row(r.err, "b").find("exit 3") != std::string::npos);
  CHECK(recap_row(r.err, "a").find(" ok ") != std::string::npos);
  CHECK(r.err.find("failed (exit 1)") != std::string::npos);

  auto u = lab.exec("with_dead -- echo up");
  INFO(u.out << u.err);
  CHECK(u.code == 3);
  CHECK(u.out == "a | up\n");
  CHECK(recap_row(u.err, "dead").find("unreachable") != std::string::npos);
  CHECK(recap_row(u.err, "dead").find("unreachable        -") != std::string::npos);  // no exit: it never ran
  CHECK(recap_row(u.err, "total") == "total 2 host(s): 1 ok, 1 unreachable");
  // A list of names works as a group does; a failure outranks an unreachable host (1 before 3).
  auto both = lab.exec(fmt::format("b,dead -- '[ \"${{SSH_CONNECTION##* }}\" = {} ] && exit 3; true'", lab.port(1)));
  CHECK(both.code == 1);
  // --limit narrows the group.
  auto lim = lab.exec("lab --limit a,c -- echo x");
  CHECK(lim.code == 0);
  CHECK(sorted_lines(lim.out) == std::vector<std::string>{"a | x", "c | x"});
  // An unknown name is a usage error before anything connects.
  auto bad = lab.exec("labb -- true");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("labb is not a host or group of " + lab.inv + " (did you mean `lab`?)") != std::string::npos);
}

TEST_CASE("exec --json carries every host's status, exit code and output", "[ssh][e2e][exec]") {
  Lab lab;
  std::string t = lab.dir + "/t.jsonl";
  auto r = lab.exec(fmt::format("lab --json --forks 2 --transcript {} -- "
                                "'echo out; echo err >&2; [ \"${{SSH_CONNECTION##* }}\" = {} ] && exit 5; true'",
                                t, lab.port(2)));
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  auto j = json::parse(r.out);  // stdout holds the summary alone
  CHECK(j["exit_code"] == 1);
  CHECK(j["status"] == "failed");
  CHECK(j["transcript"] == t);
  REQUIRE(j["hosts"].size() == 3);
  CHECK(j["hosts"][0]["host"] == "a");  // inventory order, whichever ended first
  CHECK(j["hosts"][0]["status"] == "ok");
  CHECK(j["hosts"][0]["exit_code"] == 0);
  CHECK(j["hosts"][0]["stdout"] == "out\n");
  CHECK(j["hosts"][0]["stderr"] == "err\n");
  CHECK(j["hosts"][2]["host"] == "c");
  CHECK(j["hosts"][2]["status"] == "failed");
  CHECK(j["hosts"][2]["exit_code"] == 5);
  CHECK(j["hosts"][2]["reason"] == "exit 5");
  CHECK(r.err.find("RECAP") != std::string::npos);  // for a person, on stderr
  CHECK(r.err.find("| out") == std::string::npos);   // the output is in the JSON only
  // The transcript: one run, a command and exit per host, run_end with each host's status.
  auto tr = ratchet::transcript::read_transcript(t);
  CHECK(tr.note.empty());
  REQUIRE_FALSE(tr.events.empty());
  CHECK(tr.events.front()["targets"] == json::array({"a", "b", "c"}));
  int exits = 0;
  for (const auto& e : tr.events) exits += e["event"] == "exit";
  CHECK(exits == 3);
  CHECK(tr.events.back()["event"] == "run_end");
  CHECK(tr.events.back()["exit_code"] == 1);
  CHECK(tr.events.back()["hosts"] == json({{"a", "ok"}, {"b", "ok"}, {"c", "failed"}}));
}

TEST_CASE("exec on one host keeps its output byte for byte and its exit status, a group of one does not", "[ssh][e2e][exec]") {
  Lab lab;
  auto r = lab.exec("a -- 'printf \"x\\033[2Jy\\n\"; printf tail; exit 7'");
  CHECK(r.code == 7);
  CHECK(r.out == "x\033[2Jy\ntail");
  CHECK(r.err.empty());
  auto g = lab.exec("one -- 'printf tail; exit 7'");
  CHECK(g.code == 1);
  CHECK(g.out == "a | tail\n");
  CHECK(recap_row(g.err, "a").find("exit 7") != std::string::npos);
}

TEST_CASE("exec --timeout and --lock work over a group", "[ssh][e2e][exec]") {
  Lab lab;
  auto t = lab.exec("a,b --timeout 1s -- 'echo started; sleep 30'");
  INFO(t.out << t.err);
  CHECK(t.code == 1);
  CHECK(sorted_lines(t.out) == std::vector<std::string>{"a | started", "b | started"});
  CHECK(recap_row(t.err, "a").find("timed out after 1s") != std::string::npos);
  CHECK(t.err.find("ratchet: b: timed out after 1s") != std::string::npos);
  // b's lock is stale (its holder's session is gone): b runs nothing, a and c run.
  std::filesystem::create_directories(lab.dir + "/b.lock");
  std::ofstream(lab.dir + "/b.lock/owner") << "old-run someone@elsewhere 2026-01-01T00:00:00Z 999999 1\n";
  auto l = lab.exec("lab --lock -- 'echo ran'");
  INFO(l.out << l.err);
  CHECK(l.code == 1);
  CHECK(sorted_lines(l.out) == std::vector<std::string>{"a | ran", "c | ran"});
  CHECK(l.err.find("ratchet: b: stale lock") != std::string::npos);
  CHECK(recap_row(l.err, "b").find("failed") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(lab.dir + "/a.lock"));  // released after the command
  auto broke = lab.exec("lab --lock --break-lock -- 'echo ran'");
  CHECK(broke.code == 0);
  CHECK(sorted_lines(broke.out) == std::vector<std::string>{"a | ran", "b | ran", "c | ran"});
  // Each host wrote its audit lines (exec's mode), the refused one too.
  std::ifstream audit(lab.dir + "/b-audit.log");
  int lines = 0;
  for (std::string l2; std::getline(audit, l2);) lines += json::parse(l2)["mode"] == "exec";
  CHECK(lines == 3);
}

TEST_CASE("exec --user --port --identity fill in what ad hoc targets leave out", "[ssh][e2e][exec]") {
  SshdHost one, two;
  std::string dir = temp_dir("ratchet-exec-adhoc");
  // one's client key may log in to two as well; one known_hosts file for both.
  { std::ifstream k(one.client_key() + ".pub"); std::ofstream(two.dir() + "/authorized_keys/root", std::ios::app) << k.rdbuf(); }
  std::string kh = dir + "/known_hosts";
  std::ofstream(kh) << one.known_hosts_line() << "\n" << two.known_hosts_line() << "\n";
  const std::string bin = std::string(RATCHET_BINARY) + " exec -F none --known-hosts " + kh;
  const std::string p1 = std::to_string(one.port()), p2 = std::to_string(two.port());
  auto r = run_sh(bin + " --target 127.0.0.1 --port " + p1 + " --user root --identity " + one.client_key() +
                  " -- whoami");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out == "root\n");  // one host: as ssh prints it
  // Two targets: the spec's own port and user win over --port and --user.
  auto two_hosts = run_sh(bin + " --target 127.0.0.1 --target root@127.0.0.1:" + p2 + " --port " + p1 +
                          " --user root --identity " + one.client_key() + " -- whoami");
  INFO(two_hosts.out << two_hosts.err);
  CHECK(two_hosts.code == 0);
  std::vector<std::string> want{"127.0.0.1:" + p1 + " | root", "127.0.0.1:" + p2 + " | root"};
  std::sort(want.begin(), want.end());
  CHECK(sorted_lines(two_hosts.out) == want);
  // --user is applied: a user with no authorized key is refused (exit 3).
  auto nobody = run_sh(bin + " --target 127.0.0.1 --port " + p1 + " --user nobody --identity " + one.client_key() +
                       " -- true");
  CHECK(nobody.code == 3);
  // --identity is applied: another key is refused.
  REQUIRE(run_sh("ssh-keygen -q -t ed25519 -N '' -f " + dir + "/other").code == 0);
  auto other = run_sh("SSH_AUTH_SOCK= " + bin + " --target root@127.0.0.1:" + p1 + " --identity " + dir +
                      "/other -- true");
  CHECK(other.code == 3);
  // Bad input: a key file that cannot be read, a port out of range, --user for an inventory host.
  auto missing = run_sh(bin + " --target 127.0.0.1 --identity " + dir + "/none -- true");
  CHECK(missing.code == 2);
  CHECK(missing.err.find("--identity " + dir + "/none: cannot read the key file") != std::string::npos);
  CHECK(run_sh(bin + " --target 127.0.0.1 --port 70000 -- true").code == 2);
  std::ofstream(dir + "/inv.toml") << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << p1 << "\n";
  auto inv_user = run_sh(bin + " box -i " + dir + "/inv.toml --user root -- true");
  CHECK(inv_user.code == 2);
  CHECK(inv_user.err.find("are for ad hoc hosts") != std::string::npos);
}

TEST_CASE("exec: one channel per command by default, the session shell on --transport session", "[ssh][e2e][exec]") {
  Lab lab;
  // The command's parent: sshd's side of a channel, or the session shell (its argv names it).
  const std::string parent = "one -- 'tr \"\\000\" \" \" < /proc/$PPID/cmdline'";
  auto r = lab.exec(parent);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("sshd: ") != std::string::npos);
  CHECK(r.out.find("ratchet-session") == std::string::npos);
  r = lab.exec("--transport session " + parent);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("ratchet-session") != std::string::npos);
}

TEST_CASE("exec on several hosts: stdout escaped on a terminal, as sent when piped", "[ssh][e2e][exec]") {
  Lab lab;
  const std::string cmd = " -- 'printf \"\\033[31mred\\n\"'";
  auto piped = lab.exec("lab --limit a,b" + cmd);
  INFO(piped.out << piped.err);
  REQUIRE(piped.code == 0);
  CHECK(piped.out.find("a | \x1b[31mred\n") != std::string::npos);
  // On a terminal (script(1) gives the command one): no host byte drives it.
  auto tty = run_sh("script -qec " +
                    ratchet::util::shell_quote(std::string(RATCHET_BINARY) + " exec -i " + lab.inv +
                                                  " -F none lab --limit a,b" + cmd + " 2>/dev/null") +
                    " /dev/null");
  INFO(tty.out << tty.err);
  REQUIRE(tty.code == 0);
  CHECK(tty.out.find("a | \\x1b[31mred") != std::string::npos);
  CHECK(tty.out.find('\x1b') == std::string::npos);
}
