// The run lock and the audit line (docs/playbook.md, "Lock and audit") through
// the ratchet binary against a real loopback sshd. The sshd fixture's host is
// this machine: every lock_path and audit_log is under the test's own
// directory, never /run/lock or /var/log. Kills only the ratchet processes it
// started, by PID.
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "plan/codec.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "support/transcript_events.h"
#include "transcript/reader.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

struct Lab {
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-lock");
  std::string inv = dir + "/inventory.toml";
  std::string lock = dir + "/ratchet.lock";
  std::string audit = dir + "/log/runs.log";

  Lab() {
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
  }
  ~Lab() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  /// A playbook whose one step waits (up to 60 s) for DIR/go after writing DIR/started.
  std::string waiting_playbook(const std::string& extra = "", const std::string& name = "locked") {
    std::string p = dir + "/p.toml";
    std::ofstream(p) << "name = " << json(name).dump() << "\nlock = true\nlock_path = \"" << lock
                     << "\"\naudit_log = \"" << audit << "\"\n" << extra
                     << "[[step]]\nid = \"hold\"\nkind = \"run\"\ntimeout = \"90s\"\ncommand = \"touch " << dir
                     << "/started; i=0; while [ ! -e " << dir << "/go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\"\n";
    return p;
  }
  std::string args(const std::string& pb, const std::string& transcript, const std::string& more = "") const {
    return " run " + pb + " -i " + inv + " -F none --json --transcript " + transcript + more;
  }
};

