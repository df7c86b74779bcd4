// Running a local program without a shell (util/subprocess.h).
#include <catch2/catch.hpp>

#include "util/subprocess.h"

using ratchet::util::run_process;
using namespace std::chrono_literals;

TEST_CASE("run_process passes argv as words, feeds stdin and returns stdout, stderr and the exit status",
          "[util]") {
  auto r = run_process({"sh", "-c", "cat; echo \"$1\" >&2; exit 3", "sh", "a b; $(x)"}, "in put", 10s);
  CHECK(r.error == "");
  CHECK(r.exit_code == 3);
  CHECK(r.out == "in put");
  CHECK(r.err == "a b; $(x)\n");
}

TEST_CASE("run_process says why a program could not run, and kills one past its timeout", "[util]") {
  auto missing = run_process({"ratchet-no-such-program"}, "", 10s);
  CHECK(missing.exit_code == -1);
  CHECK(missing.error == "cannot run ratchet-no-such-program: No such file or directory");
  auto slow = run_process({"sleep", "30"}, "", 300ms);
  CHECK(slow.exit_code == -1);
  CHECK(slow.error == "sleep timed out after 0s");
  // A program that ends without reading its stdin: the write fails (EPIPE), nothing kills the caller.
  auto early = run_process({"true"}, std::string(1 << 20, 'x'), 10s);
  CHECK(early.error == "");
  CHECK(early.exit_code == 0);
}
