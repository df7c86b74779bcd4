#include "transport/go_split.h"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

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

TEST_CASE("go line: what came before it is the login's and kept apart - never the command's output", "[transport]") {
  const std::string stream = "Welcome to lab1\nmotd line\n" + go_line(kId) + "command output\n[ratchet-go x]\n";
  for (size_t step : {1, 2, 7, 64, 4096}) {
    INFO(step);
    GoSplit g(kId);
    CHECK(split(&g, stream, step) == "command output\n[ratchet-go x]\n");
    CHECK(g.seen());
    CHECK(g.before() == "Welcome to lab1\nmotd line\n");
  }
}

TEST_CASE("go line: another id is not the go line and before() keeps the first 4 KiB", "[transport]") {
  GoSplit g(kId);
  std::string out = split(&g, go_line("fedcba9876543210") + std::string(10000, 'x'), 100);
  CHECK(out.empty());
  CHECK_FALSE(g.seen());
  CHECK(g.before().size() == GoSplit::kKeep);
  CHECK(g.before().rfind("[ratchet-go fedcba98-76543210]\n", 0) == 0);
}

TEST_CASE("go line: a short answer with no go line is no output and all of it before()", "[transport]") {
  GoSplit g(kId);
  std::string out = split(&g, "restricted\n", 3);
  g.finish(&out);
  CHECK(out.empty());
  CHECK(g.before() == "restricted\n");
  CHECK_FALSE(g.seen());
}

TEST_CASE("go line: the stderr go line that an rc file's exec 2>&1 sends after it is taken out too", "[transport]") {
  for (size_t step : {1, 5, 64}) {
    GoSplit g(kId);
    CHECK(split(&g, go_line(kId) + go_line(kId) + "hi\n", step) == "hi\n");
    GoSplit h(kId);  // bytes that only begin like one are the command's
    std::string out = split(&h, go_line(kId) + "[ratchet-g", step);
    h.finish(&out);
    CHECK(out == "[ratchet-g");
  }
}

TEST_CASE("not_run_error names what the host printed instead and how it ended", "[transport]") {
  CHECK(not_run_error("\n  \nThis account is restricted\nmore\n", "", "exit 0") ==
        "the host did not run the command ratchet sent: it printed `This account is restricted` (exit 0; a forced "
        "command, or an rc file or login shell that ran something else)");
  CHECK(not_run_error("", "zsh: bad option\n", "exit 1").find("it printed `zsh: bad option` (exit 1;") !=
        std::string::npos);
  CHECK(not_run_error("", "", "exit 121").find("sent: it printed nothing (exit 121;") != std::string::npos);
}

namespace {

/// Runs `argv` (a login shell) with `-c kExecRequest`, HOME=home, stdout and
/// stderr on one pipe: writes `line`, then, once the go line came, `payload`
/// and EOF, as the transports do. Returns everything it printed; *code gets
/// its exit status.
std::string as_a_login(const std::vector<std::string>& argv, const std::string& home, const std::string& line,
                       const std::string& payload, int* code) {
  int in[2], out[2];
  REQUIRE(pipe(in) == 0);
  REQUIRE(pipe(out) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(out[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
    if (chdir("/") != 0) _exit(126);
    setenv("HOME", home.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(const_cast<char*>("-c"));
    std::string request(kExecRequest);
    args.push_back(request.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  REQUIRE(write(in[1], line.data(), line.size()) == static_cast<ssize_t>(line.size()));
  if (payload.empty()) close(in[1]);  // nothing to send after a go line
  std::string got;
  char buf[4096];
  bool sent = false;
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) {
    got.append(buf, static_cast<size_t>(n));
    if (!sent && !payload.empty() && got.find(go_line(kId)) != std::string::npos) {
      REQUIRE(write(in[1], payload.data(), payload.size()) == static_cast<ssize_t>(payload.size()));
      close(in[1]);
      sent = true;
    }
  }
  if (!sent && !payload.empty()) close(in[1]);
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return got;
}

}  // namespace

// What every login shell is handed: the exec request, parsed by the shell
// itself, then the bootstrap line on stdin, read by the /bin/sh it execs, and
// the payload after the go line. Each shell that the machine has (setup.sh
// installs them) must run exactly that.
TEST_CASE("the exec request means the same to sh - dash - bash - zsh - ksh - fish - tcsh - csh and BusyBox ash",
          "[transport]") {
  testing::ScratchDir dir("go-shells");
  const std::string payload = payload_of("echo \"ran $0 $#\" '!x' \\\\ \"$HOME\" | tr -d '\\\\\\\\'; exit 3");
  const std::string line = exec_line(kId, payload.size());
  int tried = 0;
  for (std::string shell : {"/bin/sh", "/bin/dash", "/bin/bash", "/usr/bin/zsh", "/bin/mksh", "/usr/bin/fish",
                            "/bin/tcsh", "/bin/bsd-csh", "/bin/busybox"}) {
    if (access(shell.c_str(), X_OK) != 0) continue;
    INFO(shell);
    ++tried;
    std::vector<std::string> argv{shell};
    if (shell == "/bin/busybox") argv.push_back("sh");
    int code = -1;
    std::string got = as_a_login(argv, dir.path, line, payload, &code);
    CHECK(code == 3);
    // $1 is ratchet-wire here: wire_command sets its own arguments first.
    CHECK(got == go_line(kId) + go_line(kId) + "ran /bin/sh 1 !x  " + dir.path + "\n");
  }
  CHECK(tried >= 3);
}

TEST_CASE("an rc file that read the bootstrap's first bytes gets no go line and no command", "[transport]") {
  testing::ScratchDir dir("go-partial");
  const std::string flag = dir.path + "/ran";
  const std::string line = exec_line(kId, payload_of("touch " + flag).size());
  // What /bin/sh reads after an rc file took 1, 3, 10 ... bytes of the line:
  // no go line, so the client never sends the payload.
  for (size_t cut : {1, 2, 3, 4, 10, 20, 40}) {
    INFO(cut);
    int code = -1;
    std::string got = as_a_login({"/bin/sh"}, dir.path, line.substr(cut), "", &code);
    CHECK(got.find(go_line(kId)) == std::string::npos);
    CHECK_FALSE(std::filesystem::exists(flag));
  }
}
