// The ratchet binary against a real sshd on 127.0.0.1: exit codes, host keys,
// transcripts of failed runs, exec, atomic file writes, the PID-reuse guard.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"
#include "util/hash.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

struct Env {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-cli");
  std::string inv;

  explicit Env(const std::string& known_hosts = "") {
    inv = dir + "/inventory.toml";
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key()
                       << "\"\nknown_hosts = \"" << (known_hosts.empty() ? sshd.known_hosts() : known_hosts)
                       << "\"\n";
  }
  std::string playbook(const std::string& name, const std::string& body) {
    std::string p = dir + "/" + name;
    std::ofstream(p) << body;
    return p;
  }
  ShellResult ratchet(const std::string& args) {
    return run_sh(std::string(RATCHET_BINARY) + " " + args + " -F none");
  }
};

std::string file_text(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

}  // namespace

TEST_CASE("a failing step exits 1 and leaves the transcript complete up to it", "[ssh][cli]") {
  Env e;
  std::string pb = e.playbook("fail.toml", R"(name = "fail"
[[step]]
id = "first"
kind = "run"
command = "echo one"
[[step]]
id = "breaks"
kind = "run"
command = "echo about to fail >&2; exit 3"
[[step]]
id = "never"
kind = "run"
command = "echo never"
)");
  auto r = e.ratchet("run " + pb + " -i " + e.inv + " --transcript " + e.dir + "/t.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  auto t = ratchet::transcript::read_transcript(e.dir + "/t.jsonl");
  CHECK(t.note.empty());
  std::vector<std::string> seq;
  for (const auto& ev : t.events) {
    std::string s = ev["event"];
    if (ev.contains("step")) s += ":" + ev["step"].get<std::string>();
    if (s.rfind("output", 0) != 0) seq.push_back(s);
  }
  CHECK(seq == std::vector<std::string>{"run_start", "host_library", "connect", "step_start:first",
                                        "command:first", "exit:first", "step_end:first", "step_start:breaks",
                                        "command:breaks", "exit:breaks", "evidence:breaks", "step_end:breaks",
                                        "step_start:never", "step_end:never", "host_end", "audit", "run_end"});
  // run_start is small: the host library is stored once, in its own event (schema 2).
  CHECK(t.events[0]["schema"] == 2);
  CHECK_FALSE(t.events[0].contains("host_library"));
  CHECK(t.events[1]["text"].get<std::string>().size() > 1000);
  // The step not run is listed and counted skipped, "host stopped at breaks":
  // piped output, recap, transcript, show, --json.
  CHECK(r.out.find("box: skipped            never                       host stopped at breaks\n") !=
        std::string::npos);
  CHECK(r.out.find("\nbox: 1 skipped (host stopped at breaks): never\n") != std::string::npos);
  for (const auto& ev : t.events) {
    if (ev["event"] == "exit" && ev["step"] == "breaks") CHECK(ev["code"] == 3);
    if (ev["event"] == "output" && ev["step"] == "breaks") {
      CHECK(ev["stream"] == "stderr");
      CHECK(ev["data"] == "about to fail\n");
    }
    if (ev["event"] == "step_end" && ev["step"] == "breaks") {
      CHECK(ev["status"] == "failed");
      CHECK(ev["reason"] == "exit 3: about to fail");
    }
    if (ev["event"] == "step_end" && ev["step"] == "never") {
      CHECK(ev["status"] == "skipped");
      CHECK(ev["reason"] == "host stopped at breaks");
      CHECK(ev["stopped_at"] == "breaks");
    }
    if (ev["event"] == "host_end") {
      CHECK(ev["counts"] == json({{"ok", 0}, {"changed", 1}, {"escalated", 0}, {"failed", 1}, {"skipped", 1}}));
      CHECK(ev["stopped_at"] == "breaks");
    }
    if (ev["event"] == "run_end") CHECK(ev["exit_code"] == 1);
  }
  auto show = run_sh(std::string(RATCHET_BINARY) + " show " + e.dir + "/t.jsonl");
  CHECK(show.code == 0);
  CHECK(show.out.find("    failed (rung 0) in ") != std::string::npos);
  CHECK(show.out.find("  - never [run] never\n    skipped: host stopped at breaks\n"
                      "  host failed (stopped at breaks): 1 changed, 1 failed, 1 skipped: exit 3: about to fail\n") !=
        std::string::npos);
  auto j = e.ratchet("run " + pb + " -i " + e.inv + " --json --transcript " + e.dir + "/t2.jsonl");
  CHECK(j.code == 1);
  auto host = json::parse(j.out)["hosts"][0];
  CHECK(host["stopped_at"] == "breaks");
  CHECK(host["skipped"] == json::array({{{"step", "never"}, {"reason", "host stopped at breaks"}}}));
  CHECK(host["counts"]["skipped"] == 1);
  CHECK(json::parse(j.out)["totals"]["skipped"] == 1);
}

TEST_CASE("exec exits 124 when its own --timeout ended the command and 128+N for another's signal", "[ssh][cli]") {
  Env e;
  auto t0 = std::chrono::steady_clock::now();
  std::string exec = std::string(RATCHET_BINARY) + " exec box -F none -i " + e.inv;
  auto r = run_sh(exec + " --timeout 1s -- 'echo started; sleep 30'");
  INFO(r.err);
  CHECK(r.code == 124);  // was 143 (128 + TERM): the same as a kill by someone else
  CHECK(r.out == "started\n");
  CHECK(r.err == "ratchet: box: timed out after 1s (ended by SIGTERM)\n");
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(8));
  r = run_sh(exec + " --timeout 30s -- 'kill -TERM $$'");
  CHECK(r.code == 128 + 15);
  CHECK(r.err == "ratchet: box: killed by SIGTERM\n");
}

