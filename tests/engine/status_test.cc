// engine/status.h: every step and host status round-trips through the name the
// transcript, the summary and --json write (docs/transcript.md).
#include "engine/status.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace ratchet::engine;

TEST_CASE("statuses: every step and host status round-trips through its name", "[engine]") {
  std::vector<std::string> steps, hosts;
  for (StepStatus s : kStepStatuses) {
    steps.emplace_back(name(s));
    CHECK(parse_step_status(name(s)) == s);
  }
  for (HostStatus s : kHostStatuses) {
    hosts.emplace_back(name(s));
    CHECK(parse_host_status(name(s)) == s);
  }
  CHECK(steps == std::vector<std::string>{"ok", "changed", "escalated", "failed", "skipped"});
  CHECK(hosts == std::vector<std::string>{"ok", "failed", "unreachable", "host_key", "interrupted", "skipped"});
  CHECK_FALSE(parse_step_status("OK"));
  CHECK_FALSE(parse_host_status("unreachable "));
  // What counts against max_fail: a host that failed, had no session or a bad key.
  CHECK(counts_as_failed(HostStatus::failed));
  CHECK(counts_as_failed(HostStatus::unreachable));
  CHECK(counts_as_failed(HostStatus::host_key));
  CHECK_FALSE(counts_as_failed(HostStatus::interrupted));
  CHECK_FALSE(counts_as_failed(HostStatus::skipped));
  CHECK_FALSE(counts_as_failed(HostStatus::ok));
}
