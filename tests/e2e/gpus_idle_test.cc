// verify gpus_idle against a real sshd on 127.0.0.1 (issue 17), and once on a real
// systemd host, with a stand-in
// GPU: a plain file as its device file and tests/gpu/fake-nvidia-smi first on
// the host's PATH (sshd's SetEnv), which lists the processes holding that file
// as the driver lists CUDA contexts. Only processes these tests start are ever
// signalled (by PID, through ratchet's kill rungs); each is killed by its PID
// when its test ends, also on failure.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "support/systemd_fixture.h"
#include "transcript/reader.h"
#include "util/text.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

const char* kUuid = "GPU-5f1e0b6c-2d0e-4b7e-9d42-1c1b3d7b9a10";

// A fresh scratch directory made before the sshd that puts its bin/ on PATH.
std::string make_dir() {
  std::string d = temp_dir("ratchet-gpus");
  chmod(d.c_str(), 0755);  // holders running as nobody open the stand-in devices
  return d;
}

struct GpuLab {
  std::string dir = make_dir();
  SshdHost sshd{"EXTRA_SSHD_CONFIG='SetEnv PATH=" + dir + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'"};
  std::string inv = dir + "/inventory.toml";
  std::string smi_dir = dir + "/bin/nvidia-smi.d";

  GpuLab() {
    std::filesystem::create_directories(smi_dir);
    std::filesystem::create_directories(dir + "/dev");
    chmod((dir + "/dev").c_str(), 0755);
    std::filesystem::create_symlink(std::string(RATCHET_SOURCE_DIR) + "/tests/gpu/fake-nvidia-smi", dir + "/bin/nvidia-smi");
    for (const char* n : {"nvidia0", "nvidiactl", "nvidia-uvm"}) {
      write_file(dev(n), "");
      chmod(dev(n).c_str(), 0644);
    }
    write_file(smi_dir + "/gpus", std::string("0 ") + kUuid + " 143771 " + dev("nvidia0") + " NVIDIA H200 (stand-in)\n");
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
  }
  std::string dev(const std::string& n) const { return dir + "/dev/" + n; }
  std::string devices() const { return dir + "/dev/nvidia*"; }
  ShellResult run(const std::string& body, const std::string& t) {
    std::string pb = dir + "/pb.toml";
    write_file(pb, "name = \"gpus\"\ntargets = [\"box\"]\n" + body);
    return run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inv + " -F none --transcript " + t);
  }
  /// The verify gpus_idle step `g` over the stand-in devices, with `extra` keys and rungs.
  std::string step(const std::string& extra = "") const {
    return "[[step]]\nid = \"g\"\nkind = \"verify\"\ngpus_idle = true\ngpu_devices = \"" + devices() + "\"\n" + extra;
  }
};

std::vector<json> events(const std::string& t, const std::string& kind, const std::string& step = "g") {
  std::vector<json> out;
  for (const auto& e : ratchet::transcript::read_transcript(t).events)
    if (e["event"] == kind && e.value("step", "") == step) out.push_back(e);
  return out;
}

json step_end(const std::string& t, const std::string& step = "g") {
  auto e = events(t, "step_end", step);
  return e.empty() ? json() : e.back();
}

/// The check evidence of step g, in order.
std::vector<json> checks(const std::string& t) {
  std::vector<json> out;
  for (const auto& e : events(t, "evidence"))
    if (e["role"] == "check") out.push_back(e);
  return out;
}

bool holds_file(pid_t pid, const std::string& path) {
  return run_local("find /proc/" + std::to_string(pid) + "/fd -lname '" + path + "' | wc -l") == "1\n";
}

}  // namespace

