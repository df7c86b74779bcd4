// verify gpus_idle (steps/gpus.cc): the driver's CSV read with exact values,
// the per-GPU verdict and evidence from ratchet_gpus_idle's lines, the command
// the builder makes, and the loader's checks of the keys (file:line:col).
#include <catch2/catch.hpp>

#include "support/exec_result.h"

#include "playbook/schema.h"
#include "support/action_of.h"

#include <fstream>

#include "playbook/loader.h"
#include "steps/gpus.h"
#include "steps/kinds.h"
#include "support/scratch_dir.h"
#include "util/gpu_table.h"

using namespace ratchet::steps;
using ratchet::testing::exec_result;
using ratchet::transport::ExecResult;
using ratchet::util::Value;

namespace {

// Two stand-in UUIDs in the driver's form.
const std::string kU0 = "GPU-5f1e0b6c-2d0e-4b7e-9d42-1c1b3d7b9a10";
const std::string kU1 = "GPU-0a9d8c7b-6e5f-4a3b-8c2d-1e0f9a8b7c6d";

std::string gpu(int index, const std::string& uuid, long long used, long long util = 0) {
  return "gpu\t" + std::to_string(index) + ", " + uuid + ", NVIDIA H200, " + std::to_string(used) +
         ", 143771, " + std::to_string(util) + "\n";
}
std::string app(const std::string& uuid, long long pid, const std::string& name, long long mib) {
  return "app\t" + uuid + ", " + std::to_string(pid) + ", " + name + ", " + std::to_string(mib) + "\n";
}
// A process line (docs/host-library.md) tagged `tag`, holding `files`.
std::string proc(const std::string& tag, long long pid, const std::string& user, const std::string& comm,
                 const std::string& files) {
  return tag + "\t" + std::to_string(pid) + "\t" + user + "\t1000\t1796000000.00\t" + comm + "\t" + comm +
         " --serve\tS\t-\t" + files + "\n";
}
std::string sel(long long pid) { return "selected\t" + std::to_string(pid) + "\n"; }

Expect::Gpus want(std::vector<std::string> gpus = {"all"}, std::vector<std::string> user = {},
                  std::vector<std::string> exclude = {}) {
  return {std::move(gpus), 512, std::move(user), std::move(exclude)};
}

Command gpus_check(Expect::Gpus g = want()) {
  Command c;
  c.judge = Judge::gpus;
  c.expect.gpus = std::move(g);
  return c;
}


}  // namespace

TEST_CASE("gpus: a --query-gpu line of the driver is read with exact values", "[steps][gpus]") {
  std::string err;
  auto g = parse_smi_gpu("0, " + kU0 + ", NVIDIA H200, 866, 143771, 37", &err);
  REQUIRE(g);
  CHECK(g->index == 0);
  CHECK(g->uuid == kU0);
  CHECK(g->name == "NVIDIA H200");
  CHECK(g->memory_used == 866);
  CHECK(g->memory_total == 143771);
  CHECK(g->utilization == 37);
  // A name holding ", " stays whole; values the driver does not have are nullopt.
  g = parse_smi_gpu("3, " + kU1 + ", Odd, Name, [N/A], 81559, [Not Supported]", &err);
  REQUIRE(g);
  CHECK(g->index == 3);
  CHECK(g->name == "Odd, Name");
  CHECK_FALSE(g->memory_used);
  CHECK(g->memory_total == 81559);
  CHECK_FALSE(g->utilization);
  // Anything else is not read as a GPU.
  CHECK_FALSE(parse_smi_gpu("index, uuid, name, memory.used [MiB], memory.total [MiB], utilization.gpu [%]", &err));
  CHECK(err == "a line ratchet cannot read (index is not a number): \"index, uuid, name, memory.used [MiB], "
               "memory.total [MiB], utilization.gpu [%]\"");
  CHECK_FALSE(parse_smi_gpu("0, " + kU0 + ", NVIDIA H200, 866 MiB, 143771 MiB, 37 %", &err));
  CHECK(err.find("(memory.used is not a number)") != std::string::npos);
  CHECK_FALSE(parse_smi_gpu("0, " + kU0, &err));
  CHECK(err.find("(not index, uuid, name, memory.used, memory.total, utilization.gpu)") != std::string::npos);
}

