// verify gpus_idle in MIG mode (steps/mig.cc): nvidia-smi -L and -q -x read
// with exact values, and a MIG instance judged on its own from
// ratchet_gpus_idle's lines (--mig), and the bound on nvidia-smi in the command.
#include <catch2/catch.hpp>

#include "steps/gpus.h"
#include "steps/kinds.h"
#include "steps/mig.h"
#include "support/action_of.h"
#include "support/exec_result.h"

using namespace ratchet::steps;
using ratchet::testing::exec_result;
using ratchet::util::Value;

namespace {

const std::string kGpu = "GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16";
const std::string kMigA = "MIG-feb88891-0321-5fef-9c87-d4af3b54259e";
const std::string kMigB = "MIG-a25704ba-3a06-5299-a795-fd7cf4d13973";

// nvidia-smi -L on a GPU with two 1g.10gb instances (the layout of drivers 470..570).
std::vector<std::string> list_lines() {
  return {"GPU 0: NVIDIA A100-SXM4-80GB (UUID: " + kGpu + ")",
          "  MIG 1g.10gb     Device  0: (UUID: " + kMigA + ")",
          "  MIG 1g.10gb     Device  1: (UUID: " + kMigB + ")"};
}

std::string process_info(const std::string& gi, const std::string& ci, long long pid, long long mib) {
  return "\t\t\t<process_info>\n\t\t\t\t<gpu_instance_id>" + gi + "</gpu_instance_id>\n\t\t\t\t<compute_instance_id>" + ci +
         "</compute_instance_id>\n\t\t\t\t<pid>" + std::to_string(pid) +
         "</pid>\n\t\t\t\t<type>C</type>\n\t\t\t\t<process_name>python3</process_name>\n\t\t\t\t<used_memory>" +
         std::to_string(mib) + " MiB</used_memory>\n\t\t\t</process_info>\n";
}

std::string mig_device(int index, int gi, const std::string& used) {
  return "\t\t\t<mig_device>\n\t\t\t\t<index>" + std::to_string(index) + "</index>\n\t\t\t\t<gpu_instance_id>" +
         std::to_string(gi) + "</gpu_instance_id>\n\t\t\t\t<compute_instance_id>0</compute_instance_id>\n"
         "\t\t\t\t<device_attributes>\n\t\t\t\t\t<shared>\n\t\t\t\t\t\t<multiprocessor_count>14</multiprocessor_count>\n"
         "\t\t\t\t\t</shared>\n\t\t\t\t</device_attributes>\n\t\t\t\t<fb_memory_usage>\n\t\t\t\t\t<total>9856 MiB</total>\n"
         "\t\t\t\t\t<reserved>0 MiB</reserved>\n\t\t\t\t\t<used>" + used + "</used>\n\t\t\t\t\t<free>9000 MiB</free>\n"
         "\t\t\t\t</fb_memory_usage>\n\t\t\t</mig_device>\n";
}

// What ratchet_gpus_idle --mig keeps of -q -x: instance A (GI 9) at `used_a`,
// instance B (GI 10) at 9880 MiB, and the process lines given.
std::string xml(const std::string& processes, const std::string& used_a = "13 MiB") {
  return "\t<gpu id=\"00000000:31:00.0\">\n\t\t<mig_devices>\n" + mig_device(0, 9, used_a) + mig_device(1, 10, "9880 MiB") +
         "\t\t</mig_devices>\n\t\t<uuid>" + kGpu + "</uuid>\n\t\t<processes>\n" + processes + "\t\t</processes>\n\t</gpu>\n";
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t e; (e = text.find('\n', b)) != std::string::npos; b = e + 1) out.push_back(text.substr(b, e - b));
  return out;
}

// ratchet_gpus_idle --mig's output: the GPU in MIG mode (utilization [N/A]),
// the compute apps, -L, -q -x, and the holders and selections given.
std::string scan(const std::string& apps, const std::string& processes, const std::string& more = "",
                 const std::string& used_a = "13 MiB") {
  std::string out = "gpu\t0, " + kGpu + ", NVIDIA A100-SXM4-80GB, 9893, 81920, [N/A]\n" + apps;
  for (const auto& l : list_lines()) out += "migl\t" + l + "\n";
  for (const auto& l : lines(xml(processes, used_a))) out += "migx\t" + l + "\n";
  return out + more;
}

