// ProxyJump / inventory `jump` text: parsing, printing, and recovering the
// value from the ProxyCommand libssh 0.10 makes of it (config.c,
// ssh_config_parse_proxy_jump: snprintf "ssh%s%s%s%s%s%s -W '[%%h]:%%p' %s").
#include "transport/jump_spec.h"

#include <fmt/format.h>
#include <strings.h>

#include <cstdlib>
#include <sstream>

namespace ratchet::transport {

namespace {

bool parse_port(const std::string& text, int* port) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  long p = std::strtol(text.c_str(), nullptr, 10);
  if (p < 1 || p > 65535) return false;
  *port = int(p);
  return true;
}

bool parse_hop(const std::string& entry, JumpHop* hop, std::string* err) {
  std::string rest = entry;
  if (auto at = rest.rfind('@'); at != std::string::npos) {
    hop->user = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (hop->user.empty()) {
      *err = fmt::format("`{}`: empty user name before @", entry);
      return false;
    }
  }
  std::string port;
  if (!rest.empty() && rest[0] == '[') {  // [v6]:port or [v6]
    auto close = rest.find(']');
    if (close == std::string::npos) {
      *err = fmt::format("`{}`: missing ] after the IPv6 address", entry);
      return false;
    }
    hop->host = rest.substr(1, close - 1);
    std::string after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') {
        *err = fmt::format("`{}`: expected :PORT after ]", entry);
        return false;
      }
      port = after.substr(1);
      if (port.empty()) port = "?";
    }
  } else if (auto colon = rest.find(':');
             colon != std::string::npos && rest.find(':', colon + 1) == std::string::npos) {
    hop->host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
    if (port.empty()) port = "?";
  } else {
    hop->host = rest;  // no port, or a bare IPv6 address
  }
  if (hop->host.empty()) {
    *err = fmt::format("`{}`: no host name", entry);
    return false;
  }
  if (!port.empty() && !parse_port(port, &hop->port)) {
    *err = fmt::format("`{}`: port must be 1..65535", entry);
    return false;
  }
  return true;
}

}  // namespace

bool parse_jump_spec(const std::string& spec, std::vector<JumpHop>* hops, std::string* err) {
  hops->clear();
  if (strcasecmp(spec.c_str(), "none") == 0) return true;
  size_t start = 0;
  for (;;) {
    size_t comma = spec.find(',', start);
    std::string entry =
        spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (entry.empty() || entry.find_first_of(" \t") != std::string::npos) {
      *err = entry.empty() ? fmt::format("`{}`: empty hop (write [user@]host[:port],...)", spec)
                           : fmt::format("`{}`: a hop has no spaces", entry);
      return false;
    }
    JumpHop hop;
    if (!parse_hop(entry, &hop, err)) return false;
    hops->push_back(hop);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (hops->size() > kMaxJumpHops) {
    *err = fmt::format("`{}`: more than {} hops", spec, kMaxJumpHops);
    return false;
  }
  return true;
}

std::string hop_text(const JumpHop& hop) {
  std::string host = hop.host.find(':') != std::string::npos ? "[" + hop.host + "]" : hop.host;
  std::string out = hop.user.empty() ? host : hop.user + "@" + host;
  if (hop.port > 0) out += ":" + std::to_string(hop.port);
  return out;
}

std::optional<std::string> jump_from_proxy_command(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> w;
  for (std::string word; in >> word;) w.push_back(word);
  size_t i = 0;
  auto next_is = [&](const char* flag) { return i + 1 < w.size() && w[i] == flag; };
  if (w.empty() || w[i++] != "ssh") return std::nullopt;
  JumpHop first;
  std::string rest;
  if (next_is("-l")) first.user = w[i + 1], i += 2;
  if (next_is("-p")) {
    if (!parse_port(w[i + 1], &first.port)) return std::nullopt;
    i += 2;
  }
  if (next_is("-J")) rest = w[i + 1], i += 2;
  // 0.10.6 quotes the -W argument; earlier 0.10 releases did not.
  if (i + 3 != w.size() || w[i] != "-W" || (w[i + 1] != "'[%h]:%p'" && w[i + 1] != "[%h]:%p"))
    return std::nullopt;
  first.host = w[i + 2];
  std::string out = hop_text(first);
  if (!rest.empty()) out += "," + rest;
  return out;
}

}  // namespace ratchet::transport
