// The command runs as sent and ends when ratchet says (issue 26, items 1-3;
// cases R05, R27 in part), against a real sshd on 127.0.0.1 whose /etc is an
// overlay of its own (test users never reach this machine):
//  - a user for each login shell this machine has (sh, dash, bash, zsh, mksh,
//    fish, tcsh, csh, BusyBox ash) gets exactly what ratchet sent: quotes, `!`
//    and backslashes, a write through stdin, a holder scan;
//  - an rc file that replaces the shell, one that prints, and a key with a
//    forced command never make a check pass that never ran: `could not check:
//    the host did not run the command ratchet sent`, no action, no rung;
//  - a command that `exec`s, and what it started in a session of its own,
//    end at the deadline and at ^C.
// Each on both transports. Only processes these tests start are signalled.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

struct Lab {
  SshdHost sshd{"SSHD_HOST_ETC_OVERLAY=1"};
  std::string dir = temp_dir("ratchet-login");

  Lab() { chmod(dir.c_str(), 01777); }  // every test user writes its files here

  /// `command` as root on the host (inside its /etc overlay), through ssh(1).
  ShellResult as_root(const std::string& command) {
    return run_sh("ssh -o BatchMode=yes -o IdentitiesOnly=yes -o UserKnownHostsFile=" + sshd.known_hosts() +
                  " -i " + sshd.client_key() + " -p " + std::to_string(sshd.port()) + " root@127.0.0.1 " +
                  "'" + command + "'");
  }
  /// A user whose login shell is `shell`, with the test's key (after `key_options`).
  void add_user(const std::string& name, const std::string& shell, const std::string& key_options = "") {
    ShellResult r = as_root("useradd -m -p \"*\" -s " + shell + " " + name);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const std::string keys = sshd.dir() + "/authorized_keys/" + name;
    write_file(keys, key_options + (key_options.empty() ? "" : " ") + read_file(sshd.client_key() + ".pub"));
    chmod(keys.c_str(), 0644);
  }
  /// A bash user whose ~/.bashrc is `rc` (one line, written with echo "RC": escape `"` and `$`).
  void add_bash_user(const std::string& name, const std::string& rc) {
    add_user(name, "/bin/bash");
    ShellResult r = as_root("echo \"" + rc + "\" > /home/" + name + "/.bashrc");
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
  }
  std::string inventory(const std::string& user) {
    std::string p = dir + "/inv-" + user + ".toml";
    write_file(p, "[hosts.box]\naddress = \"127.0.0.1\"\nport = " + std::to_string(sshd.port()) + "\nuser = \"" +
                      user + "\"\nidentity = \"" + sshd.client_key() + "\"\nknown_hosts = \"" + sshd.known_hosts() +
                      "\"\n");
    return p;
  }
  std::string playbook(const std::string& name, const std::string& body) {
    std::string p = dir + "/" + name;
    write_file(p, body);
    return p;
  }
  std::string args(const std::string& pb, const std::string& user, const std::string& transport,
                   const std::string& t) {
    return " run " + pb + " -i " + inventory(user) + " -F none --transport " + transport + " --transcript " + t;
  }
  ShellResult run(const std::string& pb, const std::string& user, const std::string& transport, const std::string& t,
                  const std::string& extra = "") {
    return run_sh(std::string(RATCHET_BINARY) + args(pb, user, transport, t) + extra);
  }
};

json step_end(const std::string& t, const std::string& step) {
  for (const auto& ev : ratchet::transcript::read_transcript(t).events)
    if (ev["event"] == "step_end" && ev["step"] == step) return ev;
  return json();
}

std::string reason_of(const json& end) { return end.is_object() ? end.value("reason", std::string()) : ""; }

int actions(const std::string& t) {
  int n = 0;
  for (const auto& ev : ratchet::transcript::read_transcript(t).events)
    n += ev["event"] == "command" && ev.value("role", std::string()) != "check" &&
         ev.value("role", std::string()) != "become_probe";
  return n;
}

/// fn(user, transport, tag) for each user over each transport (tag: "USER-TRANSPORT"), named in INFO.
template <class F>
void each_login(std::initializer_list<const char*> users, std::initializer_list<const char*> transports, F fn) {
  for (const char* transport : transports)
    for (const char* user : users) {
      INFO(user << " over " << transport);
      fn(std::string(user), std::string(transport), std::string(user) + "-" + transport);
    }
}

