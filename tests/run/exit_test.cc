#include <catch2/catch.hpp>

#include <csignal>

#include "run/cancel.h"
#include "run/exit.h"

using namespace ratchet;
using engine::HostStatus;

TEST_CASE("run exit codes: 130, 4, 1, 3 in that order, else 0", "[run]") {
  CHECK(run::exit_code_for({HostStatus::ok, HostStatus::ok}, false) == run::kExitOk);
  CHECK(run::exit_code_for({HostStatus::unreachable, HostStatus::failed}, false) == run::kExitFailed);
  CHECK(run::exit_code_for({HostStatus::failed, HostStatus::host_key}, false) == run::kExitHostKey);
  CHECK(run::exit_code_for({HostStatus::host_key, HostStatus::interrupted}, false) == run::kExitInterrupted);
  CHECK(run::exit_code_for({HostStatus::ok}, true) == run::kExitInterrupted);
  CHECK(run::exit_code_for({HostStatus::unreachable}, false) == run::kExitUnreachable);
  CHECK(run::exit_name(run::kExitHostKey) == "host_key");
  CHECK(run::exit_name(124) == "failed");
}

TEST_CASE("run cancel: a signal sets the one token while the handlers are installed", "[run]") {
  auto prior = std::signal(SIGINT, SIG_IGN);  // whatever was there (Catch's own handler, or none)
  std::signal(SIGINT, prior);
  {
    run::CancelOnSignals on(nullptr);
    CHECK_FALSE(run::cancelled());
    std::raise(SIGTERM);
    CHECK(run::cancelled());
    std::raise(SIGINT);  // no second-signal line: only sets it again
    CHECK(run::cancel_token().load());
  }
  auto after = std::signal(SIGINT, prior);  // the handler before is back
  CHECK(after == prior);
  run::CancelOnSignals again(nullptr);  // a new run starts uncancelled
  CHECK_FALSE(run::cancelled());
}
