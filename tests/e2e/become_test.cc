// become on a real systemd host: an unprivileged login user runs the whole
// gpu-release runbook through sudo — a NOPASSWD user with `sudo -n`, a password
// user with the password given once (file or environment) and sent to sudo on
// stdin only after `sudo -n` said it is needed. A missing or wrong password
// fails fast and clearly; the password appears nowhere: not in the transcript,
// not in ratchet's output, not in any process's arguments on either machine.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>
#include <cstdlib>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/systemd_fixture.h"
#include "support/tmux.h"
#include "transcript/reader.h"

using ratchet::testing::run_sh;
using ratchet::testing::SystemdHost;
using nlohmann::json;

namespace {

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

/// A process's argv as bytes; "" when it is gone (a racing exit is normal here).
std::string cmdline(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

/// Samples every process's command line (this machine and, through the shared
/// /proc, the nspawn host's) every few ms while alive; remembers any that holds
/// `needle`.
class ArgvWatch {
 public:
  explicit ArgvWatch(std::string needle) : needle_(std::move(needle)) {
    th_ = std::thread([this] {
      while (!stop_) {
        if (DIR* d = opendir("/proc")) {
          while (dirent* e = readdir(d)) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
            std::string args = cmdline(std::string("/proc/") + e->d_name + "/cmdline");
            ++samples_;
            if (args.find(needle_) != std::string::npos) {
              std::lock_guard<std::mutex> l(mu_);
              hits_.insert(args);
            }
          }
          closedir(d);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  }
  ~ArgvWatch() { finish(); }
  void finish() {
    stop_ = true;
    if (th_.joinable()) th_.join();
  }
  std::set<std::string> hits() {
    std::lock_guard<std::mutex> l(mu_);
    return hits_;
  }
  long samples() const { return samples_; }

 private:
  std::string needle_;
  std::atomic<bool> stop_{false};
  std::atomic<long> samples_{0};
  std::mutex mu_;
  std::set<std::string> hits_;
  std::thread th_;
};

int count_of(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

/// Whether every PID listed in `file` on the host is gone within 5 s; *alive: those left.
bool listed_pids_end(SystemdHost& host, const std::string& file, std::string* alive) {
  return ratchet::testing::eventually([&] {
    alive->clear();
    host.ssh("for p in $(cat " + file + "); do test -d /proc/$p && echo $p; done; true", alive);
    return alive->empty();
  }, 5000);
}

/// Starts ratchet with `args` (output to /dev/null, `env` added to its
/// environment: never to an argv); returns its PID.
pid_t start_ratchet(std::vector<std::string> args, const std::map<std::string, std::string>& env = {}) {
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 1);
    dup2(null, 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    args.insert(args.begin(), RATCHET_BINARY);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

/// Once `file` on the host lists two PIDs (the command started), ^C to the
/// ratchet `pid`; returns its wait status, *started whether the file came.
int interrupt_when_listed(SystemdHost& host, pid_t pid, const std::string& file, bool* started) {
  *started = ratchet::testing::eventually([&] {
    std::string pids;
    host.ssh("cat " + file + " 2>/dev/null", &pids);
    return count_of(pids, " ") == 1;
  });
  if (*started) usleep(300'000);
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

std::string user_inventory(SystemdHost& host, const std::string& dir, const std::string& user) {
  std::string p = dir + "/inv-" + user + ".toml";
  std::ofstream(p) << "[hosts.lab]\naddress = \"127.0.0.1\"\nport = " << host.port() << "\nuser = \""
                   << user << "\"\nidentity = \"" << host.client_key() << "\"\nknown_hosts = \""
                   << host.known_hosts() << "\"\nbecome = true\n\n[groups]\ngpu = [\"lab\"]\n";
  return p;
}

std::string gpu_release(const std::string& inv, const std::string& glob, const std::string& extra) {
  return std::string(RATCHET_BINARY) + " run " + RATCHET_SOURCE_DIR + "/playbooks/gpu-release.toml -i " +
         inv + " -F none -e 'devices=[\"" + glob + "\"]' " + extra;
}

std::map<std::string, std::string> statuses(const std::string& transcript) {
  std::map<std::string, std::string> out;
  for (const auto& e : ratchet::transcript::read_transcript(transcript).events)
    if (e["event"] == "step_end") out[e["step"]] = e["status"];
  return out;
}

/// gpu-release as `user` (with `extra` options) frees the stand-in devices and
/// leaves the unit enabled and active; returns the transcript's text.
std::string run_as(SystemdHost& host, const std::string& dir, const std::string& user,
                   const std::string& extra, std::string* output) {
  auto scene = host.stage_inference();
  std::string t = dir + "/" + user + ".jsonl";
  auto r = run_sh(gpu_release(user_inventory(host, dir, user), scene.at("DEVICE_GLOB"),
                              extra + " --transcript " + t));
  INFO(user << ": " << r.out << r.err);
  CHECK(r.code == 0);
  *output = r.out + r.err;
  auto st = statuses(t);
  CHECK(st["kill_server"] == "changed");
  CHECK(st["gpus_free"] == "escalated");
  CHECK(st["notes"] == "changed");
  CHECK(st["active"] == "ok");
  std::string out;
  host.ssh("systemctl is-enabled inference; systemctl is-active inference; stat -c '%U' /root/production.md", &out);
  CHECK(out == "enabled\nactive\nroot\n");
  for (const char* k : {"SERVER_PID", "CHILD_PID", "WORKER_PID"}) {
    std::string alive;
    host.ssh("test -d /proc/" + scene.at(k) + " && echo alive || true", &alive);
    CHECK(alive.empty());
  }
  return slurp(t);
}

}  // namespace

TEST_CASE("become: the whole gpu-release runbook as a NOPASSWD sudo user", "[systemd][e2e][become]") {
  SystemdHost host;
  REQUIRE(run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " alice nopasswd").code == 0);
  std::string dir = ratchet::testing::temp_dir("ratchet-become");
  std::string output;
  std::string text = run_as(host, dir, "alice", "", &output);
  CHECK(text.find("\"user\":\"alice\"") != std::string::npos);     // logged in as alice
  CHECK(text.find("exec sudo -n -H -- ") != std::string::npos);     // every command through sudo -n
  CHECK(text.find("\"become_password\":true") == std::string::npos);
}

TEST_CASE("become: a step's become = false runs as the login user on a become = true host",
          "[systemd][e2e][become]") {
  SystemdHost host;
  REQUIRE(run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " dave nopasswd").code == 0);
  std::string dir = ratchet::testing::temp_dir("ratchet-become-off");
  std::string inv = user_inventory(host, dir, "dave");  // the host says become = true
  std::string pb = dir + "/who.toml";
  std::ofstream(pb) << "name = \"who\"\n[[step]]\nid = \"as_login\"\nkind = \"run\"\nbecome = false\n"
                       "command = \"id -un\"\n[[step]]\nid = \"as_host_says\"\nkind = \"run\"\n"
                       "command = \"id -un\"\n";
  std::string t = dir + "/who.jsonl";
  auto r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inv + " -F none --transcript " + t);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  std::map<std::string, std::string> out;
  for (const auto& e : ratchet::transcript::read_transcript(t).events)
    if (e["event"] == "output" && e["stream"] == "stdout") out[e["step"]] = e.value("data", "");
  CHECK(out["as_login"] == "dave\n");
  CHECK(out["as_host_says"] == "root\n");
  auto p = run_sh(std::string(RATCHET_BINARY) + " plan " + pb + " -i " + inv + " -F none");
  CHECK(p.out.find("1. as_login [run] as_login\n") != std::string::npos);
  CHECK(p.out.find("2. as_host_says [run] as_host_says  (as root via sudo)\n") != std::string::npos);
}

TEST_CASE("become: the whole gpu-release runbook as a password sudo user, the password leaks nowhere",
          "[systemd][e2e][become]") {
  SystemdHost host;
  const std::string pw = "Pw-7f3a9c-hunter2";
  REQUIRE(run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " bob password=" + pw).code == 0);
  std::string dir = ratchet::testing::temp_dir("ratchet-become");
  std::ofstream(dir + "/pw") << pw << "\n";

  SECTION("without a password: fails fast, names the options, runs nothing as root") {
    auto scene = host.stage_inference();
    auto t0 = std::chrono::steady_clock::now();
    auto r = run_sh(gpu_release(user_inventory(host, dir, "bob"), scene.at("DEVICE_GLOB"),
                                "--transcript " + dir + "/none.jsonl"));
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK(secs < 20);
    CHECK(r.out.find("become: sudo asks for a password to run as root; give --ask-become-pass") !=
          std::string::npos);
    auto st = statuses(dir + "/none.jsonl");
    CHECK(st["stop"] == "failed");
    CHECK(st["kill_server"] == "skipped");  // stopped at the first step: the rest listed as skipped, never run
  }

  SECTION("a wrong password: a clear failure within seconds, not a hang") {
    auto scene = host.stage_inference();
    auto t0 = std::chrono::steady_clock::now();
    auto r = run_sh("BECOME_PW=wrong-" + pw + " " +
                    gpu_release(user_inventory(host, dir, "bob"), scene.at("DEVICE_GLOB"),
                                "--become-password-env BECOME_PW --transcript " + dir + "/wrong.jsonl"));
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK(secs < 30);
    CHECK(r.out.find("become: sudo rejected the become password (to run as root)") != std::string::npos);
    CHECK((r.out + r.err).find("wrong-" + pw) == std::string::npos);
    CHECK(slurp(dir + "/wrong.jsonl").find(pw) == std::string::npos);
    std::string alive;  // nothing was killed
    host.ssh("test -d /proc/" + scene.at("SERVER_PID") + " && echo alive", &alive);
    CHECK(alive == "alive\n");
  }

  SECTION("asked once on the terminal (-K): not echoed, the runbook completes") {
    if (ratchet::testing::run_sh("command -v tmux").code != 0) FAIL("tmux is not installed");
    auto scene = host.stage_inference();
    ratchet::testing::Tmux tmux;
    REQUIRE(tmux.start(gpu_release(user_inventory(host, dir, "bob"), scene.at("DEVICE_GLOB"),
                                   "-K --transcript " + dir + "/k.jsonl") + "; echo EXIT=$?; sleep 600"));
    REQUIRE(ratchet::testing::eventually([&] { return tmux.capture().find("BECOME password:") != std::string::npos; }, 20'000));
    tmux.type(pw);
    std::string screen;
    bool done = ratchet::testing::eventually([&] {
      screen = tmux.capture();
      return screen.find("EXIT=") != std::string::npos;
    }, 120'000);
    INFO(screen);
    REQUIRE(done);
    CHECK(screen.find("EXIT=0") != std::string::npos);
    CHECK(screen.find(pw) == std::string::npos);  // never echoed
    CHECK(count_of(screen, "BECOME password:") == 1);  // asked once for the whole run
    CHECK(slurp(dir + "/k.jsonl").find(pw) == std::string::npos);
    CHECK(statuses(dir + "/k.jsonl")["active"] == "ok");
  }

  SECTION("the right password from a file: the runbook completes; the password is nowhere") {
    ArgvWatch watch(pw);
    std::string output;
    std::string text = run_as(host, dir, "bob", "--become-password-file " + dir + "/pw", &output);
    watch.finish();
    CHECK(watch.samples() > 100);
    for (const auto& h : watch.hits()) {
      std::string shown = h;
      for (auto& c : shown) c = c == '\0' ? ' ' : c;
      UNSCOPED_INFO("argv holding the password: " << shown);
    }
    CHECK(watch.hits().empty());
    CHECK(text.find(pw) == std::string::npos);
    CHECK(output.find(pw) == std::string::npos);
    CHECK(text.find("exec sudo -k -S -p '' -H -- ") != std::string::npos);
    CHECK(text.find("\"become_password\":true") != std::string::npos);
    CHECK(text.find("\"user\":\"bob\"") != std::string::npos);
    // the host's own logs do not hold it either
    std::string logs;
    host.ssh("journalctl --no-pager -q 2>/dev/null | grep -c -F -- '" + pw + "' || true", &logs);
    CHECK(logs == "0\n");
  }

  SECTION("the right password over --transport channel: the same, one exec channel per command") {
    ArgvWatch watch(pw);
    std::string output;
    std::string text = run_as(host, dir, "bob", "--transport channel --become-password-file " + dir + "/pw", &output);
    watch.finish();
    CHECK(watch.hits().empty());
    CHECK(text.find(pw) == std::string::npos);
    CHECK(output.find(pw) == std::string::npos);
    CHECK(text.find("exec sudo -k -S -p '' -H -- ") != std::string::npos);
  }
}

TEST_CASE("become: ^C stops a command running under sudo, children included", "[systemd][e2e][become]") {
  const std::string transport = GENERATE("session", "channel");
  SystemdHost host;
  REQUIRE(run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " carol nopasswd").code == 0);
  std::string dir = ratchet::testing::temp_dir("ratchet-become-int");
  std::string pb = dir + "/p.toml";
  // The command runs as root under sudo: neither sshd's signal request nor sudo
  // would carry a TERM to its background child.
  std::ofstream(pb) << "name = \"int\"\n[[step]]\nid = \"slow\"\nkind = \"run\"\nbecome = true\n"
                       "command = \"sleep 60 & echo $$ $! > /root/int-pids; wait\"\n";
  std::string t = dir + "/t.jsonl";
  pid_t pid = start_ratchet({"run", pb, "-i", user_inventory(host, dir, "carol"), "-F", "none", "--transport",
                              transport, "--transcript", t});
  bool started = false;
  const int status = interrupt_when_listed(host, pid, "/root/int-pids", &started);
  REQUIRE(started);
  std::string pids;
  host.ssh("cat /root/int-pids", &pids);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  std::string alive = "?";
  bool gone = listed_pids_end(host, "/root/int-pids", &alive);
  INFO("still alive: " << alive << " (of " << pids << ")");
  CHECK(gone);
  auto tr = ratchet::transcript::read_transcript(t);
  REQUIRE_FALSE(tr.events.empty());
  CHECK(tr.events.back()["status"] == "interrupted");
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_CASE("become under a German locale: the password is still tried, and a sudoers refusal names the argv to allow",
          "[systemd][e2e][become]") {
  SystemdHost host;
  const std::string pw = "Pw-de-41c9e2";
  std::string dir = ratchet::testing::temp_dir("ratchet-become-de");
  for (const char* u : {"gerda", "nora"}) {
    REQUIRE(run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " " + u + " password=" + pw).code == 0);
    // sudo speaks German to these logins: "Ein Passwort ist notwendig" (the old probe read English only).
    std::string out;
    REQUIRE(host.ssh(std::string("printf 'export LANGUAGE=de LANG=C.UTF-8\\n' > /home/") + u + "/.bashrc", &out) == 0);
  }
  // nora may run /usr/bin/id as root, nothing else: ratchet's /bin/sh is refused.
  std::string out;
  REQUIRE(host.ssh("printf 'nora ALL=(ALL:ALL) /usr/bin/id\\n' > /etc/sudoers.d/90-nora", &out) == 0);
  {
    std::string check, err;
    host.ssh("su - gerda -c 'sudo -n true' 2>&1; true", &check, &err);
    INFO(check);
    CHECK(check.find("Passwort") != std::string::npos);  // the host really is German
  }
  std::string pb = dir + "/pb.toml";
  ratchet::testing::write_file(pb, "name = \"de\"\ntargets = [\"gpu\"]\n[[step]]\nid = \"whoami\"\nkind = \"run\"\n"
                                   "command = \"id -u\"\n");
  auto run = [&](const std::string& user, const std::string& t) {
    return run_sh("BECOME_PW=" + pw + " " + RATCHET_BINARY + " run " + pb + " -i " + user_inventory(host, dir, user) +
                  " -F none --become-password-env BECOME_PW --transcript " + t);
  };
  auto r = run("gerda", dir + "/gerda.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(statuses(dir + "/gerda.jsonl")["whoami"] == "changed");
  CHECK(slurp(dir + "/gerda.jsonl").find("\"data\":\"0\\n\"") != std::string::npos);  // ran as root

  r = run("nora", dir + "/nora.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  std::string reason;
  for (const auto& e : ratchet::transcript::read_transcript(dir + "/nora.jsonl").events)
    if (e["event"] == "step_end" && e["step"] == "whoami") reason = e.value("reason", "");
  CHECK(reason.rfind("become: sudo does not let this login user run commands as root: ratchet runs "
                     "`sudo -k -S -p '' -H -- /bin/sh -c ...` for every command, so the sudoers rule "
                     "must allow /bin/sh as root (sudo said: ",
                     0) == 0);
  CHECK(reason.find("nora") != std::string::npos);  // sudo's own words, in English under LC_ALL=C
}

TEST_CASE("become: a command that execs under sudo ends at its deadline", "[systemd][e2e][become]") {
  const std::string transport = GENERATE("session", "channel");
  SystemdHost host;
  REQUIRE(run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " carol nopasswd").code == 0);
  std::string dir = ratchet::testing::temp_dir("ratchet-become-exec");
  std::string pb = dir + "/p.toml";
  // `exec` replaces the wrapper's argv: the watchdog knows the command by its PID and start time.
  std::ofstream(pb) << "name = \"exec\"\n[[step]]\nid = \"server\"\nkind = \"run\"\nbecome = true\ntimeout = \"2s\"\n"
                       "command = \"echo $$ > /root/exec-pid; exec sleep 300\"\n";
  std::string t = dir + "/t.jsonl";
  auto r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + user_inventory(host, dir, "carol") +
                  " -F none --transport " + transport + " --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  std::string pid;
  host.ssh("cat /root/exec-pid", &pid);
  REQUIRE(!pid.empty());
  pid = pid.substr(0, pid.find('\n'));
  std::string alive = "?";
  CHECK(ratchet::testing::eventually([&] {
    alive.clear();
    host.ssh("test -d /proc/" + pid + " && echo alive; true", &alive);
    return alive.empty();
  }, 5000));
}

TEST_CASE("become on a host without sudo: the probe says so in seconds and names what the host has (R11)",
          "[systemd][e2e][become]") {
  SystemdHost host;
  REQUIRE(run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " carol nopasswd").code == 0);
  // This instance's own overlay: sudo hidden, a doas in its place.
  std::string out;
  REQUIRE(host.ssh("mv /usr/bin/sudo /usr/bin/sudo.hidden && printf '#!/bin/sh\\nexit 1\\n' > /usr/local/bin/doas && "
                   "chmod 755 /usr/local/bin/doas", &out) == 0);
  std::string dir = ratchet::testing::temp_dir("ratchet-become-nosudo");
  std::string pb = dir + "/p.toml";
  std::ofstream(pb) << "name = \"nosudo\"\n[[step]]\nid = \"who\"\nkind = \"run\"\nbecome = true\n"
                       "command = \"touch /tmp/ran\"\n";
  std::string t = dir + "/t.jsonl";
  auto start = std::chrono::steady_clock::now();
  auto r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + user_inventory(host, dir, "carol") +
                  " -F none --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  CHECK((r.out + r.err).find("become: sudo is not installed on this host (found: doas)") != std::string::npos);
  std::string ran;
  host.ssh("test -e /tmp/ran && echo ran; true", &ran);
  CHECK(ran.empty());
}

namespace {

/// A password sudo user `name` on `host` whose every PAM authentication by
/// sudo (pam_exec, optional, ahead of common-auth) adds a line to COUNT.
struct CountedAuth {
  static constexpr const char* kCount = "/var/tmp/ratchet-pam.count";
  SystemdHost& host;
  CountedAuth(SystemdHost& h, const std::string& name, const std::string& pw) : host(h) {
    REQUIRE(run_sh(SystemdHost::script() + " add-user " + host.state_dir() + " " + name + " password=" + pw).code == 0);
    std::string out;
    REQUIRE(host.ssh(std::string("printf '#!/bin/sh\\necho x >> ") + kCount +
                         "\\n' > /usr/local/sbin/ratchet-pam-count && chmod 755 /usr/local/sbin/ratchet-pam-count && "
                         "sed -i '/^@include common-auth/i auth optional pam_exec.so /usr/local/sbin/ratchet-pam-count' "
                         "/etc/pam.d/sudo && grep -c ratchet-pam-count /etc/pam.d/sudo",
                     &out) == 0);
    REQUIRE(out == "1\n");
  }
  /// How many times sudo's PAM stack authenticated so far.
  int count() {
    std::string out;
    host.ssh(std::string("cat ") + kCount + " 2>/dev/null | wc -l", &out);
    return std::atoi(out.c_str());
  }
};

std::string steps_playbook(const std::string& dir, int n, const std::string& command) {
  std::string p = dir + "/steps.toml";
  std::ofstream f(p);
  f << "name = \"ten\"\n";
  for (int i = 1; i <= n; ++i)
    f << "[[step]]\nid = \"s" << i << "\"\nkind = \"run\"\nbecome = true\ncommand = \"" << command << "\"\n";
  return p;
}

/// A file holding `pw` (the run reads it into its environment: never in an argv).
std::string pw_file(const std::string& dir, const std::string& pw) {
  ratchet::testing::write_file(dir + "/become-pw", pw);
  return dir + "/become-pw";
}

/// The R13 lab: a systemd host with a password sudo user alice whose sudo
/// authentications are counted, and a temp dir for the run's files.
struct R13Lab {
  SystemdHost host;
  std::string pw;
  CountedAuth auth;
  std::string dir;
  R13Lab(const std::string& password, const std::string& tag)
      : pw(password), auth(host, "alice", password), dir(ratchet::testing::temp_dir(tag.c_str())) {}
  /// `ratchet run PB` as alice, with `password` (default: the right one) in
  /// --become-password-env (read from a file: in no argv), then `extra`.
  ratchet::testing::ShellResult run(const std::string& pb, const std::string& t, const std::string& extra = "",
                                    const std::string& password = "") {
    return run_sh("BECOME_PW=$(cat " + pw_file(dir, password.empty() ? pw : password) + ") " + RATCHET_BINARY +
                  " run " + pb + " -i " + user_inventory(host, dir, "alice") +
                  " -F none --become-password-env BECOME_PW --transcript " + t + extra);
  }
};

}  // namespace

TEST_CASE("R13: a password become run of 10 steps authenticates once per host on the session shell",
          "[systemd][e2e][become]") {
  R13Lab lab("Pw-r13-5d1e07", "ratchet-become-once");
  const std::string& pw = lab.pw;
  const std::string pb = steps_playbook(lab.dir, 10, "id -u");
  auto run = [&](const std::string& transport, const std::string& t) {
    return lab.run(pb, t, " --transport " + transport);
  };

  SECTION("session shell (the default): one authentication, the password nowhere") {
    ArgvWatch watch(pw);
    const std::string t = lab.dir + "/session.jsonl";
    auto r = run("session", t);
    watch.finish();
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    const int n = lab.auth.count();
    INFO("authentications: " << n);
    CHECK(n >= 1);
    CHECK(n <= 2);  // the Must; this design: exactly one (the become shell's start)
    CHECK(n == 1);
    auto st = statuses(t);
    for (int i = 1; i <= 10; ++i) CHECK(st["s" + std::to_string(i)] == "changed");
    int roots = 0;
    for (const auto& e : ratchet::transcript::read_transcript(t).events)
      roots += e["event"] == "output" && e.value("data", "") == "0\n";
    CHECK(roots == 10);  // each step ran as root
    for (const auto& h : watch.hits()) UNSCOPED_INFO("argv holding the password: " << h);
    CHECK(watch.hits().empty());
    CHECK(slurp(t).find(pw) == std::string::npos);
    CHECK((r.out + r.err).find(pw) == std::string::npos);
  }

  SECTION("channel transport: sudo authenticates for every command (why the session shell is the default)") {
    const std::string t = lab.dir + "/channel.jsonl";
    auto r = run("channel", t);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(lab.auth.count() >= 11);  // the password probe, then one per step (and the run's audit line)
  }
}

TEST_CASE("R13: a wrong become password fails in seconds after one attempt and runs nothing",
          "[systemd][e2e][become]") {
  R13Lab lab("Pw-r13-wrong-8c2a", "ratchet-become-wrong");
  const std::string& pw = lab.pw;
  auto& host = lab.host;
  const std::string pb = steps_playbook(lab.dir, 3, "touch /root/ran");
  const std::string t = lab.dir + "/t.jsonl";
  auto t0 = std::chrono::steady_clock::now();
  auto r = lab.run(pb, t, "", "nope-" + pw);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(secs < 20);
  CHECK(r.out.find("become: sudo rejected the become password (to run as root)") != std::string::npos);
  CHECK(r.out.find("1 incorrect password attempt") != std::string::npos);
  CHECK((r.out + r.err).find(pw) == std::string::npos);
  CHECK(slurp(t).find(pw) == std::string::npos);
  // One attempt: PAM ran for the password, and once more for sudo's second
  // ask, which found no password and ended sudo.
  CHECK(lab.auth.count() <= 2);
  auto st = statuses(t);
  CHECK(st["s1"] == "failed");
  CHECK(st["s2"] == "skipped");
  std::string ran;
  host.ssh("test -e /root/ran && echo ran; true", &ran);
  CHECK(ran.empty());
}

TEST_CASE("R13: a command in the become shell still ends at its deadline and at ^C", "[systemd][e2e][become]") {
  R13Lab lab("Pw-r13-stop-3b9f", "ratchet-become-stop");
  auto& host = lab.host;
  const std::string& dir = lab.dir;
  std::string pb = dir + "/p.toml";
  std::ofstream(pb) << "name = \"stop\"\n[[step]]\nid = \"server\"\nkind = \"run\"\nbecome = true\ntimeout = \"3s\"\n"
                       "command = \"sleep 60 & echo $$ $! > /root/pids; exec sleep 300\"\n";
  const std::string t = dir + "/t.jsonl";
  const std::string inv = user_inventory(host, dir, "alice");
  auto pids_gone = [&] {
    std::string pids;
    host.ssh("cat /root/pids", &pids);
    REQUIRE(count_of(pids, " ") == 1);
    std::string alive = "?";
    bool gone = listed_pids_end(host, "/root/pids", &alive);
    INFO("still alive: " << alive << " (of " << pids << ")");
    CHECK(gone);
  };

  SECTION("the deadline") {
    auto r = lab.run(pb, t);
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK(statuses(t)["server"] == "failed");
    pids_gone();
  }

  SECTION("^C") {
    pid_t pid = start_ratchet({"run", pb, "-i", inv, "-F", "none", "--become-password-env", "BECOME_PW",
                               "--transcript", t},
                              {{"BECOME_PW", lab.pw}});
    bool started = false;
    const int status = interrupt_when_listed(host, pid, "/root/pids", &started);
    REQUIRE(started);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    pids_gone();
  }
  CHECK(lab.auth.count() == 1);  // neither stop asked sudo again
}

TEST_CASE("R13: a cached sudo credential never turns the become password into a command's input (C13)",
          "[systemd][e2e][become]") {
  const std::string transport = GENERATE("session", "channel");
  R13Lab lab("Pw-r13-cached-61d4", "ratchet-become-cached");
  auto& host = lab.host;
  const std::string& pw = lab.pw;
  const std::string& dir = lab.dir;
  std::string out;
  // One credential for every sudo of alice, whatever its terminal or parent.
  REQUIRE(host.ssh("printf 'Defaults:alice timestamp_type=global\\n' > /etc/sudoers.d/80-alice-global && "
                   "chmod 440 /etc/sudoers.d/80-alice-global",
                   &out) == 0);
  // The credential is cached mid-run, after the become probe found that sudo
  // needs the password (`sudo -v` as alice, the password on its stdin); the
  // become commands after it read stdin with `cat`.
  std::string pb = dir + "/cached.toml";
  std::ofstream(pb) << "name = \"cached\"\n[secrets]\npw = \"env:BECOME_PW\"\n"
                       "[[step]]\nid = \"first\"\nkind = \"run\"\nbecome = true\ncommand = \"id -u\"\n"
                       "[[step]]\nid = \"cache\"\nkind = \"run\"\nbecome = false\nstdin = \"{{ pw }}\\n\"\n"
                       "command = \"sudo -S -p '' -v && sudo -n true && echo cached\"\n"
                       "[[step]]\nid = \"c1\"\nkind = \"run\"\nbecome = true\ncommand = \"cat; echo end\"\n"
                       "[[step]]\nid = \"c2\"\nkind = \"run\"\nbecome = true\ncommand = \"cat; echo end\"\n";
  const std::string t = dir + "/t.jsonl";
  auto r = lab.run(pb, t, " --transport " + transport);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  std::map<std::string, std::string> stdout_of;
  for (const auto& e : ratchet::transcript::read_transcript(t).events)
    if (e["event"] == "output" && e["stream"] == "stdout") stdout_of[e["step"]] += e.value("data", "");
  CHECK(stdout_of["first"] == "0\n");
  CHECK(statuses(t)["cache"] == "changed");  // `sudo -v` took, `sudo -n` found the credential (its output is redacted: a secret came on its stdin)
  CHECK(stdout_of["c1"] == "end\n");  // nothing came on stdin: not the password
  CHECK(stdout_of["c2"] == "end\n");
  CHECK(slurp(t).find(pw) == std::string::npos);
  CHECK((r.out + r.err).find(pw) == std::string::npos);
}