TEST_CASE("unknown host key exits 4, --accept-new records it, a changed key always refuses", "[ssh][cli]") {
  SshdHost probe;  // only for a key that is not the target's
  std::string kh = temp_dir("ratchet-kh") + "/known_hosts";
  Env e(kh);
  std::string pb = e.playbook("p.toml", "name = \"p\"\n[[step]]\nid = \"s\"\nkind = \"run\"\ncommand = \"true\"\n");
  auto r = e.ratchet("run " + pb + " -i " + e.inv + " --transcript " + e.dir + "/t1.jsonl");
  CHECK(r.code == 4);
  CHECK(r.out.find("UNREACHABLE") != std::string::npos);

  r = e.ratchet("run " + pb + " -i " + e.inv + " --accept-new --transcript " + e.dir + "/t2.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  std::string recorded = file_text(kh);
  std::string expect_key = e.sshd.known_hosts_line();
  CHECK(recorded.find(expect_key.substr(expect_key.find(' ') + 1)) != std::string::npos);
  CHECK(e.ratchet("run " + pb + " -i " + e.inv + " --transcript " + e.dir + "/t3.jsonl").code == 0);

  // Another host's key under this host's name: changed key, refused even with --accept-new.
  std::string other = probe.known_hosts_line();
  std::ofstream(kh) << "[127.0.0.1]:" << e.sshd.port() << other.substr(other.find(' ')) << "\n";
  r = e.ratchet("run " + pb + " -i " + e.inv + " --accept-new --transcript " + e.dir + "/t4.jsonl");
  CHECK(r.code == 4);
  auto t = ratchet::transcript::read_transcript(e.dir + "/t4.jsonl");
  bool saw = false;
  for (const auto& ev : t.events)
    if (ev["event"] == "unreachable") saw = ev["cause"] == "host_key";
  CHECK(saw);
}

TEST_CASE("an unreachable host exits 3, a playbook error exits 2 before connecting", "[ssh][cli]") {
  Env e;
  std::string pb = e.playbook("p.toml", "name = \"p\"\n[[step]]\nid = \"s\"\nkind = \"run\"\ncommand = \"true\"\n");
  int closed = free_port();
  auto r = e.ratchet("run " + pb + " --target root@127.0.0.1:" + std::to_string(closed) +
                     " --transcript " + e.dir + "/t.jsonl");
  CHECK(r.code == 3);
  std::string bad = e.playbook("bad.toml", "name = \"b\"\n[[step]]\nkind = \"kill\"\npidfile = \"/run/x.pid\"\n");
  r = e.ratchet("run " + bad + " -i " + e.inv);
  CHECK(r.code == 2);
  CHECK(r.err.find(bad + ":4:1: error: unknown key `pidfile`") != std::string::npos);
  CHECK(r.err.find("did you mean `pid_file`?") != std::string::npos);
}

TEST_CASE("run and exec --connect-timeout bound a host that accepts TCP but never speaks SSH", "[ssh][cli]") {
  Env e;
  std::string pb = e.playbook("p.toml", "name = \"p\"\n[[step]]\nid = \"s\"\nkind = \"run\"\ncommand = \"true\"\n");
  SilentListener silent;  // listens, never accepts: no banner comes
  std::string target = "root@127.0.0.1:" + std::to_string(silent.port());
  auto t0 = std::chrono::steady_clock::now();
  auto r = e.ratchet("run " + pb + " --target " + target + " --connect-timeout 1s --transcript " + e.dir + "/t.jsonl");
  auto took = std::chrono::steady_clock::now() - t0;
  INFO(r.out << r.err);
  CHECK(r.code == 3);
  CHECK(r.out.find("timeout") != std::string::npos);
  CHECK(took < std::chrono::seconds(6));  // the default would wait 10 s
  t0 = std::chrono::steady_clock::now();
  auto x = e.ratchet("exec " + target + " --connect-timeout 1s -- true");
  took = std::chrono::steady_clock::now() - t0;
  CHECK(x.code == 3);
  CHECK(took < std::chrono::seconds(6));
  for (const char* bad : {"0", "abc", "-1s"}) {
    auto b = e.ratchet("run " + pb + " --target " + target + " --connect-timeout " + bad);
    INFO(bad << ": " << b.err);
    CHECK(b.code == 2);
    CHECK(b.err.find("--connect-timeout") != std::string::npos);
  }
  // exec's own --timeout: a deadline of 0 would enforce nothing; refused before connecting.
  auto z = e.ratchet("exec box -i " + e.inv + " --timeout 0s -- sleep 5");
  CHECK(z.code == 2);
  CHECK(z.err == "ratchet: error: --timeout 0s: must be more than 0\nsee 'ratchet exec --help'\n");
}

TEST_CASE("exec passes the remote exit status and signal through", "[ssh][cli]") {
  Env e;
  auto r = e.ratchet("exec box -i " + e.inv + " -- 'echo out; echo err >&2; exit 7'");
  CHECK(r.code == 7);
  CHECK(r.out == "out\n");
  CHECK(r.err == "err\n");
  r = e.ratchet("exec box -i " + e.inv + " -- 'kill -KILL $$'");
  CHECK(r.code == 128 + 9);
  // stdout byte for byte (like ssh); stderr is for a person: no escape reaches the terminal.
  r = e.ratchet("exec box -i " + e.inv + " -- 'printf \"a\\033[2Jb\\n\"; printf \"c\\033]0;t\\007d\\n\" >&2'");
  CHECK(r.out == "a\033[2Jb\n");
  CHECK(r.err == "c\\x1b]0;t\\x07d\n");  // one escape style: \xNN (was '?')
  // --transcript: a whole one, as for run (was: command and exit only, output lost).
  std::string t = e.dir + "/exec.jsonl";
  r = run_sh(std::string(RATCHET_BINARY) + " exec box -F none -i " + e.inv + " --transcript " + t +
             " -- 'echo hi; exit 5'");
  CHECK(r.code == 5);
  auto tr = ratchet::transcript::read_transcript(t);
  CHECK(tr.note.empty());  // ends with run_end
  std::vector<std::string> names;
  for (const auto& ev : tr.events) names.push_back(ev["event"]);
  // The audit line goes after the command (docs/audit.md): exec writes one too.
  CHECK(names == std::vector<std::string>{"run_start", "connect", "command", "output", "exit", "audit", "run_end"});
  REQUIRE(names.size() == 7);
  CHECK(tr.events[0]["exec"] == "echo hi; exit 5");
  CHECK(tr.events[3]["data"] == "hi\n");
  CHECK(tr.events[4]["code"] == 5);
  CHECK(tr.events[4]["pid"].get<long>() > 1);
  CHECK(json::parse(tr.events[5]["line"].get<std::string>())["mode"] == "exec");
  CHECK(json::parse(tr.events[5]["line"].get<std::string>())["status"] == "failed");
  CHECK(tr.events[6]["exit_code"] == 5);
  CHECK(tr.events[6]["status"] == "failed");
}

TEST_CASE("write: 4 MiB lands atomically over ssh, the old file stays whole until the rename", "[ssh][cli]") {
  Env e;
  std::string big;
  big.reserve(4 << 20);
  for (int i = 0; big.size() < (4u << 20); ++i) big += "line " + std::to_string(i) + " of a big file\n";
  std::ofstream(e.dir + "/big.tmpl") << big;
  std::string target = e.dir + "/target.txt";
  std::string old(1000, 'o');
  std::ofstream(target) << old;
  std::string pb = e.playbook("w.toml", "name = \"w\"\n[[step]]\nid = \"big\"\nkind = \"write\"\npath = \"" +
                                            target + "\"\nmode = \"0600\"\ntemplate = \"big.tmpl\"\n");
  std::atomic<bool> done{false};
  std::atomic<int> torn{0}, samples{0};
  std::thread watcher([&] {
    while (!done) {
      struct stat st{};
      if (stat(target.c_str(), &st) == 0) {
        ++samples;
        if (st.st_size != static_cast<off_t>(old.size()) && st.st_size != static_cast<off_t>(big.size())) ++torn;
      } else {
        ++torn;  // the path must never be missing
      }
    }
  });
  auto r = e.ratchet("run " + pb + " -i " + e.inv + " --transcript " + e.dir + "/t.jsonl");
  done = true;
  watcher.join();
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(samples > 100);
  CHECK(torn == 0);
  CHECK(ratchet::util::sha256_hex(file_text(target)) == ratchet::util::sha256_hex(big));
  struct stat st{};
  stat(target.c_str(), &st);
  CHECK((st.st_mode & 0777) == 0600);
  // Second run: the check finds the same hash and mode: ok, nothing sent.
  r = e.ratchet("run " + pb + " -i " + e.inv + " --transcript " + e.dir + "/t2.jsonl");
  CHECK(r.code == 0);
  auto t2 = ratchet::transcript::read_transcript(e.dir + "/t2.jsonl");
  int actions = 0;
  for (const auto& ev : t2.events) {
    if (ev["event"] == "command" && ev["role"] == "action") ++actions;
    if (ev["event"] == "step_end") CHECK(ev["status"] == "ok");
  }
  CHECK(actions == 0);
}

TEST_CASE("kill by PID file refuses a recycled PID over ssh: nothing killed, step fails", "[ssh][cli]") {
  Env e;
  OwnedProcess victim("exec sleep 310");
  REQUIRE(eventually([&] { return victim.alive(); }));
  std::string pf = e.dir + "/server.pid";
  std::ofstream(pf) << victim.pid() << "\n";
  REQUIRE(run_sh("touch -d '-1 hour' " + pf).code == 0);
  std::string pb = e.playbook("k.toml", "name = \"k\"\n[[step]]\nid = \"k\"\nkind = \"kill\"\npid_file = \"" + pf +
                                            "\"\nsignal = \"KILL\"\nwait = \"1s\"\n");
  auto r = e.ratchet("run " + pb + " -i " + e.inv + " --transcript " + e.dir + "/t.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(victim.alive());
  auto t = ratchet::transcript::read_transcript(e.dir + "/t.jsonl");
  bool refused = false;
  for (const auto& ev : t.events)
    if (ev["event"] == "step_end")
      refused = ev["status"] == "failed" &&
                ev["reason"].get<std::string>().find("a recycled PID, not the process the file names; nothing killed") !=
                    std::string::npos;
  CHECK(refused);

  // The same file, fresh: the process it names is killed and the step is `changed`.
  REQUIRE(run_sh("touch " + pf).code == 0);
  r = e.ratchet("run " + pb + " -i " + e.inv + " --transcript " + e.dir + "/t2.jsonl");
  CHECK(r.code == 0);
  CHECK(eventually([&] { return !victim.alive(); }));
}

TEST_CASE("plan connects to nothing and prints the commands run records", "[cli]") {
  std::string dir = temp_dir("ratchet-plan");
  std::ofstream(dir + "/p.toml") << "name = \"p\"\n[vars]\nf = \"a b; $(x)\"\n[[step]]\nid = \"s\"\nkind = \"run\"\n"
                                    "command = \"cat {{ f }}\"\n";
  int closed = free_port();
  auto r = run_sh(std::string(RATCHET_BINARY) + " plan " + dir + "/p.toml --target root@127.0.0.1:" +
                  std::to_string(closed) + " --json");
  REQUIRE(r.code == 0);
  auto j = json::parse(r.out);
  CHECK(j["hosts"][0]["steps"][0]["commands"][0]["command"] == "cat 'a b; $(x)'");
}

const char* kRunStart =
    R"({"event":"run_start","t":"2026-11-30T00:00:00.000Z","run_id":"R1","playbook":"p","playbook_path":"p.toml",)"
    R"("playbook_sha256":"0123456789abcdef","ratchet_version":"0.1.0","schema":2})";

TEST_CASE("show reads a transcript whose last line was cut off", "[cli]") {
  std::string dir = temp_dir("ratchet-show");
  std::ofstream(dir + "/t.jsonl")
      << kRunStart << "\n"
      << R"({"event":"step_start","t":"2026-11-30T00:00:00.000Z","host":"h","step":"a","kind":"run","name":"A"})"
      << "\n" << R"({"event":"step_end","t":"2026-11-30T00:00:01.000Z","host":"h","step":"a","status":"changed","rung":0,"ms":1000})"
      << "\n" << R"({"event":"command","t":"2026-11-30)";
  auto r = run_sh(std::string(RATCHET_BINARY) + " show " + dir + "/t.jsonl");
  CHECK(r.code == 0);
  CHECK(r.out ==
        "run R1 of p (p.toml), playbook sha256 0123456789ab, ratchet 0.1.0\nstarted 2026-11-30T00:00:00.000Z\n"
        "host h\n  - a [run] A\n    changed in 1s\n");
  CHECK(r.err == "ratchet: note: transcript ends mid-line at line 4 (byte 393): the run was cut off there\n");
}

TEST_CASE("show: not a transcript exits 2 and one cut inside its first line exits 1", "[cli]") {
  std::string dir = temp_dir("ratchet-show");
  std::string show = std::string(RATCHET_BINARY) + " show ";
  // A playbook given by mistake (was: exit 0, "holds no events" or bad lines only).
  std::ofstream(dir + "/p.toml") << "name = \"p\"\n";
  auto r = run_sh(show + dir + "/p.toml");
  CHECK(r.code == 2);
  CHECK(r.out == "");
  CHECK(r.err == "ratchet: error: " + dir + "/p.toml is not a ratchet transcript: its first bytes are not the "
                 "start of a run_start event (a transcript begins {\"event\":\"run_start\", ...)\n"
                 "see 'ratchet show --help'\n");
  // Events of a run, but not from its start.
  std::ofstream(dir + "/tail.jsonl") << R"({"event":"run_end","t":"2026-11-30T00:00:00.000Z","status":"ok"})" << "\n";
  CHECK(run_sh(show + dir + "/tail.jsonl").code == 2);
  // Cut inside its first line (was: exit 0): says where it ends, exit 1.
  std::string start = kRunStart;
  for (size_t n : {size_t(3), size_t(40), start.size() - 1}) {
    INFO(n);
    std::ofstream(dir + "/cut.jsonl", std::ios::trunc) << start.substr(0, n);
    r = run_sh(show + dir + "/cut.jsonl");
    CHECK(r.code == 1);
    CHECK(r.out == "");
    CHECK(r.err == "ratchet: note: " + dir + "/cut.jsonl holds no complete event\n"
                   "ratchet: note: transcript ends mid-line at line 1 (byte 0): the run was cut off there\n");
  }
  std::ofstream(dir + "/empty.jsonl", std::ios::trunc);  // run_start never went in (a full disk)
  r = run_sh(show + dir + "/empty.jsonl");
  CHECK(r.code == 1);
  CHECK(r.err == "ratchet: note: " + dir + "/empty.jsonl holds no complete event\n");
  // Cut after its first event: what it holds, exit 0.
  std::ofstream(dir + "/one.jsonl", std::ios::trunc) << start << "\n{\"event\":\"conn";
  r = run_sh(show + dir + "/one.jsonl");
  CHECK(r.code == 0);
  CHECK(r.out.find("run R1 of p") == 0);
}

TEST_CASE("show shows a kind it does not know and a field of another type, and says so", "[cli]") {
  std::string dir = temp_dir("ratchet-show");
  std::ofstream(dir + "/t.jsonl")
      << kRunStart << "\n"
      << R"({"event":"step_start","t":"2026-11-30T00:00:00.000Z","host":"h","step":"a","kind":"run","name":"A"})"
      << "\n" << R"({"event":"plan_digest","t":"2026-11-30T00:00:00.000Z","host":"h","sha256":"x"})"
      << "\n" << R"({"event":"step_end","t":"2026-11-30T00:00:01.000Z","host":"h","step":"a","status":"ok","rung":0,"ms":"1000"})"
      << "\n";
  auto r = run_sh(std::string(RATCHET_BINARY) + " show " + dir + "/t.jsonl");
  CHECK(r.code == 0);
  CHECK(r.out.find("host h\n  - a [run] A\n  unknown event plan_digest (host, sha256)\n    ok in 1000\n") !=
        std::string::npos);
  CHECK(r.err ==
        "ratchet: note: line 4: event `step_end`: field `ms` must be an integer (shown as written)\n"
        "ratchet: note: transcript has no run_end after 4 events: the run did not finish\n");
}

TEST_CASE("show --step and --host that match nothing exit 2 with a did-you-mean", "[cli]") {
  std::string dir = temp_dir("ratchet-show");
  std::ofstream(dir + "/t.jsonl")
      << kRunStart << "\n"
      << R"({"event":"step_start","t":"2026-11-30T00:00:00.000Z","host":"gpu01","step":"gpus_free","kind":"verify","name":"A"})"
      << "\n" << R"({"event":"step_end","t":"2026-11-30T00:00:01.000Z","host":"gpu01","step":"gpus_free","status":"ok","rung":0,"ms":1000})"
      << "\n";
  std::string show = std::string(RATCHET_BINARY) + " show " + dir + "/t.jsonl";
  auto r = run_sh(show + " --step gpu_free");
  CHECK(r.code == 2);
  CHECK(r.out == "");
  CHECK(r.err == "ratchet: error: --step gpu_free: no step of that name in " + dir +
                 "/t.jsonl (did you mean `gpus_free`?)\nsee 'ratchet show --help'\n");
  r = run_sh(show + " --host gpu1 --json");
  CHECK(r.code == 2);
  CHECK(r.err == "ratchet: error: --host gpu1: no host of that name in " + dir +
                 "/t.jsonl (did you mean `gpu01`?)\nsee 'ratchet show --help'\n");
  r = run_sh(show + " --host zzzzzzzz");
  CHECK(r.code == 2);
  CHECK(r.err == "ratchet: error: --host zzzzzzzz: no host of that name in " + dir +
                 "/t.jsonl (it has: gpu01)\nsee 'ratchet show --help'\n");
  r = run_sh(show + " --host gpu01 --step gpus_free");
  CHECK(r.code == 0);
  CHECK(r.out.find("    ok in 1s\n") != std::string::npos);
}

TEST_CASE("plan shows every field that changes behaviour in text and JSON alike", "[cli]") {
  std::string dir = temp_dir("ratchet-plan");
  std::ofstream(dir + "/p.toml") << R"(name = "p"
[defaults]
timeout = "30s"
[[step]]
id = "gpus"
kind = "verify"
command = "nvidia-smi -L"
stdout_matches = "^GPU 0"
settle = "2s"
retries = 3
delay = "500ms"
on_failure = "continue"
become = true
  [[step.escalate]]
  kind = "kill"
  pattern = "worker"
  signal = "KILL"
  wait = "7s"
  timeout = "10s"
  settle = "4s"
)";
  int closed = free_port();
  std::string args = " plan " + dir + "/p.toml --target deploy@127.0.0.1:" + std::to_string(closed) + " -F none";
  auto r = run_sh(std::string(RATCHET_BINARY) + args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::string host = "\nhost 127.0.0.1:" + std::to_string(closed) + " (address 127.0.0.1, port " +
                     std::to_string(closed) + ", user deploy)\n";
  CHECK(r.out.find(host +
                   "  lock: none (run --lock takes one); audit line: appended to /var/log/ratchet/runs.log\n"
                   "  1. gpus [verify] gpus  (as root via sudo)\n"
                   "       timeout 30s, settle 2s, retries 3, delay 500ms; on_failure continue; become root (sudo runs "
                   "`sudo -n -H -- /bin/sh -c ...`; with a password `-k -S -p ''` for `-n`)\n"
                   "       check         nvidia-smi -L\n"
                   "                     stdout_matches ^GPU 0\n"
                   "       rung 1: kill, timeout 10s, settle 4s, retries 3, delay 500ms, wait 7s\n"
                   "       rung 1 action ratchet_kill --signal KILL --wait-ms 7000 pattern worker\n") !=
        std::string::npos);
  r = run_sh(std::string(RATCHET_BINARY) + args + " --json");
  REQUIRE(r.code == 0);
  auto h = json::parse(r.out)["hosts"][0];
  CHECK(h["address"] == "127.0.0.1");
  CHECK(h["port"] == closed);
  CHECK(h["user"] == "deploy");
  auto st = h["steps"][0];
  CHECK(st["timeout_ms"] == 30000);
  CHECK(st["on_failure"] == "continue");
  CHECK(st["become"] == "root");
  CHECK(st["sudo_argv"] == "sudo -n -H -- /bin/sh -c ...");  // what a sudoers rule must allow
  CHECK(st["rungs"][0] == json({{"rung", 0}, {"kind", "verify"}, {"timeout_ms", 30000}, {"settle_ms", 2000},
                                {"retries", 3}, {"delay_ms", 500}}));
  CHECK(st["rungs"][1] == json({{"rung", 1}, {"kind", "kill"}, {"timeout_ms", 10000}, {"settle_ms", 4000},
                                {"retries", 3}, {"delay_ms", 500}, {"wait_ms", 7000}}));
  CHECK(st["commands"][0]["stdout_matches"] == "^GPU 0");
}

TEST_CASE("^C ends the run at once with exit 130 and a complete transcript", "[ssh][cli]") {
  Env e;
  std::string pb = e.playbook("slow.toml", "name = \"slow\"\n[[step]]\nid = \"slow\"\nkind = \"run\"\n"
                                           "command = \"sleep 30\"\n[[step]]\nid = \"after\"\nkind = \"run\"\n"
                                           "command = \"true\"\n");
  std::string t = e.dir + "/t.jsonl";
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 1);
    dup2(null, 2);
    std::string bin = RATCHET_BINARY;
    execl(bin.c_str(), bin.c_str(), "run", pb.c_str(), "-i", e.inv.c_str(), "-F", "none", "--transcript",
          t.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // wait until the slow command was sent, then interrupt
  REQUIRE(eventually([&] { return file_text(t).find("\"command\":\"sleep 30\"") != std::string::npos; }));
  auto t0 = std::chrono::steady_clock::now();
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(secs < 5);
  auto tr = ratchet::transcript::read_transcript(t);
  REQUIRE_FALSE(tr.events.empty());
  CHECK(tr.events.back()["event"] == "run_end");
  CHECK(tr.events.back()["status"] == "interrupted");
  CHECK(file_text(t).find("\"step\":\"after\"") == std::string::npos);
}

TEST_CASE("ssh config (-F) and --target [user@]host:port reach the host", "[ssh][cli]") {
  Env e;
  std::string cfg = e.dir + "/ssh_config";
  std::ofstream(cfg) << "Host labby\n  HostName 127.0.0.1\n  Port " << e.sshd.port() << "\n  User root\n"
                     << "  IdentityFile " << e.sshd.client_key() << "\n\nHost 127.0.0.1\n  IdentityFile "
                     << e.sshd.client_key() << "\n";
  std::string bin = std::string(RATCHET_BINARY) + " exec ";
  std::string kh = " --known-hosts " + e.sshd.known_hosts() + " -F " + cfg;
  auto r = run_sh(bin + "labby" + kh + " -- 'echo via config; whoami'");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out == "via config\nroot\n");
  r = run_sh(bin + "root@127.0.0.1:" + std::to_string(e.sshd.port()) + kh + " -- 'echo ad hoc'");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out == "ad hoc\n");
  std::string pb = e.playbook("t.toml", "name = \"t\"\n[[step]]\nid = \"s\"\nkind = \"run\"\ncommand = \"echo {{ host.address }}\"\n");
  r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " --target root@127.0.0.1:" + std::to_string(e.sshd.port()) +
             kh + " --transcript " + e.dir + "/t.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(file_text(e.dir + "/t.jsonl").find("\"data\":\"127.0.0.1\\n\"") != std::string::npos);
}