TEST_CASE("gpus: a --query-compute-apps line of the driver is read with exact values", "[steps][gpus]") {
  std::string err;
  auto a = parse_smi_app(kU0 + ", 561, /opt/torch/.venv/bin/python3, 866", &err);
  REQUIRE(a);
  CHECK(a->gpu_uuid == kU0);
  CHECK(a->pid == 561);
  CHECK(a->process_name == "/opt/torch/.venv/bin/python3");
  CHECK(a->used_memory == 866);
  a = parse_smi_app(kU0 + ", 7, my, app, [N/A]", &err);
  REQUIRE(a);
  CHECK(a->process_name == "my, app");
  CHECK_FALSE(a->used_memory);
  CHECK_FALSE(parse_smi_app(kU0 + ", -4, x, 1", &err));
  CHECK(err == "a line ratchet cannot read (pid is not a number): \"" + kU0 + ", -4, x, 1\"");
  CHECK_FALSE(parse_smi_app(kU0 + ", 4, x", &err));
}

TEST_CASE("gpus: an idle GPU passes with its evidence", "[steps][gpus]") {
  auto v = judge_gpus(gpus_check(), exec_result(0, gpu(0, kU0, 0)));
  CHECK(v.holds);
  CHECK_FALSE(v.unknown);
  CHECK(v.reason == "");
  CHECK(v.holders.empty());
  REQUIRE(v.gpus.size() == 1);
  const Value& g = v.gpus[0];
  CHECK(g["index"] == 0);
  CHECK(g["uuid"] == kU0);
  CHECK(g["name"] == "NVIDIA H200");
  CHECK(g["minor"] == 0);
  CHECK(g["minor_from"] == "index");
  CHECK(g["memory_used_mib"] == 0);
  CHECK(g["memory_total_mib"] == 143771);
  CHECK(g["utilization_pct"] == 0);
  CHECK(g["memory_unexplained_mib"] == 0);
  CHECK(g["processes"] == Value::array());
  CHECK(g["holders"] == Value::array());
  CHECK(g["disagreements"] == Value::array());
  CHECK(g["idle"] == true);
  CHECK(g["selected"] == true);
  // An expect of another shape (none at all) is the defaults: every GPU, 512 MiB.
  Command bare;
  bare.judge = Judge::gpus;
  CHECK(judge_gpus(bare, exec_result(0, gpu(0, kU0, 512))).holds);
  CHECK_FALSE(judge_gpus(bare, exec_result(0, gpu(0, kU0, 513))).holds);
  // "No running processes found" (what some drivers print for no compute app) is none.
  v = judge_gpus(gpus_check(), exec_result(0, gpu(0, kU0, 3) + "app\tNo running processes found\n"));
  CHECK(v.holds);
}