std::string app(long long pid, long long mib) {
  return "app\t" + kGpu + ", " + std::to_string(pid) + ", python3, " + std::to_string(mib) + "\n";
}
std::string holder(long long pid) {
  return "holder\t" + std::to_string(pid) + "\talice\t1000\t1796000000.00\tpython3\tpython3 serve.py\tS\t-\t/dev/nvidia0\n" +
         "listed\t" + std::to_string(pid) + "\talice\t1000\t1796000000.00\tpython3\tpython3 serve.py\t\n" + "selected\t" +
         std::to_string(pid) + "\n";
}

Command mig_check(const std::string& uuid) {
  Command c;
  c.judge = Judge::gpus;
  c.expect.gpus = Expect::Gpus{{uuid}, 512, {}, {}};
  return c;
}

}  // namespace

TEST_CASE("mig: nvidia-smi -L and -q -x are read into instances and processes", "[steps][gpus][mig]") {
  std::string err;
  MigScan s = parse_mig(list_lines(), lines(xml(process_info("10", "0", 46505, 9807) + process_info("N/A", "N/A", 55111, 20481))), {}, &err);
  CHECK(err == "");
  REQUIRE(s.instances.size() == 2);
  CHECK(s.instances[0].uuid == kMigA);
  CHECK(s.instances[0].parent_uuid == kGpu);
  CHECK(s.instances[0].profile == "MIG 1g.10gb");
  CHECK(s.instances[0].device == 0);
  CHECK(s.instances[0].gi == 9);
  CHECK(s.instances[0].ci == 0);
  CHECK(s.instances[0].memory_used == 13);
  CHECK(s.instances[0].memory_total == 9856);
  CHECK(s.instances[1].uuid == kMigB);
  CHECK(s.instances[1].gi == 10);
  CHECK(s.instances[1].memory_used == 9880);
  REQUIRE(s.processes.size() == 2);
  CHECK(s.processes[0].pid == 46505);
  CHECK(s.processes[0].parent_uuid == kGpu);
  CHECK(s.processes[0].gi == 10);
  CHECK(s.processes[0].ci == 0);
  CHECK(s.processes[0].used_memory == 9807);
  CHECK(s.processes[1].pid == 55111);
  CHECK_FALSE(s.processes[1].gi);  // "N/A": no instance
  CHECK_FALSE(s.processes[1].ci);
  // [N/A] memory is unknown, never 0.
  s = parse_mig(list_lines(), lines(xml("", "[N/A]")), {}, &err);
  CHECK_FALSE(s.instances[0].memory_used);
  // A MIG line of -L that cannot be read is said so.
  parse_mig({"GPU 0: X (UUID: " + kGpu + ")", "  MIG 1g.10gb     Dev 0: (UUID: " + kMigA + ")"}, {}, {}, &err);
  CHECK(err == "nvidia-smi -L printed a MIG line ratchet cannot read: \"MIG 1g.10gb     Dev 0: (UUID: " + kMigA + ")\"");
}

