// cli/options.h: --target parsing, endpoints, loading with -e/--secret, secret sources.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "cli/options.h"
#include "support/files.h"
#include "support/local_proc.h"

using namespace ratchet;
using namespace ratchet::cli;
using ratchet::testing::read_file;
using ratchet::testing::temp_dir;
using ratchet::testing::write_file;

TEST_CASE("parse_target: [user@]host[:port], the port checked", "[cli]") {
  std::string err;
  auto a = parse_target("ops@10.0.0.5:2222", &err);
  REQUIRE(a);
  CHECK(a->user == "ops");
  CHECK(a->name == "10.0.0.5:2222");
  CHECK(a->port == 2222);
  CHECK(a->address.empty());  // ~/.ssh/config's HostName still applies
  auto b = parse_target("gpu-box", &err);
  REQUIRE(b);
  CHECK(b->user.empty());
  CHECK(b->name == "gpu-box");
  CHECK(b->port == 0);
  auto v6 = parse_target("fe80::1", &err);  // two colons: no port part
  REQUIRE(v6);
  CHECK(v6->name == "fe80::1");
  CHECK(v6->port == 0);
  for (const char* bad : {"box:0", "box:65536", "box:", "box:22x", "ops@"}) {
    INFO(bad);
    err.clear();
    CHECK_FALSE(parse_target(bad, &err));
    CHECK_FALSE(err.empty());
  }
  parse_target("box:0", &err);
  CHECK(err == "--target box:0: port must be 1..65535");
  parse_target("ops@", &err);
  CHECK(err == "--target ops@: no host name");
}

TEST_CASE("endpoint_for: the host's settings, then -F, --known-hosts, --accept-new, --connect-timeout", "[cli]") {
  playbook::Host h;
  h.name = "box";
  h.address = "127.0.0.1";
  h.port = 2200;
  h.user = "root";
  h.identity = "/k";
  Options o;
  o.known_hosts = "/kh";
  o.ssh_config = "none";
  o.accept_new = true;
  o.connect_timeout = util::Millis(2500);
  auto e = endpoint_for(h, o);
  CHECK(e.name == "box");  // the ssh config is matched on the inventory name
  CHECK(e.address == "127.0.0.1");
  CHECK(e.port == 2200);
  CHECK(e.user == "root");
  CHECK(e.identity == "/k");
  CHECK(e.known_hosts == "/kh");
  CHECK(e.ssh_config == "none");
  CHECK(e.accept_new);
  CHECK(e.connect_timeout == util::Millis(2500));
  h.known_hosts = "/host-kh";  // the inventory's own file wins over --known-hosts
  CHECK(endpoint_for(h, o).known_hosts == "/host-kh");
  CHECK(endpoint_for(h, Options{}).connect_timeout == util::Millis(10'000));
}

TEST_CASE("resolve_secrets: env:, file: (one trailing newline dropped), -e --secret, and *** in a dry run", "[cli]") {
  std::string dir = temp_dir("ratchet-options");
  write_file(dir + "/pw", "file-pw\n");
  std::string pb = dir + "/p.toml";
  write_file(pb, "name = \"p\"\n[secrets]\ntoken = \"env:RATCHET_OPTIONS_TEST_TOKEN\"\npw = \"file:" + dir +
                     "/pw\"\n[vars]\napi = \"placeholder\"\n[inventory.hosts.h]\naddress = \"127.0.0.1\"\n"
                     "[[step]]\nid = \"s\"\nkind = \"run\"\ncommand = \"cat\"\nstdin = \"{{ token }} {{ pw }} {{ api }}\"\n");
  ::setenv("RATCHET_OPTIONS_TEST_TOKEN", "env-tok", 1);
  Options o;
  o.playbook = pb;
  o.extra = {"api=1234"};  // a secret's text is never read as TOML: "1234" stays a string
  o.secret = {"api"};
  auto L = load_all(o);
  REQUIRE(L);
  CHECK_FALSE(L->pb.vars.contains("api"));  // a secret now, not a var
  CHECK(L->pb.secrets.at("api") == "-e");
  auto dry = resolve_secrets(L->pb, true);
  REQUIRE(dry);
  CHECK(*dry == playbook::Value({{"token", "***"}, {"pw", "***"}, {"api", "***"}}));
  auto real = resolve_secrets(L->pb, false);
  REQUIRE(real);
  CHECK(*real == playbook::Value({{"token", "env-tok"}, {"pw", "file-pw"}, {"api", "1234"}}));
  ::unsetenv("RATCHET_OPTIONS_TEST_TOKEN");
  CHECK_FALSE(resolve_secrets(L->pb, false));  // the env source is gone: an error, nothing resolved
  CHECK(resolve_secrets(L->pb, true));         // a dry run never reads a source

  o.extra = {"api=1", "api=2"};  // given twice: the last wins, as for vars
  auto twice = load_all(o);
  REQUIRE(twice);
  CHECK(twice->pb.extra_secrets.at("api") == "2");
  o.extra = {};
  CHECK_FALSE(load_all(o));  // --secret api with no -e api=...
  o.extra = {"token=x"};
  o.secret = {"token"};  // a [secrets] name: -e cannot set it
  CHECK_FALSE(load_all(o));
}