/// ^C to a background run once `started` names a PID (its file has a line):
/// it exits 130, and the PIDs in each of `pid_files` end.
void interrupt_and_expect_ended(BackgroundRatchet& bg, const std::string& started,
                                std::initializer_list<std::string> pid_files);

/// True once /proc/PID is gone or a zombie, within 10 s.
bool ends(const std::string& pid_text) {
  if (pid_text.empty()) return false;
  return eventually([&] { return !pid_alive(std::stol(pid_text)); });
}

void interrupt_and_expect_ended(BackgroundRatchet& bg, const std::string& started,
                                std::initializer_list<std::string> pid_files) {
  REQUIRE(eventually([&] { return read_file(started).find('\n') != std::string::npos; }));
  kill(bg.pid, SIGINT);
  int status = bg.wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  for (const auto& f : pid_files) CHECK(ends(read_file(f).substr(0, read_file(f).find('\n'))));
}

}  // namespace

TEST_CASE("every login shell runs what ratchet sent: quotes, `!`, backslashes, stdin and the host library, on "
          "both transports",
          "[ssh][e2e]") {
  Lab lab;
  // BusyBox runs ash when called by that name; /etc is the host's own overlay.
  REQUIRE(lab.as_root("mkdir -p /etc/lab-shells && ln -sf /bin/busybox /etc/lab-shells/ash").code == 0);
  struct Shell {
    const char* user;
    const char* path;
  };
  int tried = 0;
  for (Shell s : {Shell{"u_sh", "/bin/sh"}, Shell{"u_dash", "/bin/dash"}, Shell{"u_bash", "/bin/bash"},
                  Shell{"u_zsh", "/usr/bin/zsh"}, Shell{"u_mksh", "/bin/mksh"}, Shell{"u_fish", "/usr/bin/fish"},
                  Shell{"u_tcsh", "/bin/tcsh"}, Shell{"u_csh", "/bin/bsd-csh"},
                  Shell{"u_ash", "/etc/lab-shells/ash"}}) {
    if (std::string(s.path) != "/etc/lab-shells/ash" && access(s.path, X_OK) != 0) continue;
    if (std::string(s.path) == "/etc/lab-shells/ash" && access("/bin/busybox", X_OK) != 0) continue;
    ++tried;
    lab.add_user(s.user, s.path);
    for (const char* transport : {"session", "channel"}) {
      INFO(s.user << " over " << transport);
      const std::string tag = std::string(s.user) + "-" + transport;
      const std::string note = lab.dir + "/note-" + tag, said = lab.dir + "/said-" + tag;
      std::string pb = lab.playbook(
          "shells-" + tag + ".toml",
          "name = \"shells\"\ntargets = [\"box\"]\n"
          "[[step]]\nid = \"note\"\nkind = \"write\"\npath = \"" + note + "\"\n"
          "content = '''it's \"quoted\", a!b, $HOME and a \\ backslash\n'''\n"
          "[[step]]\nid = \"said\"\nkind = \"run\"\n"
          "command = '''printf '%s|%s|%s\\n' \"$0\" 'a!b\\c' \"$#\" > " + said + "'''\n"
          "[[step]]\nid = \"there\"\nkind = \"verify\"\nfile_exists = [\"" + note + "\", \"" + said + "\"]\n");
      const std::string t = lab.dir + "/" + tag + ".jsonl";
      ShellResult r = lab.run(pb, s.user, transport, t);
      INFO(r.out << r.err);
      CHECK(r.code == 0);
      CHECK(read_file(note) == "it's \"quoted\", a!b, $HOME and a \\ backslash\n");
      CHECK(read_file(said) == "/bin/sh|a!b\\c|0\n");
      CHECK(step_end(t, "there").value("status", std::string()) == "ok");
    }
  }
  CHECK(tried >= 5);
}