TEST_CASE("gpus: a compute process of the selection holding the device file fails the GPU", "[steps][gpus]") {
  std::string out = gpu(0, kU0, 1732, 37) + gpu(1, kU1, 0) + app(kU0, 561, "/usr/bin/python3", 866) +
                    app(kU0, 829, "/usr/bin/python3", 866) +
                    proc("holder", 561, "alice", "python3", "/dev/nvidia0\t/dev/nvidiactl") +
                    proc("holder", 829, "alice", "python3", "/dev/nvidia0\t/dev/nvidia-uvm") +
                    proc("listed", 561, "alice", "python3", "") + proc("listed", 829, "alice", "python3", "") +
                    sel(561) + sel(829) + "nspid\t561\t561\n" + "nspid\t829\t829\n";
  auto v = judge_gpus(gpus_check(), exec_result(0, out));
  CHECK_FALSE(v.holds);
  CHECK_FALSE(v.unknown);
  CHECK(v.reason == "GPU 0: 2 compute process(es) listed by the driver (PID 561 (python3), PID 829 (python3)), "
                    "2 process(es) hold its device file (PID 561, PID 829), 1732 MiB used, above max_memory_used 512 MiB");
  REQUIRE(v.holders.size() == 2);
  CHECK(v.holders[0].pid == 561);
  CHECK(v.holders[0].files == std::vector<std::string>{"/dev/nvidia0", "/dev/nvidiactl"});
  REQUIRE(v.gpus.size() == 2);
  const Value& g = v.gpus[0];
  CHECK(g["idle"] == false);
  REQUIRE(g["processes"].size() == 2);
  CHECK(g["processes"][0] == Value({{"pid", 561}, {"process_name", "/usr/bin/python3"}, {"used_memory_mib", 866},
                                   {"visible", true}, {"user", "alice"}, {"cmdline", "python3 --serve"},
                                   {"started", "2026-11-30T00:53:20Z"}, {"holds_device_file", true},
                                   {"selected", true}}));
  REQUIRE(g["holders"].size() == 2);
  CHECK(g["holders"][1]["pid"] == 829);
  CHECK(g["holders"][1]["selected"] == true);
  CHECK(g["holders"][1]["listed_by_driver"] == true);
  CHECK(g["disagreements"] == Value::array());
  CHECK(v.gpus[1]["idle"] == true);
  CHECK(v.gpus[1]["holders"] == Value::array());
  // Asked for GPU 1 only (by index, or by UUID in any case): it is idle.
  CHECK(judge_gpus(gpus_check(want({"1"})), exec_result(0, out)).holds);
  auto one = judge_gpus(gpus_check(want({"gpu-0A9D8C7B-6E5F-4A3B-8C2D-1E0F9A8B7C6D"})),
                        exec_result(0, out));
  CHECK(one.holds);
  CHECK(one.gpus[0]["selected"] == false);
  CHECK(one.holders.empty());
  // A GPU the driver does not list: could not check, never idle.
  auto none = judge_gpus(gpus_check(want({"7"})), exec_result(0, out));
  CHECK(none.unknown);
  CHECK(none.reason == "could not check: nvidia-smi lists no GPU 7 (it lists 0, 1)");
}

TEST_CASE("gpus: a PID the driver lists that holds no device file is a disagreement", "[steps][gpus]") {
  std::string out = gpu(0, kU0, 900) + app(kU0, 4242, "ghost", 900) + proc("listed", 4242, "root", "ghost", "") +
                    sel(4242) + "nspid\t4242\t4242\n";
  auto v = judge_gpus(gpus_check(), exec_result(0, out));
  CHECK_FALSE(v.holds);
  CHECK(v.reason == "GPU 0: 1 compute process(es) listed by the driver (PID 4242 (ghost)), 900 MiB used, above "
                    "max_memory_used 512 MiB; driver and kernel disagree: GPU 0: PID 4242 (ghost) is listed by the "
                    "driver on GPU 0 but holds none of its device files");
  CHECK(v.gpus[0]["disagreements"] ==
        Value::array({"PID 4242 (ghost) is listed by the driver on GPU 0 but holds none of its device files"}));
  CHECK(v.gpus[0]["processes"][0]["holds_device_file"] == false);
  // The reverse: a holder of the device file that the driver does not list.
  out = gpu(0, kU0, 0) + proc("holder", 77, "root", "sleep", "/dev/nvidia0") + sel(77);
  v = judge_gpus(gpus_check(), exec_result(0, out));
  CHECK_FALSE(v.holds);
  CHECK(v.gpus[0]["disagreements"] ==
        Value::array({"PID 77 (sleep) holds /dev/nvidia0 but the driver lists no compute process for it on GPU 0"}));
  // A PID the driver lists that is no process here (the driver's PID namespace is not ours).
  out = gpu(0, kU0, 100) + app(kU0, 99999, "python3", 100);
  v = judge_gpus(gpus_check(), exec_result(0, out));
  CHECK_FALSE(v.holds);
  CHECK(v.gpus[0]["processes"][0]["visible"] == false);
  CHECK(v.gpus[0]["disagreements"][0] == "PID 99999 (python3) is listed by the driver on GPU 0 but is no process "
                                         "here (another PID namespace, or it exited)");
  // A process in a nested PID namespace (a container) is flagged with its PID there.
  out = gpu(0, kU0, 866) + app(kU0, 3100, "python3", 866) +
        proc("holder", 3100, "root", "python3", "/dev/nvidia0") + proc("listed", 3100, "root", "python3", "") +
        sel(3100) + "nspid\t3100\t3100 7\n";
  v = judge_gpus(gpus_check(), exec_result(0, out));
  CHECK(v.gpus[0]["processes"][0]["pid_namespace"] == "PID 3100 is in another PID namespace (a container: PID 7 there)");
  CHECK(v.gpus[0]["disagreements"] == Value::array({"PID 3100 is in another PID namespace (a container: PID 7 there)"}));
}

