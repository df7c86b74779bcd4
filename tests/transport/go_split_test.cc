#include "transport/go_split.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include "support/scratch_dir.h"
#include "transport/wire.h"
#include "util/shell.h"

using namespace ratchet;
using namespace ratchet::transport;

namespace {

const std::string kId = "0123456789abcdef";

/// Feeds `text` in pieces of `step` bytes.
std::string split(GoSplit* g, const std::string& text, size_t step) {
  std::string out;
  for (size_t at = 0; at < text.size(); at += step) g->feed(text.data() + at, std::min(step, text.size() - at), &out);
  return out;
}

}  // namespace

TEST_CASE("go line: it is taken out - what came before it is the login's and kept apart too", "[transport]") {
  const std::string stream = "Welcome to lab1\nmotd line\n" + go_line(kId) + "command output\n[ratchet-go x]\n";
  for (size_t step : {1, 2, 7, 64, 4096}) {
    INFO(step);
    GoSplit g(kId);
    CHECK(split(&g, stream, step) == "Welcome to lab1\nmotd line\ncommand output\n[ratchet-go x]\n");
    CHECK(g.seen());
    CHECK(g.before() == "Welcome to lab1\nmotd line\n");
  }
}

TEST_CASE("go line: another id is not the go line and before() keeps the first 4 KiB", "[transport]") {
  GoSplit g(kId);
  std::string out = split(&g, go_line("fedcba9876543210") + std::string(10000, 'x'), 100);
  // All of it but what could still begin the line.
  CHECK(out.size() == go_line(kId).size() + 10000 - (go_line(kId).size() - 1));
  CHECK(out.rfind("[ratchet-go fedcba9876543210]\n", 0) == 0);
  CHECK_FALSE(g.seen());
  CHECK(g.before().size() == GoSplit::kKeep);
  CHECK(g.before().rfind("[ratchet-go fedcba9876543210]\n", 0) == 0);
}

TEST_CASE("go line: a short answer with no go line is all output and all of it before()", "[transport]") {
  GoSplit g(kId);
  std::string out = split(&g, "restricted\n", 3);
  g.finish(&out);
  CHECK(out == "restricted\n");
  CHECK(g.before() == "restricted\n");
  CHECK_FALSE(g.seen());
}

TEST_CASE("not_run_error names what the host printed instead and how it ended", "[transport]") {
  CHECK(not_run_error("\n  \nThis account is restricted\nmore\n", "", "exit 0") ==
        "the host did not run the command ratchet sent: it printed `This account is restricted` (exit 0; a forced "
        "command, or an rc file or login shell that ran something else)");
  CHECK(not_run_error("", "zsh: bad option\n", "exit 1").find("it printed `zsh: bad option` (exit 1;") !=
        std::string::npos);
  CHECK(not_run_error("", "", "exit 121").find("sent: it printed nothing (exit 121;") != std::string::npos);
}

// What every login shell is handed: the exec request, parsed by the shell
// itself, then the line on stdin, read by the /bin/sh it execs. Each shell
// that the machine has (setup.sh installs them) must run exactly that.
TEST_CASE("the exec request means the same to sh - dash - bash - zsh - ksh - fish - tcsh - csh and BusyBox ash",
          "[transport]") {
  testing::ScratchDir dir("go-shells");
  const std::string in = dir.path + "/in", out = dir.path + "/out";
  std::ofstream(in) << exec_line(kId, "echo \"ran $0 $#\" '!x' \\\\ \"$HOME\" | tr -d '\\\\\\\\'; exit 3");
  int tried = 0;
  for (std::string shell : {"/bin/sh", "/bin/dash", "/bin/bash", "/usr/bin/zsh", "/bin/mksh", "/usr/bin/fish",
                            "/bin/tcsh", "/bin/bsd-csh", "/bin/busybox"}) {
    if (access(shell.c_str(), X_OK) != 0) continue;
    INFO(shell);
    ++tried;
    std::string argv0 = shell == "/bin/busybox" ? shell + " sh" : shell;
    const std::string cmd = "cd / && HOME=" + dir.path + " " + argv0 + " -c " + util::shell_quote(std::string(kExecRequest)) + " <" +
                            in + " >" + out + " 2>&1";
    int rc = std::system(cmd.c_str());
    CHECK(WEXITSTATUS(rc) == 3);
    std::ifstream f(out);
    std::string got((std::istreambuf_iterator<char>(f)), {});
    // $1 is ratchet-wire here: wire_command sets its own arguments first.
    CHECK(got == go_line(kId) + go_line(kId) + "ran /bin/sh 1 !x  " + dir.path + "\n");
  }
  CHECK(tried >= 3);
}