TEST_CASE("an rc file that replaces the shell or prints, and a forced command: a check that never ran is `could "
          "not check`, and no action or rung follows",
          "[ssh][e2e]") {
  Lab lab;
  // R05: an account that cannot chsh execs zsh from .bashrc (Debian's bash
  // reads it for commands sshd runs); zsh reads stdin, finds no command of
  // its own arguments, and would exit 0.
  lab.add_user("carol", "/bin/bash");
  REQUIRE(lab.as_root("printf \"%s\\n\" \"echo carol-rc-says-hi\" \"[ -n \\\"\\$SSH_CONNECTION\\\" ] && exec "
                      "/usr/bin/zsh\" > /home/carol/.bashrc")
              .code == 0);
  // A restricted account: every command answers with the wrapper's own words and exit 0.
  lab.add_user("dave", "/bin/bash", "command=\"echo restricted account; exit 0\"");
  // An rc file that prints before every command: not a reason to refuse anything.
  lab.add_bash_user("erin", "echo erin-rc-line; echo erin-rc-err >&2");

  each_login({"carol", "dave", "erin"}, {"session", "channel"}, [&](const std::string& user, const std::string& transport,
                                                                     const std::string& tag) {
      const std::string flag = lab.dir + "/flag-" + tag;
      std::string pb = lab.playbook(
          "rc-" + tag + ".toml",
          "name = \"rc\"\ntargets = [\"box\"]\n"
          "[[step]]\nid = \"flag\"\nkind = \"run\"\ncheck = \"test -e " + flag + "\"\n"
          "command = \"touch " + flag + "-action\"\n"
          "  [[step.escalate]]\n  kind = \"run\"\n  command = \"touch " + flag + "-rung\"\n");
      const std::string t = lab.dir + "/" + tag + ".jsonl";
      ShellResult r = lab.run(pb, user, transport, t);
      INFO(r.out << r.err);
      if (user == "erin") {
        // It really ran: the check failed (no flag), the action made its file, its check then still fails, the rung runs.
        CHECK(std::filesystem::exists(flag + "-action"));
        return;
      }
      CHECK(r.code == 1);
      json end = step_end(t, "flag");
      CHECK(end.value("status", std::string()) == "failed");
      CHECK(reason_of(end).find("could not check: ") != std::string::npos);
      CHECK(reason_of(end).find("the host did not run the command ratchet sent") != std::string::npos);
      if (user == "dave") CHECK(reason_of(end).find("it printed `restricted account`") != std::string::npos);
      if (user == "carol") CHECK(reason_of(end).find("carol-rc-says-hi") != std::string::npos);
      CHECK(actions(t) == 0);
      CHECK_FALSE(std::filesystem::exists(flag + "-action"));
      CHECK_FALSE(std::filesystem::exists(flag + "-rung"));
  });
  // The probe says the same, and changes nothing.
  const std::string pb = lab.playbook("probe.toml", "name = \"rc\"\ntargets = [\"box\"]\n[[step]]\nid = \"flag\"\n"
                                                    "kind = \"run\"\ncheck = \"test -e " + lab.dir + "/x\"\n"
                                                    "command = \"touch " + lab.dir + "/probe-action\"\n");
  ShellResult p = run_sh(std::string(RATCHET_BINARY) + " plan " + pb + " -i " + lab.inventory("dave") +
                         " -F none --probe");
  INFO(p.out << p.err);
  CHECK((p.out + p.err).find("the host did not run the command ratchet sent") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(lab.dir + "/probe-action"));
}

TEST_CASE("a command that execs, and what it started in a session of its own, end at the deadline and at ^C",
          "[ssh][e2e]") {
  Lab lab;
  for (const char* transport : {"session", "channel"}) {
    INFO(transport);
    const std::string p1 = lab.dir + "/p1-" + transport, p2 = lab.dir + "/p2-" + transport;
    // The wrapper's argv is gone after the exec; the setsid'd sleep leaves the group and the session.
    const std::string command = "echo $$ > " + p1 + "; ( setsid sleep 300 & echo $! > " + p2 + " ); exec sleep 300";
    std::string pb = lab.playbook(std::string("exec-") + transport + ".toml",
                                  "name = \"exec\"\ntargets = [\"box\"]\n[[step]]\nid = \"server\"\nkind = \"run\"\n"
                                  "timeout = \"2s\"\ncommand = \"" + command + "\"\n");
    SECTION(std::string("the deadline over ") + transport) {
      const std::string t = lab.dir + "/deadline-" + transport + ".jsonl";
      ShellResult r = lab.run(pb, "root", transport, t);
      INFO(r.out << r.err);
      CHECK(r.code == 1);
      CHECK(ends(read_file(p1).substr(0, read_file(p1).find('\n'))));
      CHECK(ends(read_file(p2).substr(0, read_file(p2).find('\n'))));
    }
    SECTION(std::string("^C over ") + transport) {
      std::string long_pb = lab.playbook(std::string("exec-long-") + transport + ".toml",
                                         "name = \"exec\"\ntargets = [\"box\"]\n[[step]]\nid = \"server\"\n"
                                         "kind = \"run\"\ntimeout = \"5m\"\ncommand = \"" + command + "\"\n");
      const std::string t = lab.dir + "/int-" + transport + ".jsonl";
      BackgroundRatchet bg(lab.dir, lab.args(long_pb, "root", transport, t), std::string("int-") + transport);
      interrupt_and_expect_ended(bg, p2, {p1, p2});
    }
  }
}