TEST_CASE("gpus: memory above max_memory_used with no process fails with that reason", "[steps][gpus]") {
  auto v = judge_gpus(gpus_check(), exec_result(0, gpu(0, kU0, 2048)));
  CHECK_FALSE(v.holds);
  CHECK_FALSE(v.unknown);
  CHECK(v.reason == "GPU 0: 2048 MiB used with no compute process listed, above max_memory_used 512 MiB (a leaked context?)");
  CHECK(v.gpus[0]["reasons"] == Value::array({"2048 MiB used with no compute process listed, above max_memory_used "
                                             "512 MiB (a leaked context?)"}));
  CHECK(judge_gpus(gpus_check({{"all"}, 2048, {}, {}}), exec_result(0, gpu(0, kU0, 2048))).holds);
  // memory.used the driver does not give: the memory condition could not be checked.
  auto u = judge_gpus(gpus_check(), exec_result(0, "gpu\t0, " + kU0 + ", NVIDIA H200, [N/A], 143771, 0\n"));
  CHECK(u.unknown);
  CHECK(u.reason == "could not check: GPU 0: nvidia-smi gives no memory.used");
  REQUIRE(u.gpus.size() == 1);
}

TEST_CASE("gpus: an excluded bystander is listed but never selected and its memory is left out", "[steps][gpus]") {
  Expect::Gpus expect = want({"all"}, {"alice"}, {"keepd"});
  std::string out = gpu(0, kU0, 868) + app(kU0, 548, "/usr/sbin/keepd", 866) +
                    proc("holder", 548, "root", "keepd", "/dev/nvidia0\t/dev/nvidiactl") +
                    proc("listed", 548, "root", "keepd", "") + "nspid\t548\t548\n";
  auto v = judge_gpus(gpus_check(expect), exec_result(0, out));
  CHECK(v.holds);
  CHECK(v.reason == "");
  CHECK(v.holders.empty());
  const Value& g = v.gpus[0];
  CHECK(g["memory_unexplained_mib"] == 2);
  REQUIRE(g["processes"].size() == 1);
  CHECK(g["processes"][0]["selected"] == false);
  CHECK(g["processes"][0]["left_out"] == "user root, not alice");
  REQUIRE(g["holders"].size() == 1);
  CHECK(g["holders"][0]["selected"] == false);
  // A bystander of the right user but an excluded name says so.
  out = gpu(0, kU0, 866) + app(kU0, 548, "/usr/sbin/keepd", 866) +
        proc("holder", 548, "alice", "keepd", "/dev/nvidia0") + proc("listed", 548, "alice", "keepd", "");
  v = judge_gpus(gpus_check(expect), exec_result(0, out));
  CHECK(v.holds);
  CHECK(v.gpus[0]["processes"][0]["left_out"] == "excluded: keepd");
}

