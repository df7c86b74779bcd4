#pragma once
// The events of a session and its commands, built from what the transport
// returned: `connect`, `unreachable`, and a command's `output` and `exit`.
// Built here only; the engine records them.
#include <string>

#include <nlohmann/json.hpp>

#include "transcript/writer.h"
#include "transport/transport.h"

namespace ratchet::transcript {

/// The `connect` event's fields for `host` from what connect() learned;
/// `via` (jump hops, first first) when there are any, `after_reboot: true` when asked.
nlohmann::json connect_fields(const std::string& host, const transport::ConnectInfo& info,
                              bool after_reboot = false);

/// The `unreachable` event's fields for a failed connect: cause, message, and
/// methods_tried when authentication tried any.
nlohmann::json unreachable_fields(const std::string& host, const transport::ConnectError& err);

/// Where a command ran: its host, step and rung.
struct CommandRef {
  std::string host;
  std::string step;
  int rung = 0;
};

/// Records a command's result: an `output` event per stream that printed
/// (masked by `w`; sizes only when `redact`), then its `exit` event.
void record_result(Writer& w, const CommandRef& at, const transport::ExecResult& r, bool redact);

}  // namespace ratchet::transcript