TEST_CASE("^C while a slow rc file still runs sends nothing more: the command never starts, on both transports",
          "[ssh][e2e]") {
  Lab lab;
  // 3 s of rc file before every command the login shell runs (R05's slow variant).
  lab.add_bash_user("slow", "echo slow-rc-start > " + lab.dir + "/rc-started-\\$\\$; sleep 3");
  for (const char* transport : {"session", "channel"}) {
    INFO(transport);
    const std::string flag = lab.dir + "/ran-" + transport;
    std::string pb = lab.playbook(std::string("slow-") + transport + ".toml",
                                  "name = \"slow\"\ntargets = [\"box\"]\n[[step]]\nid = \"work\"\nkind = \"run\"\n"
                                  "command = \"touch " + flag + "; sleep 300\"\n");
    const std::string t = lab.dir + "/slow-" + transport + ".jsonl";
    BackgroundRatchet bg(lab.dir, lab.args(pb, "slow", transport, t), std::string("slow-") + transport);
    // The rc file is running (its shell wrote its file): ^C now, before its shell reads ratchet's line.
    REQUIRE(eventually([&] {
      for (const auto& e : std::filesystem::directory_iterator(lab.dir))
        if (e.path().filename().string().rfind("rc-started-", 0) == 0) return true;
      return false;
    }));
    kill(bg.pid, SIGINT);
    int status = bg.wait();
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    // Well past the rc file's 3 s: the command never ran.
    CHECK_FALSE(eventually([&] { return std::filesystem::exists(flag); }, 5000));
    for (const auto& e : std::filesystem::directory_iterator(lab.dir))
      if (e.path().filename().string().rfind("rc-started-", 0) == 0) std::filesystem::remove(e.path());
  }
}