TEST_CASE("gpus: a holder of the shared device files counts only when every GPU is asked for", "[steps][gpus]") {
  std::string out = gpu(0, kU0, 0) + proc("holder", 90, "alice", "probe", "/dev/nvidiactl\t/dev/nvidia-uvm") + sel(90);
  auto v = judge_gpus(gpus_check(), exec_result(0, out));
  CHECK_FALSE(v.holds);
  CHECK(v.reason == "1 process(es) hold device files every GPU shares (PID 90: nvidiactl nvidia-uvm)");
  REQUIRE(v.holders.size() == 1);
  CHECK(judge_gpus(gpus_check(want({"0"})), exec_result(0, out)).holds);
}

TEST_CASE("gpus: nvidia-smi missing or failing or unreadable could not check and is never idle", "[steps][gpus]") {
  auto v = judge_gpus(gpus_check(), exec_result(5, "", "ratchet: could not check: nvidia-smi not found on PATH (/usr/bin:/bin); "
                                                  "set nvidia_smi to its full path\n"));
  CHECK(v.unknown);
  CHECK_FALSE(v.holds);
  CHECK(v.reason == "could not check: nvidia-smi not found on PATH (/usr/bin:/bin); set nvidia_smi to its full path");
  v = judge_gpus(gpus_check(), exec_result(5, "", "ratchet: could not check: nvidia-smi --query-gpu exited 9: NVIDIA-SMI has "
                                             "failed because it couldn't communicate with the NVIDIA driver.\n"));
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: nvidia-smi --query-gpu exited 9: NVIDIA-SMI has failed because it couldn't "
                    "communicate with the NVIDIA driver.");
  v = judge_gpus(gpus_check(), exec_result(0, "gpu\tNo devices were found\n"));
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: nvidia-smi --query-gpu printed a line ratchet cannot read (not index, uuid, "
                    "name, memory.used, memory.total, utilization.gpu): \"No devices were found\"");
  v = judge_gpus(gpus_check(), exec_result(0, ""));
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: nvidia-smi lists no GPU");
  v = judge_gpus(gpus_check(), exec_result(0, gpu(0, kU0, 0) + "app\tgarbage\n"));
  CHECK(v.unknown);
  CHECK(v.reason.rfind("could not check: nvidia-smi --query-compute-apps printed a line ratchet cannot read", 0) == 0);
  // No device file matches (exit 2), as no_holders says.
  v = judge_gpus(gpus_check(), exec_result(2, "", "ratchet: no file matches /dev/nvidia* (set missing_ok = true if that is expected)\n"));
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: no file matches /dev/nvidia* (set missing_ok = true if that is expected)");
  // A holder scan that could not see everything: idle would be a guess.
  std::string blind = "ratchet: could not check: 1 process's open files are unreadable as alice (owners: root); "
                      "run as root or set become = true\n";
  v = judge_gpus(gpus_check(), exec_result(5, gpu(0, kU0, 0), blind));
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: 1 process's open files are unreadable as alice (owners: root); run as root or "
                    "set become = true");
  CHECK(v.gpus.size() == 1);
  // ... but what it did see busy is seen.
  v = judge_gpus(gpus_check(), exec_result(5, gpu(0, kU0, 4000), blind));
  CHECK_FALSE(v.unknown);
  CHECK(v.reason == "GPU 0: 4000 MiB used with no compute process listed, above max_memory_used 512 MiB (a leaked "
                    "context?); and could not check: 1 process's open files are unreadable as alice (owners: root); "
                    "run as root or set become = true");
}

TEST_CASE("gpus: the kernel driver's minor maps device files to GPUs", "[steps][gpus]") {
  // GPU index 0 is minor 1 here: /dev/nvidia1 is its file, /dev/nvidia0 GPU 1's.
  std::string out = gpu(0, kU0, 0) + gpu(1, kU1, 0) + "minor\t" + kU0 + "\t1\n" + "minor\t" + kU1 + "\t0\n" +
                    proc("holder", 50, "alice", "x", "/dev/nvidia1") + sel(50);
  auto v = judge_gpus(gpus_check(want({"0"})), exec_result(0, out));
  CHECK_FALSE(v.holds);
  CHECK(v.gpus[0]["minor"] == 1);
  CHECK(v.gpus[0]["minor_from"] == "driver");
  CHECK(v.gpus[0]["holders"][0]["pid"] == 50);
  CHECK(judge_gpus(gpus_check(want({"1"})), exec_result(0, out)).holds);
}