std::string file_text(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

/// BackgroundRatchet with its files named DIR/TAG.out and DIR/TAG.err;
/// wait() gives the exit code (-1 when a signal ended it).
struct Bg : BackgroundRatchet {
  Bg(const std::string& dir, const std::string& tag, const std::string& args) : BackgroundRatchet(dir, args, tag) {}
  int wait() {
    int status = BackgroundRatchet::wait();
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
};

bool exists(const std::string& p) { return std::filesystem::exists(p); }

std::vector<std::string> lines_of(const std::string& p) {
  std::istringstream in(file_text(p));
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("lock: of two concurrent runs one proceeds and the other fails naming the holder", "[ssh][lock]") {
  Lab lab;
  std::string pb = lab.waiting_playbook();
  Bg first(lab.dir, "first", lab.args(pb, lab.dir + "/t1.jsonl"));
  REQUIRE(eventually([&] { return exists(lab.dir + "/started"); }, 30000));
  REQUIRE(exists(lab.lock + "/owner"));
  std::string owner = file_text(lab.lock + "/owner");

  auto second = run_sh(std::string(RATCHET_BINARY) + lab.args(pb, lab.dir + "/t2.jsonl"));
  INFO(second.out << second.err);
  CHECK(second.code == 1);
  json sum = json::parse(second.out);
  std::string reason = sum["hosts"][0]["reason"];
  auto t1_start = events_named(lab.dir + "/t1.jsonl", "run_start");
  REQUIRE(t1_start.size() == 1);
  std::string first_run = t1_start[0]["run_id"];
  CHECK(reason.rfind("locked by ", 0) == 0);
  CHECK(reason.find(" since ") != std::string::npos);
  CHECK(reason.find("(run " + first_run + ")") != std::string::npos);
  CHECK(owner.rfind(first_run + " ", 0) == 0);
  CHECK(sum["hosts"][0]["counts"]["skipped"] == 1);  // the step never ran
  auto locks = events_named(lab.dir + "/t2.jsonl", "lock");
  REQUIRE(locks.size() == 1);
  CHECK(locks[0]["ok"] == false);
  CHECK(locks[0]["holder"] == owner.substr(0, owner.size() - 1));

  // --lock-wait: waits while the first holds it, and takes it once it is released.
  Bg waiter(lab.dir, "waiter", lab.args(pb, lab.dir + "/t3.jsonl", " --lock-wait 60s"));
  // The waiter is waiting on the host: its lock command is recorded, its step not started.
  REQUIRE(eventually([&] { return !events_named(lab.dir + "/t3.jsonl", "command").empty(); }, 30000));
  CHECK(events_named(lab.dir + "/t3.jsonl", "step_start").empty());
  std::ofstream(lab.dir + "/go") << "";
  CHECK(first.wait() == 0);
  CHECK(waiter.wait() == 0);
  auto wl = events_named(lab.dir + "/t3.jsonl", "lock");
  REQUIRE(wl.size() == 2);
  CHECK(wl[0]["action"] == "take");
  CHECK(wl[0]["ok"] == true);
  CHECK(wl[1]["action"] == "release");
  CHECK(wl[1]["ok"] == true);
  CHECK_FALSE(exists(lab.lock));  // released at the end

  // One audit line per run that connected: the three of them.
  auto audit = lines_of(lab.audit);
  CHECK(audit.size() == 3);
}

TEST_CASE("lock: SIGINT of the holder releases the lock over its session", "[ssh][lock]") {
  Lab lab;
  std::string pb = lab.waiting_playbook();
  std::string t = lab.dir + "/t.jsonl";
  Bg holder(lab.dir, "holder", lab.args(pb, t));
  REQUIRE(eventually([&] { return exists(lab.dir + "/started"); }, 30000));
  REQUIRE(exists(lab.lock));
  kill(holder.pid, SIGINT);
  CHECK(holder.wait() == 130);
  CHECK_FALSE(exists(lab.lock));
  auto locks = events_named(t, "lock");
  REQUIRE(locks.size() == 2);
  CHECK(locks[1]["action"] == "release");
  CHECK(locks[1]["ok"] == true);
  auto audit = events_named(t, "audit");
  REQUIRE(audit.size() == 1);
  CHECK(json::parse(audit[0]["line"].get<std::string>())["status"] == "interrupted");
}

TEST_CASE("lock: a stale lock is refused without --break-lock and taken with it", "[ssh][lock]") {
  Lab lab;
  // A holder whose session is gone: this test's own PID with another start time (a recycled PID).
  REQUIRE(mkdir(lab.lock.c_str(), 0755) == 0);
  std::string stale = fmt::format("oldrun-1 bob@far 2026-01-01T10:02:00Z {} 1", getpid());
  std::ofstream(lab.lock + "/owner") << stale << "\n";
  std::ofstream(lab.dir + "/go") << "";
  std::string pb = lab.waiting_playbook("", "stale");
  std::ofstream(pb, std::ios::app) << "[[step]]\nid = \"note\"\nkind = \"run\"\ncommand = \"cat " << lab.lock
                                   << "/broken\"\n";

  auto refused = run_sh(std::string(RATCHET_BINARY) + lab.args(pb, lab.dir + "/t1.jsonl"));
  INFO(refused.out << refused.err);
  CHECK(refused.code == 1);
  std::string reason = json::parse(refused.out)["hosts"][0]["reason"];
  CHECK(reason.find("stale lock") != std::string::npos);
  CHECK(reason.find("bob@far") != std::string::npos);
  CHECK(reason.find("--break-lock") != std::string::npos);
  CHECK(file_text(lab.lock + "/owner") == stale + "\n");  // left as it was

  auto broke = run_sh(std::string(RATCHET_BINARY) + lab.args(pb, lab.dir + "/t2.jsonl", " --break-lock"));
  INFO(broke.out << broke.err);
  CHECK(broke.code == 0);
  auto locks = events_named(lab.dir + "/t2.jsonl", "lock");
  REQUIRE_FALSE(locks.empty());
  CHECK(locks[0]["ok"] == true);
  CHECK(locks[0]["broke"] == stale);
  // The note in the lock directory, read by the run's own step while it held it.
  bool noted = false;
  for (const auto& o : events_named(lab.dir + "/t2.jsonl", "output"))
    if (o["step"] == "note" && o.contains("data"))
      noted = o["data"].get<std::string>().rfind("broke " + stale + " by ", 0) == 0;
  CHECK(noted);
  CHECK_FALSE(exists(lab.lock));
}

TEST_CASE("lock: a lock that cannot be checked fails the host", "[ssh][lock]") {
  Lab lab;
  std::ofstream(lab.dir + "/go") << "";
  std::ofstream(lab.dir + "/file") << "";
  std::string pb = lab.waiting_playbook();
  std::string text = file_text(pb);
  text.replace(text.find(lab.lock), lab.lock.size(), lab.dir + "/file/sub.lock");  // under a regular file
  std::ofstream(pb) << text;
  auto r = run_sh(std::string(RATCHET_BINARY) + lab.args(pb, lab.dir + "/t.jsonl"));
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  std::string reason = json::parse(r.out)["hosts"][0]["reason"];
  CHECK(reason.find("could not check the lock") != std::string::npos);
  CHECK(events_named(lab.dir + "/t.jsonl", "step_start").size() == 1);  // recorded skipped, never run
}

TEST_CASE("audit: one line per run with the digest run printed, escaped, and never from a probe",
          "[ssh][audit]") {
  Lab lab;
  std::ofstream(lab.dir + "/go") << "";
  const std::string hostile = "evil\n{\"run_id\": \"forged\"}\n\"quoted\" name";
  std::string pb = lab.waiting_playbook("", hostile);
  auto r = run_sh(std::string(RATCHET_BINARY) + lab.args(pb, lab.dir + "/t.jsonl"));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  json sum = json::parse(r.out);
  auto lines = lines_of(lab.audit);
  REQUIRE(lines.size() == 1);  // the name's newlines did not make more lines
  json a = json::parse(lines[0]);
  CHECK(a["playbook"] == hostile);
  CHECK(a["run_id"] == sum["run_id"]);
  CHECK(a["digest"] == sum["hosts"][0]["digest"]);
  CHECK(a["status"] == "ok");
  CHECK(a["mode"] == "run");
  CHECK(a["host"] == "box");
  CHECK(a["plan_digest"].get<std::string>().size() == 64);
  struct stat st {};
  REQUIRE(stat(lab.audit.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
  auto ev = events_named(lab.dir + "/t.jsonl", "audit");
  REQUIRE(ev.size() == 1);
  CHECK(ev[0]["line"] == lines[0]);
  CHECK(ev[0]["ok"] == true);

  // A probe connects and checks, but writes no audit line and takes no lock.
  auto probe = run_sh(std::string(RATCHET_BINARY) + " plan " + pb + " -i " + lab.inv + " -F none --probe --transcript " +
                      lab.dir + "/p.jsonl");
  INFO(probe.out << probe.err);
  CHECK(lines_of(lab.audit).size() == 1);
  CHECK(events_named(lab.dir + "/p.jsonl", "lock").empty());

  // plan shows both.
  auto plan = run_sh(std::string(RATCHET_BINARY) + " plan " + pb + " -i " + lab.inv + " -F none");
  CHECK(plan.out.find("lock: taken before the first step (" + lab.lock + ")") != std::string::npos);
  CHECK(plan.out.find("audit line: appended to " + lab.audit) != std::string::npos);
}

TEST_CASE("audit: audit_log = false writes nothing and a failed write is only a warning", "[ssh][audit]") {
  Lab lab;
  std::ofstream(lab.dir + "/go") << "";
  std::string pb = lab.waiting_playbook();
  std::string text = file_text(pb);
  SECTION("audit_log = false") {
    text.replace(text.find("audit_log = \"" + lab.audit + "\""), lab.audit.size() + 14, "audit_log = false");
    std::ofstream(pb) << text;
    auto r = run_sh(std::string(RATCHET_BINARY) + lab.args(pb, lab.dir + "/t.jsonl"));
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_FALSE(exists(lab.dir + "/log"));
    CHECK(events_named(lab.dir + "/t.jsonl", "audit").empty());
  }
  SECTION("a write that fails") {
    std::ofstream(lab.dir + "/file") << "";
    text.replace(text.find(lab.audit), lab.audit.size(), lab.dir + "/file/runs.log");
    std::ofstream(pb) << text;
    auto r = run_sh(std::string(RATCHET_BINARY) + lab.args(pb, lab.dir + "/t.jsonl"));
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(r.err.find("warning: box: the audit line was not written to " + lab.dir + "/file/runs.log") !=
          std::string::npos);
    auto ev = events_named(lab.dir + "/t.jsonl", "audit");
    REQUIRE(ev.size() == 1);
    CHECK(ev[0]["ok"] == false);
    CHECK(ev[0].contains("warning"));
    CHECK(ratchet::transcript::read_transcript(lab.dir + "/t.jsonl").events.back()["event"] == "run_end");
  }
}

TEST_CASE("lock: exec takes the lock only with --lock, and writes its audit line", "[ssh][lock][audit]") {
  Lab lab;
  std::ofstream(lab.inv, std::ios::app) << "lock_path = \"" << lab.lock << "\"\naudit_log = \"" << lab.audit << "\"\n";
  const std::string exec = std::string(RATCHET_BINARY) + " exec box -F none -i " + lab.inv;
  // Free: taken around the command (which sees it), released after.
  auto r = run_sh(exec + " --lock -- cat " + lab.lock + "/owner");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(std::count(r.out.begin(), r.out.end(), ' ') == 4);  // RUN_ID WHO SINCE PID START
  CHECK(r.out.find("@") != std::string::npos);
  CHECK_FALSE(exists(lab.lock));
  // Held by a live run: exec --lock runs nothing; a plain exec does not look.
  std::string pb = lab.waiting_playbook();
  Bg holder(lab.dir, "holder", lab.args(pb, lab.dir + "/t.jsonl"));
  REQUIRE(eventually([&] { return exists(lab.dir + "/started"); }, 30000));
  auto locked = run_sh(exec + " --lock -- touch " + lab.dir + "/ran");
  CHECK(locked.code == 1);
  CHECK(locked.err.find("locked by ") != std::string::npos);
  CHECK(locked.err.find("nothing was run") != std::string::npos);
  CHECK_FALSE(exists(lab.dir + "/ran"));
  CHECK(run_sh(exec + " -- true").code == 0);
  std::ofstream(lab.dir + "/go") << "";
  CHECK(holder.wait() == 0);
  int execs = 0;
  for (const auto& l : lines_of(lab.audit)) execs += json::parse(l)["mode"] == "exec";
  CHECK(execs == 3);  // the one refused too
}

TEST_CASE("audit: apply writes the saved plan's digest", "[ssh][audit]") {
  Lab lab;
  std::ofstream(lab.dir + "/go") << "";
  std::string pb = lab.waiting_playbook();
  const std::string plan = lab.dir + "/p.plan";
  auto made = run_sh(std::string(RATCHET_BINARY) + " plan " + pb + " -i " + lab.inv + " -F none --out " + plan);
  INFO(made.out << made.err);
  REQUIRE(made.code == 0);
  std::string digest = json::parse(file_text(plan))["digest"];
  auto r = run_sh(std::string(RATCHET_BINARY) + " apply " + plan + " --json --transcript " + lab.dir + "/t.jsonl");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  auto lines = lines_of(lab.audit);
  REQUIRE(lines.size() == 1);
  json a = json::parse(lines[0]);
  CHECK(a["mode"] == "apply");
  CHECK(a["plan_digest"] == digest);
  CHECK(a["digest"] == json::parse(r.out)["hosts"][0]["digest"]);
}

TEST_CASE("apply: a plan whose lock, lock_path, audit_log or become was edited is refused as an edited step is",
          "[ssh][lock][apply]") {
  Lab lab;
  std::string pb = lab.waiting_playbook();
  const std::string bin = RATCHET_BINARY;
  const std::string plan = lab.dir + "/p.plan";
  auto made = run_sh(bin + " plan " + pb + " -i " + lab.inv + " -F none --out " + plan);
  INFO(made.out << made.err);
  REQUIRE(made.code == 0);
  const std::string original = file_text(plan);
  // A run holds the lock: a forged plan that drops or moves it must not get past.
  Bg holder(lab.dir, "holder", lab.args(pb, lab.dir + "/t.jsonl"));
  REQUIRE(eventually([&] { return exists(lab.dir + "/started"); }, 30000));
  // The plan file edited with the codec's digest recomputed, as a forger could; apply's stderr.
  auto forged_apply = [&](const std::function<void(json&)>& edit) {
    json doc = json::parse(original);
    edit(doc);
    doc["digest"] = ratchet::plan::digest_of(doc);
    std::ofstream(lab.dir + "/forged.plan", std::ios::trunc) << doc.dump(2) << "\n";
    auto r = run_sh(bin + " apply " + lab.dir + "/forged.plan --transcript " + lab.dir + "/forged.jsonl");
    INFO(r.out << r.err);
    CHECK(r.code == 2);
    CHECK_FALSE(exists(lab.dir + "/forged.jsonl"));
    CHECK(r.err.find("nothing was run") != std::string::npos);
    return r.err;
  };
  const std::string at = "host box: the plan built now differs from the saved one at ";
  const std::string fix = " make the plan again (ratchet plan ... --out FILE) and review it";
  std::string err = forged_apply([](json& d) { d["hosts"][0]["lock"] = false; });
  CHECK(err.find(at + "lock: false in the plan, \"" + lab.lock + "\" now;" + fix) != std::string::npos);
  err = forged_apply([&](json& d) { d["hosts"][0]["lock"] = lab.dir + "/other.lock"; });  // lock_path
  CHECK(err.find(at + "lock: \"" + lab.dir + "/other.lock\" in the plan, \"" + lab.lock + "\" now;" + fix) !=
        std::string::npos);
  err = forged_apply([](json& d) { d["hosts"][0]["audit_log"] = false; });
  CHECK(err.find(at + "audit_log: false in the plan, \"" + lab.audit + "\" now;" + fix) != std::string::npos);
  err = forged_apply([](json& d) {
    json& st = d["hosts"][0]["steps"][0];
    st["become"] = "root";
    st["become_user"] = "";
    st["sudo_argv"] = "sudo -n --";
  });
  CHECK(err.find(at + "steps[0].become (step `hold`): \"root\" in the plan, false now;" + fix) != std::string::npos);
  err = forged_apply([](json& d) { d["policy"]["serial"] = 1; });
  CHECK(err.find("the plan built now differs from the saved one at policy.serial: 1 in the plan, null now;" + fix) !=
        std::string::npos);

  // The plan as made applies: it takes the lock, so it waits its turn behind the holder.
  auto locked = run_sh(bin + " apply " + plan + " --json --transcript " + lab.dir + "/a1.jsonl");
  INFO(locked.out << locked.err);
  CHECK(locked.code == 1);
  CHECK(locked.out.find("locked by ") != std::string::npos);
  std::ofstream(lab.dir + "/go") << "";
  CHECK(holder.wait() == 0);
  auto ok = run_sh(bin + " apply " + plan + " --json --transcript " + lab.dir + "/a2.jsonl");
  INFO(ok.out << ok.err);
  CHECK(ok.code == 0);
  CHECK(events_named(lab.dir + "/a2.jsonl", "lock").size() == 2);  // taken and released
}
