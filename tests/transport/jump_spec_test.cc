// Jump specs as text: ProxyJump / inventory `jump` parsing, and the ProxyJump
// recovered from the ProxyCommand libssh 0.10 generates (no network).
#include "transport/jump_spec.h"

#include <catch2/catch.hpp>

using namespace ratchet::transport;

namespace {

std::vector<std::string> texts(const std::string& spec) {
  std::vector<JumpHop> hops;
  std::string err;
  INFO(spec);
  REQUIRE(parse_jump_spec(spec, &hops, &err));
  std::vector<std::string> out;
  for (const auto& h : hops) out.push_back(hop_text(h));
  return out;
}

std::string error_of(const std::string& spec) {
  std::vector<JumpHop> hops;
  std::string err;
  CHECK_FALSE(parse_jump_spec(spec, &hops, &err));
  return err;
}

}  // namespace

TEST_CASE("jump spec: hops, users, ports, IPv6 and none", "[jump]") {
  std::vector<JumpHop> hops;
  std::string err;
  REQUIRE(parse_jump_spec("ops@bastion:2222", &hops, &err));
  REQUIRE(hops.size() == 1);
  CHECK(hops[0].user == "ops");
  CHECK(hops[0].host == "bastion");
  CHECK(hops[0].port == 2222);
  CHECK(texts("bastion") == std::vector<std::string>{"bastion"});
  CHECK(texts("a,b@c,d:23") == std::vector<std::string>{"a", "b@c", "d:23"});
  CHECK(texts("root@[::1]:23") == std::vector<std::string>{"root@[::1]:23"});
  REQUIRE(parse_jump_spec("[fe80::1]", &hops, &err));
  CHECK(hops[0].host == "fe80::1");
  CHECK(hops[0].port == 0);
  CHECK(texts("me@corp@gw") ==
        std::vector<std::string>{"me@corp@gw"});  // the last @ splits, as ssh does
  CHECK(texts("none").empty());
  CHECK(texts("NONE").empty());
}

TEST_CASE("jump spec: malformed entries are refused with the reason", "[jump]") {
  CHECK(error_of("") == "``: empty hop (write [user@]host[:port],...)");
  CHECK(error_of("a,,b") == "`a,,b`: empty hop (write [user@]host[:port],...)");
  CHECK(error_of("bastion:0") == "`bastion:0`: port must be 1..65535");
  CHECK(error_of("bastion:http") == "`bastion:http`: port must be 1..65535");
  CHECK(error_of("bastion:") == "`bastion:`: port must be 1..65535");
  CHECK(error_of("@bastion") == "`@bastion`: empty user name before @");
  CHECK(error_of("ops@:22") == "`ops@:22`: no host name");
  CHECK(error_of("[::1") == "`[::1`: missing ] after the IPv6 address");
  CHECK(error_of("a b") == "`a b`: a hop has no spaces");
  CHECK(error_of("a,b,c,d,e,f,g,h,i") == "`a,b,c,d,e,f,g,h,i`: more than 8 hops");
}

TEST_CASE("jump spec: the ProxyJump behind libssh 0.10's generated ProxyCommand", "[jump]") {
  // Exactly what libssh 0.10.6 stores for these ProxyJump lines (checked
  // against ssh_options_parse_config + ssh_options_get).
  CHECK(jump_from_proxy_command("ssh -W '[%h]:%p' bastion") == "bastion");
  CHECK(jump_from_proxy_command("ssh -l ops -p 2200 -J b2,root@[::1]:23 -W '[%h]:%p' b1") ==
        "ops@b1:2200,b2,root@[::1]:23");
  CHECK(jump_from_proxy_command("ssh -l root -p 23 -J x -W '[%h]:%p' ::1") == "root@[::1]:23,x");
  CHECK(jump_from_proxy_command("ssh -l user -p 2222 -W '[%h]:%p' 10.0.0.1") ==
        "user@10.0.0.1:2222");
  CHECK(jump_from_proxy_command("ssh -W [%h]:%p gw") == "gw");  // 0.10 before 0.10.6: no quotes
  // A ProxyCommand the user wrote is not a jump.
  CHECK_FALSE(jump_from_proxy_command("nc %h %p"));
  CHECK_FALSE(jump_from_proxy_command("ssh -W %h:%p bastion"));
  CHECK_FALSE(jump_from_proxy_command("ssh -q -W '[%h]:%p' bastion"));
  CHECK_FALSE(jump_from_proxy_command("ssh -W '[%h]:%p' bastion extra"));
  CHECK_FALSE(jump_from_proxy_command(""));
}