TEST_CASE("mig: an idle instance beside a busy sibling passes, the busy one fails", "[steps][gpus][mig]") {
  // PID 46505 runs on instance B (GI 10) and holds the parent's device file.
  const std::string out = scan(app(46505, 9807), process_info("10", "0", 46505, 9807), holder(46505));
  auto v = judge_gpus(mig_check(kMigA), exec_result(0, out));
  CHECK(v.holds);
  CHECK_FALSE(v.unknown);
  CHECK(v.reason == "");
  CHECK(v.holders.empty());
  REQUIRE(v.gpus.size() == 2);  // the parent (not asked) and the instance
  CHECK(v.gpus[0]["selected"] == false);
  CHECK(v.gpus[0]["utilization_pct"].is_null());  // [N/A]: unknown, and judged by nobody
  const Value& a = v.gpus[1];
  CHECK(a["uuid"] == kMigA);
  CHECK(a["name"] == "MIG 1g.10gb of GPU 0 (NVIDIA A100-SXM4-80GB)");
  CHECK(a["memory_used_mib"] == 13);
  CHECK(a["mig"]["gpu_instance_id"] == 9);
  CHECK(a["mig"]["parent_uuid"] == kGpu);
  CHECK(a["processes"] == Value::array());
  CHECK(a["holders"] == Value::array());
  CHECK(a["idle"] == true);

  v = judge_gpus(mig_check(kMigB), exec_result(0, out));
  CHECK_FALSE(v.holds);
  CHECK_FALSE(v.unknown);
  CHECK(v.reason == "MIG " + kMigB + ": 1 compute process(es) on this instance (PID 46505 (python3)), 1 process(es) of "
                    "this instance hold the GPU's device file (PID 46505), 9880 MiB used, above max_memory_used 512 MiB");
  REQUIRE(v.holders.size() == 1);
  CHECK(v.holders[0].pid == 46505);
  CHECK(v.gpus[1]["processes"][0]["pid"] == 46505);
  CHECK(v.gpus[1]["holders"][0]["instance"] == "this");
  CHECK(v.gpus[1]["idle"] == false);
}

TEST_CASE("mig: a process no instance is named for, or [N/A] ids, could not check naming MIG", "[steps][gpus][mig]") {
  // The driver lists PID 55111 on the parent, with GPU instance N/A.
  auto v = judge_gpus(mig_check(kMigA), exec_result(0, scan(app(55111, 20481), process_info("N/A", "N/A", 55111, 20481),
                                                             holder(55111))));
  CHECK_FALSE(v.holds);
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: MIG " + kMigA + ": PID 55111 (python3) holds /dev/nvidia0 of GPU 0 but "
                    "nvidia-smi names no MIG instance for it; PID 55111 (python3) runs on GPU 0 but nvidia-smi names no "
                    "MIG instance for it");
  // A holder of the parent's device file the driver does not list at all.
  v = judge_gpus(mig_check(kMigA), exec_result(0, scan("", "", holder(4242))));
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: MIG " + kMigA + ": PID 4242 (python3) holds /dev/nvidia0 of GPU 0 but nvidia-smi "
                    "names no MIG instance for it");
  // Instance memory [N/A]: unknown, never 0.
  v = judge_gpus(mig_check(kMigA), exec_result(0, scan("", "", "", "[N/A]")));
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: MIG " + kMigA + ": nvidia-smi -q -x gives no memory used for it");
  // An instance nvidia-smi -L does not list.
  v = judge_gpus(mig_check("MIG-00000000-0000-0000-0000-000000000000"), exec_result(0, scan("", "")));
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: nvidia-smi -L lists no MIG instance MIG-00000000-0000-0000-0000-000000000000 (it "
                    "lists " + kMigA + ", " + kMigB + ")");
  v = judge_gpus(mig_check(kMigA), exec_result(0, "gpu\t0, " + kGpu + ", NVIDIA A100-SXM4-80GB, 0, 81920, 0\n"));
  CHECK(v.reason == "could not check: nvidia-smi -L lists no MIG instance " + kMigA + " (it lists none: is MIG mode on?)");
}

TEST_CASE("mig: a holder of an instance's nvidia-cap file counts for that instance only", "[steps][gpus][mig]") {
  // PID 777 holds /dev/nvidia0 and the capability of GPU instance 10 (B); the
  // driver lists it nowhere (no CUDA context yet).
  const std::string caps = "migcap\t/proc/driver/nvidia/capabilities/gpu0/mig/gi10/access\t93\n"
                           "migcap\t/proc/driver/nvidia/capabilities/gpu0/mig/gi10/ci0/access\t94\n"
                           "migcap\t/proc/driver/nvidia/capabilities/gpu0/mig/gi9/access\t84\n";
  const std::string h = "holder\t777\talice\t1000\t1796000000.00\tpython3\tpython3 warm.py\tS\t-\t/dev/nvidia0\t"
                        "/dev/nvidia-caps/nvidia-cap94\nselected\t777\n";
  std::string err;
  MigScan s = parse_mig(list_lines(), {},
                        {"/proc/driver/nvidia/capabilities/gpu0/mig/gi10/ci0/access\t94",
                         "/proc/driver/nvidia/capabilities/mig/config\t1"},
                        &err);
  REQUIRE(s.caps.size() == 1);
  CHECK(s.caps.at(94) == std::pair<long long, long long>{0, 10});
  auto v = judge_gpus(mig_check(kMigA), exec_result(0, scan("", "", caps + h)));
  CHECK(v.holds);  // a sibling's
  CHECK_FALSE(v.unknown);
  v = judge_gpus(mig_check(kMigB), exec_result(0, scan("", "", caps + h)));
  CHECK_FALSE(v.holds);
  CHECK_FALSE(v.unknown);
  CHECK(v.reason == "MIG " + kMigB + ": 1 process(es) of this instance hold the GPU's device file (PID 777), 9880 MiB "
                    "used with no compute process of it listed, above max_memory_used 512 MiB");
  CHECK(v.gpus[1]["holders"][0]["instance"] == "this");
}