TEST_CASE("ssh-agent: a key held only by the agent logs in", "[ssh][cli]") {
  Env e;
  std::string sock = e.dir + "/agent.sock";
  auto a = run_sh("ssh-agent -s -a " + sock);
  REQUIRE(a.code == 0);
  auto at = a.out.find("SSH_AGENT_PID=");
  REQUIRE(at != std::string::npos);
  pid_t agent = std::stoi(a.out.substr(at + 14));
  struct Stop {  // the agent this test started, by PID, even on failure
    pid_t pid;
    ~Stop() { kill(pid, SIGTERM); }
  } stop{agent};
  REQUIRE(run_sh("SSH_AUTH_SOCK=" + sock + " ssh-add -q " + e.sshd.client_key()).code == 0);
  auto r = run_sh("SSH_AUTH_SOCK=" + sock + " " + RATCHET_BINARY + " exec root@127.0.0.1:" +
                  std::to_string(e.sshd.port()) + " --known-hosts " + e.sshd.known_hosts() +
                  " -F none -- 'echo via agent'");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out == "via agent\n");
  // Without the agent (and no identity) the same login is refused: exit 3.
  r = run_sh("SSH_AUTH_SOCK= " + std::string(RATCHET_BINARY) + " exec root@127.0.0.1:" +
             std::to_string(e.sshd.port()) + " --known-hosts " + e.sshd.known_hosts() + " -F none -- true");
  CHECK(r.code == 3);
}