TEST_CASE("a command that kills the session shell first, then execs, is still ended", "[ssh][e2e]") {
  Lab lab;
  const std::string p1 = lab.dir + "/p1";
  std::string pb = lab.playbook("kill-shell.toml",
                                "name = \"k\"\ntargets = [\"box\"]\n[[step]]\nid = \"server\"\nkind = \"run\"\n"
                                "timeout = \"20s\"\ncommand = \"echo $$ > " + p1 + "; kill -9 $PPID; exec sleep 300\"\n");
  const std::string t = lab.dir + "/kill-shell.jsonl";
  ShellResult r = lab.run(pb, "root", "session", t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(reason_of(step_end(t, "server")).find("the session shell ended during the command") != std::string::npos);
  CHECK(ends(read_file(p1).substr(0, read_file(p1).find('\n'))));
}

TEST_CASE("an rc file that reads stdin, all of a line or a few bytes, never runs a piece of the command",
          "[ssh][e2e]") {
  Lab lab;
  lab.add_bash_user("liner", "read -r line");
  lab.add_bash_user("nibbler", "read -r -n 3 x");
  each_login({"liner", "nibbler"}, {"channel", "session"}, [&](const std::string& user, const std::string& transport,
                                                                 const std::string& tag) {
      const std::string pwn = lab.dir + "/pwn-" + tag;
      // A multi-line check, and quotes that a cut could turn inside out.
      std::string pb = lab.playbook(
          "read-" + tag + ".toml",
          "name = \"read\"\ntargets = [\"box\"]\naudit_log = false\n[[step]]\nid = \"s\"\nkind = \"run\"\ntimeout = \"2s\"\n"
          "check = '''\necho start\ntouch " + pwn + "-line2\n'''\n"
          "command = '''echo \"x; touch " + pwn + "-quoted; echo 'y'\"'''\n");
      const std::string t = lab.dir + "/" + tag + ".jsonl";
      // The rc file waits for a line that never comes: bounded by the connect
      // timeout (the session shell) and the step's timeout (a channel command).
      ShellResult r = lab.run(pb, user, transport, t, " --connect-timeout 2s");
      INFO(r.out << r.err);
      CHECK(r.code == 1);
      CHECK(reason_of(step_end(t, "s")).find("the host did not run the command ratchet sent") != std::string::npos);
      CHECK_FALSE(std::filesystem::exists(pwn + "-line2"));
      CHECK_FALSE(std::filesystem::exists(pwn + "-quoted"));
  });
}

TEST_CASE("what an rc file prints is never the command's output: a check cannot match it, a write converges",
          "[ssh][e2e]") {
  Lab lab;
  lab.add_bash_user("chatty", "echo active; echo rc-err >&2");
  for (const char* transport : {"channel", "session"}) {
    INFO(transport);
    const std::string note = lab.dir + std::string("/note-") + transport;
    std::string pb = lab.playbook(std::string("chatty-") + transport + ".toml",
                                  "name = \"chatty\"\ntargets = [\"box\"]\n"
                                  "[[step]]\nid = \"status\"\nkind = \"verify\"\non_failure = \"continue\"\n"
                                  "command = 'cat " + lab.dir + "/no-such-status 2>/dev/null; true'\n"
                                  "stdout_matches = \"^active$\"\n"
                                  "[[step]]\nid = \"note\"\nkind = \"write\"\npath = \"" + note + "\"\n"
                                  "content = \"hello\\n\"\n");
    const std::string t = lab.dir + std::string("/chatty-") + transport + ".jsonl";
    ShellResult r = lab.run(pb, "chatty", transport, t);
    INFO(r.out << r.err);
    CHECK(step_end(t, "status").value("status", std::string()) == "failed");
    CHECK(step_end(t, "note").value("status", std::string()) == "changed");
    CHECK(read_file(note) == "hello\n");
    // The rc file's lines are on record, apart from any command's output.
    bool recorded = false;
    for (const auto& ev : ratchet::transcript::read_transcript(t).events)
      if (ev["event"] == "exit" && ev.value("login_output", std::string()).find("active") != std::string::npos)
        recorded = true;
    if (std::string(transport) == "channel") CHECK(recorded);
  }
}

TEST_CASE("a slow rc file that ignores SIGPIPE: after the deadline or ^C the command never runs", "[ssh][e2e]") {
  Lab lab;
  lab.add_bash_user("stubborn", "trap \\\"\\\" PIPE TERM HUP INT; sleep 6");
  const std::string flag = lab.dir + "/late";
  std::string pb = lab.playbook("stubborn.toml", "name = \"late\"\ntargets = [\"box\"]\n[[step]]\nid = \"s\"\n"
                                                 "kind = \"run\"\ntimeout = \"1s\"\ncommand = \"touch " + flag + "\"\n");
  const std::string t = lab.dir + "/stubborn.jsonl";
  ShellResult r = lab.run(pb, "stubborn", "channel", t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  // Well past the rc file's 6 s: the command never came, so it never ran.
  CHECK_FALSE(eventually([&] { return std::filesystem::exists(flag); }, 9000));
}

TEST_CASE("^C over a channel stops the setsid grandchild too, for a login sshd may signal", "[ssh][e2e]") {
  Lab lab;
  lab.add_user("plain", "/bin/sh");
  const std::string p1 = lab.dir + "/gc1", p2 = lab.dir + "/gc2";
  std::string pb = lab.playbook("gc.toml", "name = \"gc\"\ntargets = [\"box\"]\n[[step]]\nid = \"s\"\nkind = \"run\"\n"
                                           "timeout = \"5m\"\ncommand = \"echo $$ > " + p1 + "; ( setsid sleep 300 & "
                                           "echo $! > " + p2 + " ); exec sleep 301\"\n");
  const std::string t = lab.dir + "/gc.jsonl";
  BackgroundRatchet bg(lab.dir, lab.args(pb, "plain", "channel", t), "gc");
  interrupt_and_expect_ended(bg, p2, {p1, p2});
}