TEST_CASE("gpus: the builder makes the command and its expect", "[steps][gpus]") {
  Rung r;
  build_rung(ratchet::testing::action_of({{"kind", "verify"}, {"gpus_idle", true}}).keys, {}, &r);
  REQUIRE(r.check.size() == 1);
  CHECK(r.check[0].text == "ratchet_gpus_idle -- '/dev/nvidia*'");
  CHECK(r.check[0].judge == Judge::gpus);
  CHECK(r.check[0].expect.gpus == want());
  r = {};
  build_rung(ratchet::testing::action_of({{"kind", "verify"},
                                          {"gpus_idle", true},
                                          {"gpus", {"0", "GPU-0a9d"}},
                                          {"max_memory_used", 1024},
                                          {"gpu_devices", {"/srv/dev/nvidia*"}},
                                          {"nvidia_smi", "/usr/local/nvidia/bin/nvidia-smi"},
                                          {"user", {"alice"}},
                                          {"exclude", {"nvidia-persistenced"}}})
                 .keys,
             {}, &r);
  CHECK(r.check[0].text == "ratchet_gpus_idle --smi /usr/local/nvidia/bin/nvidia-smi --user alice --exclude "
                           "nvidia-persistenced -- '/srv/dev/nvidia*'");
  CHECK(r.check[0].expect.gpus == Expect::Gpus{{"0", "GPU-0a9d"}, 1024, {"alice"}, {"nvidia-persistenced"}});
}

TEST_CASE("gpus: each key's rule names what is wrong", "[steps][gpus]") {
  auto problem = [](Value t) {
    t["kind"] = "verify";
    auto p = ratchet::playbook::check_table(ratchet::playbook::TableRole::step, t);
    return p.empty() ? std::string() : p[0].message;
  };
  CHECK(problem({{"gpus_idle", false}}) == "`gpus_idle` must be true (leave it out for no GPU condition)");
  CHECK(problem({{"gpus_idle", true}, {"max_memory_used", -1}}) == "`max_memory_used` -1 is outside 0..16777216 MiB");
  CHECK(problem({{"gpus_idle", true}, {"gpus", {"all", "0"}}}) ==
        "`gpus` must be \"all\" or a list of GPU indexes or UUIDs, such as [\"0\", \"3\"]");
  CHECK(problem({{"no_holders", "/dev/x"}, {"gpus", "all"}}) == "`gpus` goes with `gpus_idle`, which this step lacks");
}

