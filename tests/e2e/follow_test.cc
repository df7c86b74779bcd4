// `show --follow` and `show --verify` against runs on a real sshd on 127.0.0.1
// (issue 15): a run followed from another process shows its events before it
// ends and the follower exits with its code; the digests `run` prints are the
// ones `show --verify --digest` accepts.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/chain.h"
#include "transcript/writer.h"

using namespace ratchet::testing;
using nlohmann::json;
namespace events = ratchet::transcript::events;

namespace {

/// A process this test started, stdout and stderr to files; killed (SIGKILL,
/// by its PID) and reaped at the end unless it ended by itself.
class Proc {
 public:
  Proc(std::vector<std::string> argv, const std::string& out, const std::string& err) {
    pid_ = fork();
    if (pid_ == 0) {
      int in = open("/dev/null", O_RDONLY);
      int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(in, 0), dup2(o, 1), dup2(e, 2);
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
  }
  ~Proc() {
    if (running()) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Proc(const Proc&) = delete;
  Proc& operator=(const Proc&) = delete;
  pid_t pid() const { return pid_; }
  /// Whether it still runs; once it ended, code() says how.
  bool running() {
    if (pid_ <= 0) return false;
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) != pid_) return true;
    code_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    pid_ = -1;
    return false;
  }
  /// Its exit code (128+N for signal N), waiting up to `ms`; -1 while it still runs.
  int wait(int ms) {
    eventually([this] { return !running(); }, ms);
    return code_;
  }

 private:
  pid_t pid_ = -1;
  int code_ = -1;
};

/// The loopback sshd and an inventory of `hosts`, each a name for it.
struct Env {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-follow");
  std::string inv = dir + "/inventory.toml";
  const std::string bin = RATCHET_BINARY;

  explicit Env(const std::vector<std::string>& hosts = {"box"}) {
    std::ofstream f(inv);
    for (const auto& h : hosts)
      f << "[hosts." << h << "]\naddress = \"127.0.0.1\"\nport = " << sshd.port() << "\nuser = \"root\"\nidentity = \""
        << sshd.client_key() << "\"\nknown_hosts = \"" << sshd.known_hosts() << "\"\n";
  }
  std::string playbook(const std::string& body) {
    std::string p = dir + "/pb.toml";
    std::ofstream(p) << body;
    return p;
  }
};

/// Creates `path` when it goes: a step waiting for it ends even when the test failed.
struct Gate {
  std::string path;
  ~Gate() { std::ofstream{path}; }
};

/// The 64 hex digits after `label` in `text`, or "".
std::string hex_after(const std::string& text, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(label + "([0-9a-f]{64})"))) return "";
  return m[1];
}

}  // namespace

TEST_CASE("show --follow renders a run on the loopback sshd while it runs and exits with its exit code",
          "[ssh][e2e]") {
  Env e;
  Gate gate{e.dir + "/gate"};
  std::string pb = e.playbook("name = \"follow\"\n"
                              "[[step]]\nid = \"first\"\nkind = \"run\"\ncommand = \"echo first\"\n"
                              "[[step]]\nid = \"wait\"\nkind = \"run\"\ntimeout = \"60s\"\n"
                              "command = \"while [ ! -e " + gate.path + " ]; do sleep 0.05; done; echo gate open\"\n"
                              "[[step]]\nid = \"fails\"\nkind = \"run\"\ncommand = \"echo failing >&2; exit 3\"\n");
  const std::string t = e.dir + "/t.jsonl", fout = e.dir + "/follow.out";
  // Started first: it waits for the file to appear.
  Proc follow({e.bin, "show", "--follow", t}, fout, e.dir + "/follow.err");
  Proc run({e.bin, "run", pb, "-i", e.inv, "-F", "none", "--transcript", t}, e.dir + "/run.out", e.dir + "/run.err");
  INFO(read_file(e.dir + "/run.err") << read_file(e.dir + "/follow.err"));
  // The waiting step has begun: what came before it is on the follower's stdout, the run still going.
  REQUIRE(eventually([&] { return read_file(fout).find("  - wait [run] wait\n") != std::string::npos; }, 30000));
  CHECK(run.running());
  CHECK(follow.running());
  const std::string before = read_file(fout);
  CHECK(before.rfind("run ", 0) == 0);
  CHECK(before.find("host box\n  connected root@127.0.0.1:") != std::string::npos);
  CHECK(std::regex_search(before, std::regex("  - first \\[run\\] first\n      action +\\$ echo first  → exit 0 "
                                             "\\([0-9.]+m?s\\)\n          \\| first\n    changed in ")));
  CHECK(before.find("run failed") == std::string::npos);

  std::ofstream{gate.path};
  const int code = run.wait(30000);
  CHECK(code == 1);  // the failed step
  CHECK(follow.wait(10000) == code);
  const std::string after = read_file(fout);
  CHECK(after.find("gate open") != std::string::npos);
  CHECK(after.find("\nrun failed (exit 1) at ") != std::string::npos);
  CHECK(read_file(e.dir + "/follow.err") == "");
  // One host: the same lines as `show` renders from the finished file.
  auto show = run_sh(e.bin + " show " + t);
  CHECK(show.code == 0);
  CHECK(after == show.out);
}

