// ratchet_smi (the host library's bound on each nvidia-smi call, verify
// gpus_idle's smi_timeout) run locally under /bin/sh against stand-in
// programs this test writes; a stand-in that outlives a failed check is
// KILLed by the PID it wrote down.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "steps/library.h"
#include "support/files.h"
#include "support/local_proc.h"

using namespace ratchet;
using ratchet::testing::run_sh;

namespace {

testing::ShellResult lib(const std::string& cmd) { return run_sh(steps::with_library(cmd)); }

// A stand-in program at DIR/NAME with `body` after "#!/bin/sh".
std::string program(const std::string& dir, const std::string& name, const std::string& body) {
  std::string p = dir + "/" + name;
  testing::write_file(p, "#!/bin/sh\n" + body);
  std::filesystem::permissions(p, std::filesystem::perms::owner_all);
  return p;
}

// The PID a stand-in wrote to `file`; SIGKILLed at the end if it still sleeps.
struct StandInPid {
  std::string file;
  long long pid() const {
    long long p = 0;
    std::ifstream(file) >> p;
    return p;
  }
  ~StandInPid() {
    if (pid() <= 0) return;
    std::ifstream in("/proc/" + std::to_string(pid()) + "/cmdline");
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd == std::string("sleep\0" "60\0", 9)) kill(static_cast<pid_t>(pid()), SIGKILL);
  }
};

}  // namespace

TEST_CASE("ratchet_smi: a program that ignores TERM is KILLed at its bound, by its PID, and the call returns",
          "[steps][library][gpus]") {
  std::string d = testing::temp_dir("ratchet-smi");
  StandInPid sp{d + "/pid"};
  const std::string p = program(d, "wedged-smi", "echo $$ > " + d + "/pid\ntrap '' TERM\nexec sleep 60\n");
  auto start = std::chrono::steady_clock::now();
  std::filesystem::create_directory(d + "/tmp");
  auto r = lib("TMPDIR=" + d + "/tmp; ratchet_smi 1000 " + p +
               " --query-gpu=index --format=csv; echo \"rc=$? $RATCHET_SMI_WHY\"");
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  INFO(r.out << r.err);
  CHECK(r.out == "rc=124 wedged-smi did not answer in 1s (--query-gpu; PID " + std::to_string(sp.pid()) +
                     " ended by ratchet with KILL)\n");
  CHECK(ms >= 1000);
  CHECK(ms < 6000);
  CHECK_FALSE(std::filesystem::exists("/proc/" + std::to_string(sp.pid())));
  CHECK(std::filesystem::is_empty(d + "/tmp"));  // its output file is removed
}

TEST_CASE("ratchet_smi: a program that answers in time keeps its output, stderr too, and its exit status",
          "[steps][library][gpus]") {
  std::string d = testing::temp_dir("ratchet-smi");
  const std::string p = program(d, "quick-smi", "echo \"0, GPU-1, $LC_ALL\"\necho 'No devices were found' >&2\nexit 6\n");
  auto r = lib("ratchet_smi 5000 " + p + " -L; echo \"rc=$? [$RATCHET_SMI_WHY]\"; printf '%s\\n' \"$RATCHET_SMI_OUT\"");
  INFO(r.err);
  CHECK(r.out == "rc=6 []\n0, GPU-1, C\nNo devices were found\n");
}