TEST_CASE("gpus: the loader checks the keys at their file:line:col", "[steps][gpus]") {
  static const ratchet::testing::ScratchDir dir("ratchet-gpus-load");
  auto errors = [&](const std::string& step) {
    std::string p = dir.path + "/pb.toml";
    std::ofstream(p) << "name = \"g\"\n[[step]]\nid = \"g\"\nkind = \"verify\"\n" << step;
    std::vector<ratchet::playbook::LoadError> errs;
    auto pb = ratchet::playbook::load_playbook(p, {}, &errs);
    std::string out;
    for (const auto& e : errs) out += ratchet::playbook::format_error(e);
    std::string cut = dir.path + "/";
    for (size_t at; (at = out.find(cut)) != std::string::npos;) out.erase(at, cut.size());
    return pb ? std::string("(loaded)") : out;
  };
  CHECK(errors("gpus_idle = true\ngpus = [\"0\", \"3\"]\nmax_memory_used = 1024\nuser = \"alice\"\n") == "(loaded)");
  CHECK(errors("gpus_idle = true\nmax_memory_used = -5\n") ==
        "pb.toml:6:19: error: `max_memory_used` -5 is outside 0..16777216 MiB\n"
        "    max_memory_used = -5\n"
        "                      ^\n");
  CHECK(errors("gpus_idle = true\nmax_memory_used = \"512MiB\"\n") ==
        "pb.toml:6:19: error: `max_memory_used` must be an integer, not a string\n"
        "    max_memory_used = \"512MiB\"\n"
        "                      ^\n");
  CHECK(errors("gpus_idle = false\n") ==
        "pb.toml:5:13: error: `gpus_idle` must be true (leave it out for no GPU condition)\n"
        "    gpus_idle = false\n"
        "                ^\n");
  CHECK(errors("no_holders = \"/x\"\ngpus = \"all\"\n") ==
        "pb.toml:6:8: error: `gpus` goes with `gpus_idle`, which this step lacks\n"
        "    gpus = \"all\"\n"
        "           ^\n");
  CHECK(errors("gpus_idle = true\nsmi_timeout = \"500ms\"\n") ==
        "pb.toml:6:15: error: `smi_timeout` must be from 1s to 10m (the bound on each nvidia-smi call: a healthy "
        "driver answers in well under a second)\n"
        "    smi_timeout = \"500ms\"\n"
        "                  ^\n");
  CHECK(errors("gpus_idle = true\ngpus = [\"MIG-feb88891-0321\"]\nsmi_timeout = \"2s\"\n") == "(loaded)");
  CHECK(errors("no_holders = \"/x\"\nsmi_timeout = \"2s\"\n") ==
        "pb.toml:6:15: error: `smi_timeout` goes with `gpus_idle`, which this step lacks\n"
        "    smi_timeout = \"2s\"\n"
        "                  ^\n");
  // smi_timeout bounds each call, timeout the whole check: the first must be below the second.
  CHECK(errors("timeout = \"20s\"\ngpus_idle = true\nsmi_timeout = \"19s\"\n") == "(loaded)");
  CHECK(errors("timeout = \"20s\"\ngpus_idle = true\nsmi_timeout = \"30s\"\n") ==
        "pb.toml:7:15: error: `smi_timeout` 30s is not below the step's `timeout` 20s: a wedged nvidia-smi would be cut "
        "by that deadline instead of ended and named by ratchet (set smi_timeout below timeout)\n"
        "    smi_timeout = \"30s\"\n"
        "                  ^\n");
  CHECK(errors("gpus_idle = true\nsmi_timeout = \"1m\"\n") ==  // the default timeout, 60 s: equal is not below
        "pb.toml:6:15: error: `smi_timeout` 1m is not below the step's `timeout` 1m: a wedged nvidia-smi would be cut "
        "by that deadline instead of ended and named by ratchet (set smi_timeout below timeout)\n"
        "    smi_timeout = \"1m\"\n"
        "                  ^\n");
  // smi_timeout left out: its default, 10 s, against the step's timeout (named where written).
  CHECK(errors("timeout = \"10s\"\ngpus_idle = true\n") ==
        "pb.toml:5:11: error: `gpus_idle` bounds each nvidia-smi call by `smi_timeout`, 10s by default, which is not "
        "below the step's `timeout` 10s (set smi_timeout below timeout)\n"
        "    timeout = \"10s\"\n"
        "              ^\n");
  CHECK(errors("timeout = \"11s\"\ngpus_idle = true\n") == "(loaded)");
  CHECK(errors("timeout = \"10s\"\ngpus_idle = true\nsmi_timeout = \"5s\"\n") == "(loaded)");
  CHECK(errors("gpus_idle = true\nsmi_timeout = \"{{ t }}\"\n").find("not below") == std::string::npos);  // not known at load
  CHECK(errors("gpus_idle = true\ngpus = [\"all\", \"1\"]\n") ==
        "pb.toml:6:8: error: `gpus` must be \"all\" or a list of GPU indexes or UUIDs, such as [\"0\", \"3\"]\n"
        "    gpus = [\"all\", \"1\"]\n"
        "           ^\n");
}