TEST_CASE("mig: -L and -q -x of a GPU with MIG disabled (H200, driver 580.159.04) hold no instance", "[steps][gpus][mig]") {
  // As ratchet_gpus_idle --mig printed them on the lent H200 (2026-12-03).
  const std::string g = "GPU-74d15dcc-d028-9030-30fe-cd7a110a0b0b";
  const std::string out = "gpu\t0, " + g + ", NVIDIA H200, 0, 143771, 0\n"
                          "migl\tGPU 0: NVIDIA H200 (UUID: " + g + ")\n"
                          "migx\t\t<gpu id=\"00000000:00:06.0\">\n"
                          "migx\t\t\t<mig_devices>\n"
                          "migx\t\t\t\tNone\n"
                          "migx\t\t\t</mig_devices>\n"
                          "migx\t\t\t<uuid>" + g + "</uuid>\n"
                          "migx\t\t\t<processes>\n"
                          "migx\t\t\t</processes>\n"
                          "migx\t\t</gpu>\n";
  auto v = judge_gpus(mig_check(kMigA), exec_result(0, out));
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: nvidia-smi -L lists no MIG instance " + kMigA + " (it lists none: is MIG mode on?)");
}

TEST_CASE("mig: the builder asks for -L and -q -x only for a MIG instance, and bounds nvidia-smi", "[steps][gpus][mig]") {
  Rung r;
  build_rung(ratchet::testing::action_of({{"kind", "verify"}, {"gpus_idle", true}, {"gpus", {kMigA}}}).keys, {}, &r);
  REQUIRE(r.check.size() == 1);
  CHECK(r.check[0].text == "ratchet_gpus_idle --mig -- '/dev/nvidia*'");
  r = {};
  build_rung(ratchet::testing::action_of({{"kind", "verify"}, {"gpus_idle", true}, {"gpus", {"0"}}, {"smi_timeout", "2s"}})
                 .keys,
             {}, &r);
  CHECK(r.check[0].text == "ratchet_gpus_idle --smi-timeout 2000 -- '/dev/nvidia*'");
}

TEST_CASE("mig: -L or -q -x that did not answer is the reason, never 'lists no MIG instance'", "[steps][gpus][mig]") {
  // ratchet_gpus_idle stops after the call that did not answer (exit 5, the why on stderr).
  const std::string why = "ratchet: could not check: nvidia-smi did not answer in 2s (-L; PID 4711 killed)\n";
  std::string no_list = "gpu\t0, " + kGpu + ", NVIDIA A100-SXM4-80GB, 9893, 81920, [N/A]\n";
  auto v = judge_gpus(mig_check(kMigA), exec_result(5, no_list, why));
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: nvidia-smi did not answer in 2s (-L; PID 4711 killed)");
  // -L read, -q -x not.
  for (const auto& l : list_lines()) no_list += "migl\t" + l + "\n";
  const std::string why_x = "ratchet: could not check: nvidia-smi did not answer in 2s (-q -x; PID 4712 killed)\n";
  auto x = judge_gpus(mig_check(kMigA), exec_result(5, no_list, why_x));
  CHECK(x.unknown);
  CHECK(x.reason == "could not check: nvidia-smi did not answer in 2s (-q -x; PID 4712 killed)");
}