TEST_CASE("a key marked @revoked is refused, even with --accept-new", "[ssh][cli]") {
  std::string kh = temp_dir("ratchet-revoked") + "/known_hosts";
  Env e(kh);
  std::string line = e.sshd.known_hosts_line();
  std::ofstream(kh) << "@revoked " << line << "\n";
  std::string pb = e.playbook("p.toml", "name = \"p\"\n[[step]]\nid = \"s\"\nkind = \"run\"\ncommand = \"true\"\n");
  auto r = e.ratchet("run " + pb + " -i " + e.inv + " --accept-new --transcript " + e.dir + "/t.jsonl");
  CHECK(r.code == 4);
  CHECK(r.out.find("marked @revoked") != std::string::npos);
  CHECK(file_text(kh) == "@revoked " + line + "\n");  // nothing appended
}

TEST_CASE("hosts: the effective address, port, user, jump and identity, nothing connects", "[cli]") {
  std::string dir = temp_dir("ratchet-hosts");
  std::ofstream(dir + "/cfg") << "Host labby\n  HostName 127.0.0.5\n  Port 2222\n  User deploy\n  IdentityFile "
                              << dir << "/key\n";
  std::ofstream(dir + "/inv.toml") << "[hosts.labby]\n[hosts.direct]\naddress = \"127.0.0.9\"\nport = 2300\n"
                                      "user = \"root\"\nidentity = \"/tmp/k2\"\njump = \"ops@bastion:22\"\n"
                                      "[groups]\nlab = [\"labby\", \"direct\"]\n";
  auto r = run_sh(std::string(RATCHET_BINARY) + " hosts -i " + dir + "/inv.toml -F " + dir + "/cfg --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto j = json::parse(r.out);
  REQUIRE(j.size() == 2);
  CHECK(j[0] == json({{"host", "labby"}, {"address", "127.0.0.5"}, {"port", 2222}, {"user", "deploy"},
                      {"jump", ""}, {"identity", dir + "/key"}}));
  CHECK(j[1]["jump"] == "ops@bastion:22");
  r = run_sh(std::string(RATCHET_BINARY) + " hosts -i " + dir + "/inv.toml -F " + dir + "/cfg --limit 'd*' --json");
  CHECK(json::parse(r.out).size() == 1);
  // A jump in the inventory loads (plan connects to nothing); tests/cli/jump_cli_test.cc runs through one.
  std::ofstream(dir + "/p.toml") << "name = \"p\"\n[[step]]\nid = \"s\"\nkind = \"run\"\ncommand = \"true\"\n";
  r = run_sh(std::string(RATCHET_BINARY) + " plan " + dir + "/p.toml -i " + dir + "/inv.toml -F " + dir + "/cfg");
  INFO(r.err);
  CHECK(r.code == 0);
  // A ProxyJump in the ssh config shows as written, not as libssh's `ssh -W` command.
  std::ofstream(dir + "/cfg", std::ios::app) << "  ProxyJump ops@b1:2200,b2\n";
  r = run_sh(std::string(RATCHET_BINARY) + " hosts -i " + dir + "/inv.toml -F " + dir + "/cfg --json");
  CHECK(json::parse(r.out)[0]["jump"] == "ops@b1:2200,b2");
}