TEST_CASE("run prints each host's digest and the final head and show --verify --digest of that head exits 0",
          "[ssh][e2e]") {
  Env e({"a", "b"});
  std::string pb = e.playbook("name = \"chain\"\n[[step]]\nid = \"hi\"\nkind = \"run\"\ncommand = \"echo hi\"\n");
  const std::string t = e.dir + "/t.jsonl";
  auto r = run_sh(e.bin + " run " + pb + " -i " + e.inv + " -F none --transcript " + t);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const std::string head = hex_after(r.out, "final head \\(the whole run, up to its run_end\\): ");
  const std::string a = hex_after(r.out, "\n  a    "), b = hex_after(r.out, "\n  b    ");
  REQUIRE(head.size() == 64);
  REQUIRE(a.size() == 64);
  REQUIRE(b.size() == 64);
  CHECK(r.out.find("host digests (sha256 of each host's host_end line in the transcript's hash chain):\n") !=
        std::string::npos);
  CHECK(r.out.find("check the transcript against it: ratchet show --verify " + t + " --digest " + head + "\n") !=
        std::string::npos);
  // The same digests as the file's chain.
  auto chain = ratchet::transcript::verify_chain(read_file(t));
  REQUIRE(chain.problem == "");
  REQUIRE(chain.runs.size() == 1);
  CHECK(chain.runs[0].head == head);

  auto v = run_sh(e.bin + " show --verify " + t + " --digest " + head);
  CHECK(v.code == 0);
  CHECK(v.err == "");
  CHECK(v.out.find(t + ": every chain is intact (1 run, ") != std::string::npos);
  CHECK(v.out.find("digest " + head + " is the final head of run ") != std::string::npos);
  std::string upper = a;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto va = run_sh(e.bin + " show --verify " + t + " --digest sha256:" + upper);
  CHECK(va.code == 0);
  CHECK(va.out.find("digest " + a + " is host a of run ") != std::string::npos);
  CHECK(va.out.find("  host b: " + b + " (line ") != std::string::npos);
  const std::string wrong = std::string(64, '0');
  auto vw = run_sh(e.bin + " show --verify " + t + " --digest " + wrong);
  CHECK(vw.code == 1);
  CHECK(vw.err == "ratchet: " + t + ": digest " + wrong + " is neither the final head nor a host's digest of any run in it\n");
  auto bad = run_sh(e.bin + " show --verify " + t + " --digest 12ab");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--digest 12ab: not a sha256 digest (64 hex digits, `sha256:` optional)") != std::string::npos);

  // A byte changed in line 5: line 6 no longer fits.
  std::string text = read_file(t);
  size_t at = 0;
  for (int k = 0; k < 4; ++k) at = text.find('\n', at) + 1;
  size_t t_at = text.find("\"t\":\"", at) + 5;  // the first digit of its time
  text[t_at] = text[t_at] == '2' ? '3' : '2';
  std::ofstream(t, std::ios::trunc | std::ios::binary) << text;
  auto vt = run_sh(e.bin + " show --verify " + t + " --digest " + head);
  CHECK(vt.code == 1);
  CHECK(vt.err == "ratchet: " + t + ": line 6: prev does not match line 5\n");

  // --json: each host's digest and the head, as the file's chain has them.
  const std::string t2 = e.dir + "/t2.jsonl";
  auto j = run_sh(e.bin + " run " + pb + " -i " + e.inv + " -F none --json --transcript " + t2);
  REQUIRE(j.code == 0);
  json sum = json::parse(j.out);
  auto chain2 = ratchet::transcript::verify_chain(read_file(t2));
  REQUIRE(chain2.problem == "");
  CHECK(sum["head"] == chain2.runs[0].head);
  std::map<std::string, std::string> want, got;
  for (const auto& h : chain2.runs[0].hosts) want[h.host] = h.digest;
  for (const auto& h : sum["hosts"]) got[h["host"]] = h["digest"];
  CHECK(got == want);
  CHECK(want.size() == 2);
}