TEST_CASE("gpus_idle: an idle stand-in GPU passes with its per-GPU evidence", "[ssh][gpus]") {
  GpuLab lab;
  std::string t = lab.dir + "/t.jsonl";
  auto r = lab.run(lab.step() + "[[step]]\nid = \"notes\"\nkind = \"write\"\npath = \"" + lab.dir +
                       "/notes.md\"\ncontent = \"{{ steps.g.gpus }}\"\n",
                   t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(step_end(t)["status"] == "ok");
  auto c = checks(t);
  REQUIRE(c.size() == 1);
  CHECK(c[0]["holds"] == true);
  REQUIRE(c[0]["gpus"].size() == 1);
  const json& g = c[0]["gpus"][0];
  CHECK(g["index"] == 0);
  CHECK(g["uuid"] == kUuid);
  CHECK(g["name"] == "NVIDIA H200 (stand-in)");
  CHECK(g["memory_used_mib"] == 0);
  CHECK(g["memory_total_mib"] == 143771);
  CHECK(g["processes"] == json::array());
  CHECK(g["holders"] == json::array());
  CHECK(g["idle"] == true);
  auto cmd = events(t, "command");
  REQUIRE(cmd.size() == 1);
  CHECK(cmd[0]["command"] == "ratchet_gpus_idle -- '" + lab.devices() + "'");
  std::string notes = run_local("cat " + lab.dir + "/notes.md");
  CHECK(notes.find(std::string("| 0 ") + kUuid + " | NVIDIA H200 (stand-in) | 0 / 143771 MiB | 0 % | none | none | idle |") !=
        std::string::npos);
}

TEST_CASE("gpus_idle: a compute process of the test user fails then passes after a kill holders_of rung",
          "[ssh][gpus]") {
  GpuLab lab;
  OwnedProcess worker("exec setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 300 3<" + lab.dev("nvidia0") +
                      " 4<" + lab.dev("nvidiactl") + " 5<" + lab.dev("nvidia-uvm"));
  REQUIRE(eventually([&] { return holds_file(worker.pid(), lab.dev("nvidia0")); }));
  const pid_t wpid = worker.pid();  // alive() forgets it once reaped
  std::string t = lab.dir + "/t.jsonl";
  auto r = lab.run(lab.step("user = \"nobody\"\n  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = \"" + lab.devices() +
                            "\"\n  user = \"nobody\"\n  signal = \"TERM\"\n  wait = \"5s\"\n") +
                       "[[step]]\nid = \"notes\"\nkind = \"write\"\npath = \"" + lab.dir +
                       "/notes.md\"\ncontent = \"before\\n{{ steps.g.gpus }}\\nafter\\n{{ steps.g.gpus_after }}\\n\"\n",
                   t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  json end = step_end(t);
  CHECK(end["status"] == "escalated");
  CHECK(end["rung"] == 1);
  CHECK_FALSE(worker.alive());
  auto c = checks(t);
  REQUIRE(c.size() == 2);
  // Before: the driver lists the worker, the kernel says it holds the device; 866 MiB used.
  CHECK(c[0]["holds"] == false);
  const std::string w = std::to_string(wpid);
  CHECK(c[0]["note"] == "GPU 0: 1 compute process(es) listed by the driver (PID " + w + " (sleep)), 1 process(es) hold "
                        "its device file (PID " + w + "), 866 MiB used, above max_memory_used 512 MiB");
  const json& g = c[0]["gpus"][0];
  CHECK(g["memory_used_mib"] == 866);
  REQUIRE(g["processes"].size() == 1);
  CHECK(g["processes"][0]["pid"] == wpid);
  CHECK(g["processes"][0]["user"] == "nobody");
  CHECK(g["processes"][0]["used_memory_mib"] == 866);
  CHECK(g["processes"][0]["selected"] == true);
  CHECK(g["processes"][0]["holds_device_file"] == true);
  REQUIRE(g["holders"].size() == 1);
  std::set<std::string> files;
  for (const auto& f : g["holders"][0]["files"]) files.insert(f.get<std::string>());
  CHECK(files == std::set<std::string>{lab.dev("nvidia-uvm"), lab.dev("nvidia0"), lab.dev("nvidiactl")});
  CHECK(g["disagreements"] == json::array());
  REQUIRE(c[0]["holders"].size() == 1);
  CHECK(c[0]["holders"][0]["pid"] == wpid);
  // After the rung: nothing listed, nothing held, memory back to 0.
  CHECK(c[1]["holds"] == true);
  CHECK(c[1]["gpus"][0]["memory_used_mib"] == 0);
  CHECK(c[1]["gpus"][0]["processes"] == json::array());
  CHECK(c[1]["gpus"][0]["idle"] == true);
  // The rung selected from ratchet's /proc scan: the worker, by PID.
  bool signalled = false;
  for (const auto& e : events(t, "evidence"))
    if (e.contains("signalled"))
      for (const auto& p : e["signalled"]) signalled |= p["pid"] == wpid;
  CHECK(signalled);
  std::string notes = run_local("cat " + lab.dir + "/notes.md");
  CHECK(notes.find("| 866 / 143771 MiB | 37 % | PID " + w + " sleep (nobody) 866 MiB | PID " + w + " sleep (nobody) | busy: ") !=
        std::string::npos);
  CHECK(notes.find("after\n| GPU |") != std::string::npos);
  CHECK(notes.find("| 0 / 143771 MiB | 0 % | none | none | idle |") != std::string::npos);
}

TEST_CASE("gpus_idle: a PID the driver lists that holds no device file is a disagreement", "[ssh][gpus]") {
  GpuLab lab;
  OwnedProcess ghost("exec sleep 301");
  REQUIRE(eventually([&] { return ghost.alive(); }));
  write_file(lab.smi_dir + "/extra_apps", std::string(kUuid) + ", " + std::to_string(ghost.pid()) + ", /usr/bin/sleep, 600\n");
  std::string t = lab.dir + "/t.jsonl";
  auto r = lab.run(lab.step(), t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  json end = step_end(t);
  CHECK(end["status"] == "failed");
  const std::string p = std::to_string(ghost.pid());
  CHECK(end["reason"] == "GPU 0: 1 compute process(es) listed by the driver (PID " + p + " (sleep)), 600 MiB used, above "
                         "max_memory_used 512 MiB; driver and kernel disagree: GPU 0: PID " + p + " (sleep) is listed "
                         "by the driver on GPU 0 but holds none of its device files");
  auto c = checks(t);
  REQUIRE(c.size() == 1);
  CHECK(c[0]["gpus"][0]["disagreements"] ==
        json::array({"PID " + p + " (sleep) is listed by the driver on GPU 0 but holds none of its device files"}));
  CHECK(c[0]["gpus"][0]["processes"][0]["holds_device_file"] == false);
  CHECK(c[0]["gpus"][0]["processes"][0]["visible"] == true);
  CHECK(ghost.alive());
}

TEST_CASE("gpus_idle: memory above the floor with no process fails with that reason", "[ssh][gpus]") {
  GpuLab lab;
  write_file(lab.smi_dir + "/leak.0", "2048\n");
  std::string t = lab.dir + "/t.jsonl";
  auto r = lab.run(lab.step(), t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(step_end(t)["reason"] ==
        "GPU 0: 2048 MiB used with no compute process listed, above max_memory_used 512 MiB (a leaked context?)");
  // A floor above it: idle.
  t = lab.dir + "/t2.jsonl";
  r = lab.run(lab.step("max_memory_used = 4096\n"), t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(step_end(t)["status"] == "ok");
}

TEST_CASE("gpus_idle: nvidia-smi missing or exiting non-zero could not check and runs no rung", "[ssh][gpus]") {
  GpuLab lab;
  const std::string rung = "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = \"" + lab.devices() +
                           "\"\n  signal = \"KILL\"\n";
  auto no_rung_ran = [](const std::string& t) {
    for (const auto& e : events(t, "command"))
      if (e["rung"] != 0) return false;
    return true;
  };
  // Named by a path where there is none.
  std::string t = lab.dir + "/t1.jsonl";
  auto r = lab.run(lab.step("nvidia_smi = \"" + lab.dir + "/none/nvidia-smi\"\n" + rung), t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(step_end(t)["reason"] == "could not check: " + lab.dir + "/none/nvidia-smi not found: no nvidia-smi there");
  CHECK(checks(t).at(0)["could_not_check"] == true);
  CHECK(no_rung_ran(t));
  // Not on the host's PATH.
  std::filesystem::rename(lab.dir + "/bin/nvidia-smi", lab.dir + "/bin/nvidia-smi.off");
  t = lab.dir + "/t2.jsonl";
  r = lab.run(lab.step(rung), t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(step_end(t)["reason"].get<std::string>().rfind("could not check: nvidia-smi not found on PATH (" + lab.dir + "/bin:", 0) == 0);
  CHECK(no_rung_ran(t));
  std::filesystem::rename(lab.dir + "/bin/nvidia-smi.off", lab.dir + "/bin/nvidia-smi");
  // Exits non-zero (the driver's own words: it prints them on stdout).
  write_file(lab.smi_dir + "/fail", "9\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                                    "Make sure that the latest NVIDIA driver is installed and running.\n");
  t = lab.dir + "/t3.jsonl";
  r = lab.run(lab.step(rung), t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(step_end(t)["reason"] == "could not check: nvidia-smi --query-gpu exited 9: NVIDIA-SMI has failed because it "
                                 "couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver "
                                 "is installed and running.");
  CHECK(no_rung_ran(t));
}

// The PIDs the stand-in recorded as hanging (hang.pids); each is KILLed by its
// PID when the test ends, also on failure (the stand-in sleeps at most 120 s).
struct HungStandIns {
  std::string file;
  std::vector<long long> pids() const {
    std::vector<long long> out;
    std::ifstream in(file);
    for (long long p; in >> p;) out.push_back(p);
    return out;
  }
  ~HungStandIns() {
    for (long long p : pids())
      if (run_local("cat /proc/" + std::to_string(p) + "/cmdline 2>/dev/null | tr '\\0' ' '").rfind("sleep 120", 0) == 0)
        kill(static_cast<pid_t>(p), SIGKILL);
  }
};

TEST_CASE("gpus_idle: a wedged nvidia-smi is ended at smi_timeout: could not check, no rung, its process gone",
          "[ssh][gpus]") {
  GpuLab lab;
  HungStandIns hung{lab.smi_dir + "/hang.pids"};
  const std::string rung = "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = \"" + lab.devices() +
                           "\"\n  signal = \"KILL\"\n";
  auto run_hung = [&](const std::string& keys, const std::string& t) {
    auto start = std::chrono::steady_clock::now();
    auto r = lab.run(lab.step(keys + rung), t);
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  };
  auto gone = [](long long pid) { return !std::filesystem::exists("/proc/" + std::to_string(pid)); };
  // The first query hangs: 2 s, then TERM ends it.
  write_file(lab.smi_dir + "/hang", "120\n");
  std::string t = lab.dir + "/t1.jsonl";
  long long ms = run_hung("smi_timeout = \"2s\"\n", t);
  CHECK(ms >= 2000);
  CHECK(ms < 15000);  // far below the step's 60 s timeout
  REQUIRE(hung.pids().size() == 1);
  const long long p1 = hung.pids()[0];
  CHECK(step_end(t)["reason"] ==
        fmt::format("could not check: nvidia-smi did not answer in 2s (--query-gpu; PID {} ended by ratchet with TERM)", p1));
  CHECK(step_end(t)["status"] == "failed");
  CHECK(checks(t).at(0)["could_not_check"] == true);
  CHECK(events(t, "command").size() == 1);  // the check only: no rung
  CHECK(events(t, "command").at(0)["command"] == "ratchet_gpus_idle --smi-timeout 2000 -- '" + lab.devices() + "'");
  CHECK(gone(p1));
  // The second query hangs: the first answered, the second is bounded on its own.
  write_file(lab.smi_dir + "/hang", "120\n--query-compute-apps\n");
  t = lab.dir + "/t2.jsonl";
  run_hung("smi_timeout = \"1s\"\n", t);
  REQUIRE(hung.pids().size() == 2);
  const long long p2 = hung.pids()[1];
  CHECK(step_end(t)["reason"] ==
        fmt::format("could not check: nvidia-smi did not answer in 1s (--query-compute-apps; PID {} ended by ratchet "
                    "with TERM)", p2));
  CHECK(gone(p2));
  // The default bound: 10 s.
  write_file(lab.smi_dir + "/hang", "120\n");
  t = lab.dir + "/t3.jsonl";
  ms = run_hung("", t);
  CHECK(ms >= 10000);
  CHECK(ms < 25000);
  REQUIRE(hung.pids().size() == 3);
  CHECK(step_end(t)["reason"] ==
        fmt::format("could not check: nvidia-smi did not answer in 10s (--query-gpu; PID {} ended by ratchet with TERM)",
                    hung.pids()[2]));
  CHECK(gone(hung.pids()[2]));
}

TEST_CASE("gpus_idle in MIG mode: an instance is judged alone, [N/A] never fails, an unattributed holder could not check",
          "[ssh][gpus][mig]") {
  GpuLab lab;
  const std::string mig_a = "MIG-feb88891-0321-5fef-9c87-d4af3b54259e", mig_b = "MIG-a25704ba-3a06-5299-a795-fd7cf4d13973";
  // Two instances of GPU 0; a process holding an instance's marker runs on it.
  std::filesystem::create_directories(lab.dir + "/mig");
  chmod((lab.dir + "/mig").c_str(), 0755);
  for (const char* m : {"a", "b"}) {
    write_file(lab.dir + "/mig/" + m, "");
    chmod((lab.dir + "/mig/" + m).c_str(), 0644);
  }
  write_file(lab.smi_dir + "/mig", "0 0 9 0 " + mig_a + " 9856 " + lab.dir + "/mig/a MIG 1g.10gb\n0 1 10 0 " + mig_b +
                                       " 9856 " + lab.dir + "/mig/b MIG 1g.10gb\n");
  OwnedProcess busy("exec setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 302 3<" + lab.dev("nvidia0") + " 4<" +
                    lab.dir + "/mig/b");
  REQUIRE(eventually([&] { return holds_file(busy.pid(), lab.dir + "/mig/b"); }));
  const std::string bp = std::to_string(busy.pid());
  // The idle instance beside its busy sibling: ok; utilization is [N/A] throughout.
  std::string t = lab.dir + "/t1.jsonl";
  auto r = lab.run(lab.step("gpus = [\"" + mig_a + "\"]\nuser = \"nobody\"\n"), t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(step_end(t)["status"] == "ok");
  auto c = checks(t);
  REQUIRE(c.size() == 1);
  REQUIRE(c[0]["gpus"].size() == 2);
  CHECK(c[0]["gpus"][0]["utilization_pct"].is_null());
  CHECK(c[0]["gpus"][0]["selected"] == false);
  CHECK(c[0]["gpus"][1]["uuid"] == mig_a);
  CHECK(c[0]["gpus"][1]["memory_used_mib"] == 0);
  CHECK(c[0]["gpus"][1]["mig"]["gpu_instance_id"] == 9);
  CHECK(c[0]["gpus"][1]["idle"] == true);
  CHECK(events(t, "command").at(0)["command"] == "ratchet_gpus_idle --mig --user nobody -- '" + lab.devices() + "'");
  // The busy instance: its process and its memory.
  t = lab.dir + "/t2.jsonl";
  r = lab.run(lab.step("gpus = [\"" + mig_b + "\"]\nuser = \"nobody\"\n"), t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(step_end(t)["reason"] == "MIG " + mig_b + ": 1 compute process(es) on this instance (PID " + bp + " (sleep)), 1 "
                                 "process(es) of this instance hold the GPU's device file (PID " + bp + "), 866 MiB used, "
                                 "above max_memory_used 512 MiB");
  CHECK(busy.alive());
  // A holder of GPU 0's device file that the driver names no instance for.
  OwnedProcess stray("exec setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 303 3<" + lab.dev("nvidia0"));
  REQUIRE(eventually([&] { return holds_file(stray.pid(), lab.dev("nvidia0")); }));
  const std::string sp = std::to_string(stray.pid());
  t = lab.dir + "/t3.jsonl";
  r = lab.run(lab.step("gpus = [\"" + mig_a + "\"]\nuser = \"nobody\"\n"), t);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(step_end(t)["reason"] == "could not check: MIG " + mig_a + ": PID " + sp + " (sleep) holds " + lab.dev("nvidia0") +
                                 " of GPU 0 but nvidia-smi names no MIG instance for it; PID " + sp + " (sleep) runs on "
                                 "GPU 0 but nvidia-smi names no MIG instance for it");
  CHECK(checks(t).at(0)["could_not_check"] == true);
  CHECK(stray.alive());
}

TEST_CASE("gpus_idle: an excluded bystander is listed but never selected", "[ssh][gpus]") {
  GpuLab lab;
  std::string keepd = lab.dir + "/keepd";  // comm "keepd": a link to sleep
  std::filesystem::create_symlink("/bin/sleep", keepd);
  OwnedProcess bystander("exec " + keepd + " 300 3<" + lab.dev("nvidia0") + " 4<" + lab.dev("nvidiactl"));
  OwnedProcess worker("exec sleep 302 3<" + lab.dev("nvidia0"));
  REQUIRE(eventually([&] {
    return holds_file(bystander.pid(), lab.dev("nvidia0")) && holds_file(worker.pid(), lab.dev("nvidia0"));
  }));
  std::string t = lab.dir + "/t.jsonl";
  auto r = lab.run(lab.step("exclude = \"keepd\"\n  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = \"" +
                            lab.devices() + "\"\n  exclude = \"keepd\"\n  signal = \"KILL\"\n  wait = \"5s\"\n"),
                   t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(step_end(t)["status"] == "escalated");
  CHECK(bystander.alive());
  CHECK_FALSE(worker.alive());
  auto c = checks(t);
  REQUIRE(c.size() == 2);
  // Listed in both views, marked left out; its memory is not the selection's.
  for (const auto& e : c) {
    const json& g = e["gpus"][0];
    bool listed = false, held = false;
    for (const auto& p : g["processes"])
      if (p["pid"] == bystander.pid()) {
        listed = true;
        CHECK(p["selected"] == false);
        CHECK(p["left_out"] == "excluded: keepd");
      }
    for (const auto& h : g["holders"])
      if (h["pid"] == bystander.pid()) {
        held = true;
        CHECK(h["selected"] == false);
      }
    CHECK(listed);
    CHECK(held);
    for (const auto& h : e.value("holders", json::array())) CHECK(h["pid"] != bystander.pid());
  }
  CHECK(c[1]["gpus"][0]["memory_used_mib"] == 866);
  CHECK(c[1]["gpus"][0]["memory_unexplained_mib"] == 0);
  CHECK(c[1]["holds"] == true);
  for (const auto& e : events(t, "evidence"))
    for (const auto& p : e.value("signalled", json::array())) CHECK(p["pid"] != bystander.pid());
}

// The same condition on a real systemd host (systemd-nspawn on 127.0.0.1), over the
// gpu-release scene of tests/lab/stage-inference.sh: eight stand-in GPUs
// (nvidia0..nvidia7), an orphaned worker holding all of them (ignores TERM), the server
// started by hand holding nvidiactl only, and nvidia-persistenced (kept) holding
// nvidiactl. The fake nvidia-smi goes to /usr/local/bin, on the host's own PATH.
TEST_CASE("gpus_idle on a real systemd host: eight stand-in GPUs freed by TERM then KILL rungs",
          "[systemd][e2e][gpus]") {
  SystemdHost host;
  auto scene = host.stage_inference();
  const std::string d = scene.at("DEVICE_DIR");
  std::string gpus;
  for (int i = 0; i < 8; ++i)
    gpus += fmt::format("{} GPU-0000000{}-0000-4000-8000-000000000000 143771 {}/nvidia{} NVIDIA H200 (stand-in)\n", i, i,
                        d, i);
  std::string out;
  REQUIRE(host.ssh("mkdir -p /usr/local/bin/nvidia-smi.d && echo " +
                       ratchet::util::base64(read_file(std::string(RATCHET_SOURCE_DIR) + "/tests/gpu/fake-nvidia-smi")) +
                       " | base64 -d > /usr/local/bin/nvidia-smi && chmod 755 /usr/local/bin/nvidia-smi && echo " +
                       ratchet::util::base64(gpus) + " | base64 -d > /usr/local/bin/nvidia-smi.d/gpus && echo ok",
                   &out) == 0);
  REQUIRE(out == "ok\n");
  std::string dir = temp_dir("ratchet-gpus-systemd");
  std::string inv = dir + "/inventory.toml";
  std::ofstream(inv) << "[hosts.lab]\naddress = \"127.0.0.1\"\nport = " << host.port() << "\nuser = \"root\"\nidentity = \""
                     << host.client_key() << "\"\nknown_hosts = \"" << host.known_hosts() << "\"\n";
  std::string pb = dir + "/pb.toml";
  write_file(pb, "name = \"g\"\ntargets = [\"lab\"]\n[[step]]\nid = \"g\"\nkind = \"verify\"\ngpus_idle = true\n"
                 "gpu_devices = \"" + scene.at("DEVICE_GLOB") + "\"\nexclude = \"nvidia-persistenced\"\nretries = 2\n"
                 "delay = \"500ms\"\n"
                 "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = \"" + scene.at("DEVICE_GLOB") +
                 "\"\n  exclude = \"nvidia-persistenced\"\n  signal = \"TERM\"\n  wait = \"2s\"\n"
                 "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = \"" + scene.at("DEVICE_GLOB") +
                 "\"\n  exclude = \"nvidia-persistenced\"\n  signal = \"KILL\"\n  wait = \"5s\"\n");
  std::string t = dir + "/t.jsonl";
  auto r = run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inv + " -F none --transcript " + t);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  json end = step_end(t);
  CHECK(end["status"] == "escalated");
  CHECK(end["rung"] == 2);
  auto c = checks(t);
  REQUIRE(c.size() >= 2);
  const long long worker = std::stoll(scene.at("WORKER_PID")), server = std::stoll(scene.at("SERVER_PID")),
                  keep = std::stoll(scene.at("KEEP_PID"));
  // Before: the worker on every GPU in both views; the server holds the shared nvidiactl.
  REQUIRE(c[0]["gpus"].size() == 8);
  for (const auto& g : c[0]["gpus"]) {
    INFO(g.dump());
    CHECK(g["memory_used_mib"] == 866);
    REQUIRE(g["processes"].size() == 1);
    CHECK(g["processes"][0]["pid"] == worker);
    CHECK(g["processes"][0]["holds_device_file"] == true);
    CHECK(g["idle"] == false);
  }
  const std::string note = c[0]["note"];
  CHECK(note.find("GPU 7: 1 compute process(es) listed by the driver (PID " + scene.at("WORKER_PID")) != std::string::npos);
  CHECK(note.find("process(es) hold device files every GPU shares (PID " + scene.at("SERVER_PID") + ": nvidiactl)") !=
        std::string::npos);
  std::set<long long> found;
  for (const auto& h : c[0]["holders"]) found.insert(h["pid"].get<long long>());
  CHECK(found == std::set<long long>{server, worker});
  // After: every GPU idle, nothing listed; the kept daemon never selected nor signalled.
  const json& last = c.back();
  CHECK(last["holds"] == true);
  for (const auto& g : last["gpus"]) {
    CHECK(g["idle"] == true);
    CHECK(g["processes"] == json::array());
    CHECK(g["memory_used_mib"] == 0);
  }
  for (const auto& e : events(t, "evidence"))
    for (const auto& p : e.value("signalled", json::array())) CHECK(p["pid"] != keep);
  out.clear();
  host.ssh("test -d /proc/" + scene.at("KEEP_PID") + " && echo alive", &out);
  CHECK(out == "alive\n");
}
