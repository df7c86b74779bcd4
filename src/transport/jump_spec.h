#pragma once
// Jump host specifications as written in ssh config (ProxyJump) and in the
// inventory (`jump`): "[user@]host[:port]", comma-separated for a chain.
// Pure text; the sessions that follow them are in ssh_jump.h.
#include <optional>
#include <string>
#include <vector>

namespace ratchet::transport {

/// One hop of a chain. Empty user / port 0 = the hop's ssh config, then defaults.
struct JumpHop {
  std::string user;
  std::string host;  ///< as written: an ssh config Host alias or an address (IPv6 unbracketed)
  int port = 0;
};

/// Most hops a chain may have, counting hops added by the first hop's own
/// ProxyJump; more means a loop in the ssh config.
inline constexpr size_t kMaxJumpHops = 8;

/// Parses ProxyJump syntax: "[user@]host[:port]" entries separated by commas,
/// first hop first; "[::1]:22" for an IPv6 address. "none" (any case) gives no
/// hops. Returns false and sets *err (one line) for an empty entry or host, a
/// port outside 1..65535, or more than kMaxJumpHops hops.
bool parse_jump_spec(const std::string& spec, std::vector<JumpHop>* hops, std::string* err);

/// "user@host:port" ("[v6]:port" for an IPv6 host); user and port left out when unset.
std::string hop_text(const JumpHop& hop);

/// The ProxyJump value behind a ProxyCommand that libssh 0.10 generated from
/// one at config parse time, "ssh [-l U] [-p P] [-J REST] -W '[%h]:%p' HOST",
/// i.e. "U@HOST:P,REST"; nullopt when `command` has another form (a
/// ProxyCommand the user wrote). libssh would run REST before HOST, the
/// reverse of ssh(1); the value returned is the user's order.
std::optional<std::string> jump_from_proxy_command(const std::string& command);

}  // namespace ratchet::transport