TEST_CASE("show --follow of a finished file follows its last run and ends with that run's exit code", "[cli]") {
  const std::string dir = temp_dir("ratchet-follow");
  const std::string t = dir + "/t.jsonl";
  for (int code : {0, 4}) {
    ratchet::transcript::Writer w(t);
    w.emit(events::kRunStart, {{"schema", 2}, {"ratchet_version", "v"}, {"run_id", "R" + std::to_string(code)},
                               {"targets", json::array()}});
    w.emit(events::kRunEnd, {{"status", code ? "host_key" : "ok"}, {"exit_code", code}, {"hosts", json::object()}});
  }
  auto r = run_sh(std::string(RATCHET_BINARY) + " show --follow " + t);
  CHECK(r.code == 4);
  CHECK(r.out.find("run R4 of ") == 0);
  CHECK(r.out.find("R0") == std::string::npos);
  CHECK(r.out.find("run host_key (exit 4) at ") != std::string::npos);
  auto j = run_sh(std::string(RATCHET_BINARY) + " show --follow --json " + t);
  CHECK(j.code == 4);
  CHECK(json::parse(j.out.substr(0, j.out.find('\n')))["run_id"] == "R4");
  auto nt = run_sh("printf 'name = 1\\n' > " + dir + "/p.toml; " + RATCHET_BINARY + " show --follow " + dir + "/p.toml");
  CHECK(nt.code == 2);
  CHECK(nt.err.find("is not a ratchet transcript") != std::string::npos);
  auto both = run_sh(std::string(RATCHET_BINARY) + " show --follow --verify " + t);
  CHECK(both.code == 2);
  auto d = run_sh(std::string(RATCHET_BINARY) + " show --follow " + dir);  // as `show DIR`: a usage error
  CHECK(d.code == 2);
  CHECK(d.err == "ratchet: error: cannot read transcript " + dir + ": Is a directory\n");
}

TEST_CASE("show --follow waits for a half-written line and ends on ^C with 130", "[cli]") {
  const std::string dir = temp_dir("ratchet-follow");
  const std::string t = dir + "/t.jsonl", out = dir + "/out", err = dir + "/err";
  Proc follow({RATCHET_BINARY, "show", "--follow", t}, out, err);
  const std::string start =
      R"({"event":"run_start","t":"2026-11-30T00:00:00.000Z","run_id":"R1","playbook":"p","playbook_path":"p.toml",)"
      R"("playbook_sha256":"0123456789abcdef","ratchet_version":"v","schema":2,"targets":["h"]})";
  const std::string step =
      R"({"event":"step_start","t":"2026-11-30T00:00:00.001Z","host":"h","step":"s","kind":"run","name":"S"})";
  std::ofstream f(t, std::ios::binary);
  f << start << "\n" << step.substr(0, 40) << std::flush;
  REQUIRE(eventually([&] { return read_file(out).find("started 2026-11-30T00:00:00.000Z\n") != std::string::npos; }));
  CHECK(read_file(out).find("host h") == std::string::npos);  // the cut line waits for its newline
  f << step.substr(40) << "\n" << std::flush;
  REQUIRE(eventually([&] { return read_file(out).find("host h\n  - s [run] S\n") != std::string::npos; }));
  CHECK(follow.running());
  kill(follow.pid(), SIGINT);
  CHECK(follow.wait(10000) == 130);
  CHECK(read_file(err) == "ratchet: note: stopped following " + t + " after line 2; the run, if any, goes on\n");
}

TEST_CASE("show --verify: an unreadable file and --digest without --verify are usage errors and an old transcript has no prev",
          "[cli]") {
  const std::string bin = RATCHET_BINARY;
  auto missing = run_sh(bin + " show --verify /nonexistent/t.jsonl");
  CHECK(missing.code == 2);
  CHECK(missing.err == "ratchet: error: cannot read transcript /nonexistent/t.jsonl: No such file or directory\n");
  auto alone = run_sh(bin + " show --digest " + std::string(64, 'a') + " /nonexistent/t.jsonl");
  CHECK(alone.code == 2);
  CHECK(alone.err.find("--digest requires --verify") != std::string::npos);
  const std::string old = std::string(RATCHET_SOURCE_DIR) + "/examples/transcript-gpu-release.jsonl";
  auto v = run_sh(bin + " show --verify " + old);
  CHECK(v.code == 1);
  CHECK(v.err == "ratchet: " + old + ": line 2: no prev (written before the hash chain, or edited)\n");
}
