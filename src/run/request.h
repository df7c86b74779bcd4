#pragma once
// What a run is asked to do: the options cli/ parsed and checked at parse time
// (durations typed, paths decided), shared by a plan's run, a probe and exec.
#include <chrono>
#include <functional>
#include <iostream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "playbook/model.h"
#include "transport/transport.h"
#include "util/duration.h"

namespace ratchet::run {

/// A host's transport endpoint (ssh config, known_hosts, timeouts applied).
using EndpointOf = std::function<transport::Endpoint(const playbook::Host&)>;
/// Reads the become password when the run needs it: nullopt with *err empty
/// when no source was given, with *err set when the source cannot be read.
using BecomePasswordSource = std::function<std::optional<std::string>(std::string* err)>;

/// The run options of `run`, `apply`, `plan --probe` and `exec`.
struct Settings {
  std::vector<std::string> argv;           ///< run_start's argv
  int forks = 10;
  std::string transcript;                  ///< the file (cli/ chose it); probe: "" = records nothing
  std::chrono::system_clock::time_point started = std::chrono::system_clock::now();  ///< run id, run.started
  util::Millis reconnect_timeout{30'000};  ///< a dropped session is retried this long (0 = never)
  util::Millis lock_wait{0};               ///< --lock-wait
  bool lock = false;                       ///< --lock
  bool break_lock = false;                 ///< --break-lock
  std::string artifacts;                   ///< --artifacts ("" = beside the transcript)
  std::vector<std::string> extra_secrets;  ///< every -e value given to a --secret name: masked
  BecomePasswordSource become_password = [](std::string*) { return std::optional<std::string>(); };
  EndpointOf endpoint;                     ///< required
  std::ostream* diag = &std::cerr;         ///< ratchet's own "ratchet: error/warning:" lines before the run
};

/// A new run id: "20261130T042537Z-4f2a" (the UTC stamp of `at` and 16 random bits).
std::string new_run_id(std::chrono::system_clock::time_point at);

}  // namespace ratchet::run