TEST_CASE("gpus: the evidence renders as a Markdown table and one line per GPU", "[steps][gpus]") {
  std::string out = gpu(0, kU0, 1732, 37) + app(kU0, 548, "/usr/sbin/keepd", 866) +
                    app(kU0, 561, "/usr/bin/python3", 866) +
                    proc("holder", 548, "root", "keepd", "/dev/nvidia0") +
                    proc("holder", 561, "alice", "python3", "/dev/nvidia0") +
                    proc("listed", 548, "root", "keepd", "") + proc("listed", 561, "alice", "python3", "") + sel(561);
  auto v = judge_gpus(gpus_check(want({"all"}, {"alice"})), exec_result(0, out));
  REQUIRE(ratchet::util::is_gpu_evidence(v.gpus));
  CHECK(ratchet::util::gpu_table(v.gpus) ==
        "| GPU | name | memory used / total | util | compute processes (driver: nvidia-smi) | holders of its device "
        "file (kernel: /proc) | verdict |\n"
        "|---|---|---|---|---|---|---|\n"
        "| 0 " + kU0 + " | NVIDIA H200 | 1732 / 143771 MiB | 37 % | PID 548 keepd (root) 866 MiB, left out: user "
        "root, not alice; PID 561 python3 (alice) 866 MiB | PID 548 keepd (root), left out: user root, not alice; "
        "PID 561 python3 (alice) | busy: 1 compute process(es) listed by the driver (PID 561 (python3)), 1 "
        "process(es) hold its device file (PID 561), 1732 MiB used, 866 MiB of it not by processes the filters leave "
        "out, above max_memory_used 512 MiB |");
  auto lines = ratchet::util::gpu_lines(v.gpus);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind("GPU 0 NVIDIA H200 (" + kU0 + "): busy: ", 0) == 0);
  CHECK_FALSE(ratchet::util::is_gpu_evidence(Value::array({{{"pid", 1}}})));
  // Evidence of any other shape (a var, an edited transcript) renders, never throws.
  Value odd = Value::array({{{"index", "x"},
                           {"uuid", 5},
                           {"processes", Value::array({1, {{"pid", "p"}, {"used_memory_mib", "lots"}, {"visible", "no"}}})},
                           {"holders", "none"},
                           {"selected", "yes"},
                           {"idle", 3},
                           {"reasons", {{"a", 1}}},
                           {"disagreements", 7}}});
  REQUIRE(ratchet::util::is_gpu_evidence(odd));
  CHECK(ratchet::util::gpu_table(odd).find("| x 5 |  | n/a / n/a MiB | n/a % | PID p  n/a MiB | none | could not check |") !=
        std::string::npos);
  CHECK(ratchet::util::gpu_lines(odd).size() == 1);
}

TEST_CASE("gpus: a holder through a node of the device's number keeps that node in its evidence", "[steps][gpus]") {
  // A container's own /run/c/nvidia0, same number 195:0 as the host's /dev/nvidia0.
  std::string out = gpu(0, kU0, 900) + app(kU0, 4242, "/usr/bin/python3", 866) +
                    proc("holder", 4242, "alice", "python3", "/dev/nvidia0") +
                    "node\t4242\t/dev/nvidia0\t/run/c/nvidia0\t4026532711\t195:0\n" +
                    proc("listed", 4242, "alice", "python3", "") + sel(4242) + "nspid\t4242\t4242\t7\n";
  auto v = judge_gpus(gpus_check(), exec_result(0, out));
  CHECK_FALSE(v.holds);
  REQUIRE(v.holders.size() == 1);
  REQUIRE(v.holders[0].nodes.size() == 1);
  CHECK(v.holders[0].nodes[0].node == "/run/c/nvidia0");
  CHECK(v.holders[0].nodes[0].mount_ns == "4026532711");
  CHECK(v.holders[0].nodes[0].device == "195:0");
  REQUIRE(v.gpus[0]["holders"].size() == 1);
  const Value& n = v.gpus[0]["holders"][0]["nodes"];
  REQUIRE(n.size() == 1);
  CHECK(n[0]["node"] == "/run/c/nvidia0");
  CHECK(n[0]["target"] == "/dev/nvidia0");
  CHECK(n[0]["mount_ns"] == "4026532711");
  CHECK(n[0]["device"] == "195:0");
}
