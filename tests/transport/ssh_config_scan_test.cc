// ssh_config(5) as ratchet reads it (ssh -G for the keywords it takes):
// patterns, Host and Match blocks, Include, token expansion.
#include "transport/ssh_config_scan.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "support/scratch_dir.h"
#include "support/sshd_fixture.h"

using namespace ratchet::transport;

namespace {

ratchet::testing::ScratchDir scratch("ratchet-config-scan");

std::string write(const std::string& name, const std::string& text) {
  std::string path = scratch.path + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  return path;
}

IdentityOptions scan(const std::string& config, const std::string& host,
                     const std::string& user = "") {
  IdentityOptions out;
  SshConfigQuery q;
  q.host = host;
  q.user = user;
  q.local_user = "me";
  auto err = scan_identity_options({{config, true}}, q, &out);
  INFO((err ? *err : ""));
  REQUIRE_FALSE(err);
  return out;
}

using Files = std::vector<std::string>;

}  // namespace

TEST_CASE("ssh config patterns: '*', '?', exact text", "[ssh_config]") {
  CHECK(ssh_pattern_match("gpu01", "gpu01"));
  CHECK(ssh_pattern_match("gpu01", "gpu*"));
  CHECK(ssh_pattern_match("gpu01", "*"));
  CHECK(ssh_pattern_match("", "*"));
  CHECK(ssh_pattern_match("gpu01", "gpu0?"));
  CHECK(ssh_pattern_match("gpu01.lab", "*.lab"));
  CHECK(ssh_pattern_match("a.b.c", "*.*.c"));
  CHECK(ssh_pattern_match("aaab", "*a*b"));
  CHECK_FALSE(ssh_pattern_match("gpu01", "gpu0"));
  CHECK_FALSE(ssh_pattern_match("gpu011", "gpu0?"));
  CHECK_FALSE(ssh_pattern_match("gpu01", "cpu*"));
  CHECK_FALSE(ssh_pattern_match("gpu01.lab.x", "*.lab"));
  CHECK_FALSE(ssh_pattern_match("GPU01", "gpu01"));  // exact; Host lines lower both sides
}

TEST_CASE("ssh config Host lines: any positive match, and no negated one", "[ssh_config]") {
  CHECK(ssh_host_line_matches("gpu01", {"gpu01"}));
  CHECK(ssh_host_line_matches("gpu01", {"cpu*", "gpu*"}));
  CHECK_FALSE(ssh_host_line_matches("GPU01", {"gpu*"}));  // case counts, as in OpenSSH
  CHECK_FALSE(ssh_host_line_matches("gpu01", {"GPU*"}));
  CHECK(ssh_host_line_matches("GPU01", {"GPU*"}));
  CHECK(ssh_host_line_matches("gpu01", {"*", "!bastion"}));
  CHECK_FALSE(ssh_host_line_matches("bastion", {"*", "!bastion"}));
  CHECK_FALSE(ssh_host_line_matches("bastion", {"!bastion", "*"}));  // order does not matter
  CHECK_FALSE(ssh_host_line_matches("gpu01", {"!bastion"}));  // a negation alone matches nothing
  CHECK_FALSE(ssh_host_line_matches("gpu01", {"!gpu*", "gpu01"}));
  CHECK_FALSE(ssh_host_line_matches("gpu01", {}));
}

TEST_CASE("ssh config pattern lists (Match criteria): commas and '!'", "[ssh_config]") {
  CHECK(ssh_pattern_list_match("gpu01", "cpu*,gpu*", true) == 1);
  CHECK(ssh_pattern_list_match("gpu01", "gpu*,!gpu01", true) == -1);
  CHECK(ssh_pattern_list_match("gpu02", "gpu*,!gpu01", true) == 1);
  CHECK(ssh_pattern_list_match("x", "gpu*", true) == 0);
  CHECK(ssh_pattern_list_match("GPU01", "gpu*", true) == 1);
  CHECK(ssh_pattern_list_match("Root", "root", false) == 0);  // user names keep their case
}

TEST_CASE("ssh config: IdentitiesOnly and IdentityFile of the blocks that apply",
          "[ssh_config]") {
  std::string cfg = write("basic", R"(# a comment
Host bastion
  IdentitiesOnly yes
  IdentityFile ~/.ssh/bastion

Host gpu* !gpu99
  IdentitiesOnly=no
  IdentityFile "~/.ssh/gpu key"
  IdentityFile ~/.ssh/gpu   # a comment after the value

Host *
  IdentitiesOnly yes
  IdentityFile ~/.ssh/id_all
  IdentityFile ~/.ssh/bastion
  IdentityAgent ~/agent.sock
)");
  SECTION("first value obtained wins; IdentityFile accumulates without duplicates") {
    auto b = scan(cfg, "bastion");
    CHECK(b.identities_only);
    CHECK(b.identity_files == Files{"~/.ssh/bastion", "~/.ssh/id_all"});
    CHECK(b.identity_agent == "~/agent.sock");
  }
  SECTION("an earlier `no` wins over a later `yes`") {
    auto g = scan(cfg, "gpu01");
    CHECK_FALSE(g.identities_only);
    CHECK(g.identity_files == Files{"~/.ssh/gpu key", "~/.ssh/gpu", "~/.ssh/id_all",
                                    "~/.ssh/bastion"});
  }
  SECTION("a negated pattern rules its Host line out") {
    auto n = scan(cfg, "gpu99");
    CHECK(n.identities_only);  // from Host *
    CHECK(n.identity_files == Files{"~/.ssh/id_all", "~/.ssh/bastion"});
  }
  SECTION("the name given is matched as given: case counts, as in OpenSSH") {
    CHECK(scan(cfg, "BASTION").identity_files == Files{"~/.ssh/id_all", "~/.ssh/bastion"});
  }
  SECTION("no config, no block: IdentitiesOnly stays no") {
    auto none = scan(write("empty", "Host other\n  IdentitiesOnly yes\n"), "gpu01");
    CHECK_FALSE(none.identities_only);
    CHECK(none.identity_files.empty());
    CHECK(none.identity_agent.empty());
    CHECK_FALSE(scan(scratch.path + "/missing", "gpu01").identities_only);
  }
}

TEST_CASE("ssh config: Host patterns test the name given, not a HostName", "[ssh_config]") {
  std::string cfg = write("hostname", R"(Host lab
  HostName 10.0.0.5
Host 10.0.0.*
  IdentitiesOnly yes
)");
  CHECK_FALSE(scan(cfg, "lab").identities_only);  // OpenSSH; libssh 0.10 would re-match
  CHECK(scan(cfg, "10.0.0.7").identities_only);
}

TEST_CASE("ssh config: an invalid IdentitiesOnly value is an error, applied or not",
          "[ssh_config]") {
  std::string cfg = write("bad", "Host other\n  IdentitiesOnly maybe\n");
  IdentityOptions out;
  auto err = scan_identity_options({{cfg, true}}, SshConfigQuery{"gpu01", "", "me"}, &out);
  REQUIRE(err);
  CHECK(*err == cfg + " line 2: IdentitiesOnly must be yes or no, not \"maybe\"");
  cfg = write("true", "Host *\n  IdentitiesOnly TRUE\n");
  CHECK(scan(cfg, "gpu01").identities_only);
}

TEST_CASE("ssh config: Include reads files in place, conditionally", "[ssh_config]") {
  write("inc.d/10-gpu.conf", "Host gpu*\n  IdentitiesOnly yes\n  IdentityFile /k/gpu\n");
  write("inc.d/20-all.conf", "IdentityFile /k/all\n");
  write("inc.d/skip.txt", "IdentityFile /k/never\n");
  write("other.conf", "IdentitiesOnly yes\nIdentityFile /k/other\n");
  write("loop.conf", "Include " + scratch.path + "/loop.conf\n");
  std::string cfg = write("includer", "Include " + scratch.path + "/inc.d/*.conf\n" +
                                          "Host cpu*\n  Include " + scratch.path +
                                          "/other.conf\n" + "Host *\n  IdentityFile /k/last\n");
  SECTION("a glob, in sorted order; a Host inside an included file does not leak out") {
    auto g = scan(cfg, "gpu01");
    CHECK(g.identities_only);
    CHECK(g.identity_files == Files{"/k/gpu", "/k/all", "/k/last"});
  }
  SECTION("an Include under a Host that does not apply reads nothing") {
    auto x = scan(cfg, "x");
    CHECK_FALSE(x.identities_only);
    CHECK(x.identity_files == Files{"/k/all", "/k/last"});
  }
  SECTION("an Include under a Host that applies") {
    auto c = scan(cfg, "cpu1");
    CHECK(c.identities_only);
    CHECK(c.identity_files == Files{"/k/all", "/k/other", "/k/last"});
  }
  SECTION("an Include loop stops at 16 levels with an error") {
    IdentityOptions out;
    auto err = scan_identity_options({{scratch.path + "/loop.conf", true}},
                                     SshConfigQuery{"h", "", "me"}, &out);
    REQUIRE(err);
    CHECK(err->find("Include nested more than 16 deep") != std::string::npos);
  }
}

TEST_CASE("ssh config: Match blocks", "[ssh_config]") {
  SECTION("host (the HostName so far), originalhost, user, localuser, all, negation") {
    std::string cfg = write("match", R"(Host lab
  HostName 10.0.0.5
  User deploy
Match host 10.0.0.* user deploy
  IdentityFile /k/host-and-user
Match originalhost lab !localuser root
  IdentityFile /k/original
Match user ops
  IdentityFile /k/ops
Match !host 10.*
  IdentityFile /k/not-ten
Match all
  IdentityFile /k/all
)");
    CHECK(scan(cfg, "lab").identity_files == Files{"/k/host-and-user", "/k/original", "/k/all"});
    // A user given outside the config (the inventory) is what Match user tests.
    CHECK(scan(cfg, "lab", "ops").identity_files == Files{"/k/original", "/k/ops", "/k/all"});
    CHECK(scan(cfg, "other").identity_files == Files{"/k/not-ten", "/k/all"});
  }
  SECTION("criteria not evaluated: only an IdentitiesOnly yes applies, and is reported") {
    std::string cfg = write("exec", R"(Match exec "test -e /nonexistent" host lab
  IdentitiesOnly yes
  IdentityFile /k/exec
Host *
  IdentityFile /k/any
)");
    auto lab = scan(cfg, "lab");
    CHECK(lab.identities_only);
    CHECK(lab.identity_files == Files{"/k/any"});
    REQUIRE(lab.assumed.size() == 1);
    CHECK(lab.assumed[0] == cfg + " line 1");
    // A criterion that fails rules the block out whatever the others.
    auto other = scan(cfg, "other");
    CHECK_FALSE(other.identities_only);
    CHECK(other.assumed.empty());
    // An `IdentitiesOnly no` there is not applied: a later yes still counts.
    std::string no = write("exec-no", "Match localnetwork 10.0.0.0/8\n  IdentitiesOnly no\n"
                                      "Host *\n  IdentitiesOnly yes\n");
    CHECK(scan(no, "lab").identities_only);
  }
}

TEST_CASE("ssh config files: -F, none, and the defaults", "[ssh_config]") {
  CHECK(ssh_config_files("none").empty());
  auto def = ssh_config_files("");
  REQUIRE(def.size() == 2);
  CHECK(def[0].path == user_home() + "/.ssh/config");
  CHECK(def[0].user);
  CHECK(def[1].path == "/etc/ssh/ssh_config");
  CHECK_FALSE(def[1].user);
  auto f = ssh_config_files("~/cfg");
  REQUIRE(f.size() == 1);
  CHECK(f[0].path == user_home() + "/cfg");
}

TEST_CASE("IdentityFile tokens expand as ssh(1) does", "[ssh_config]") {
  IdentityPathContext c;
  c.home = "/home/me";
  c.local_user = "me";
  c.local_host = "laptop.example.org";
  c.remote_host = "10.0.0.5";
  c.original_host = "lab";
  c.remote_user = "deploy";
  c.port = 2222;
  c.uid = 1000;
  CHECK(expand_identity_path("~/.ssh/id", c) == "/home/me/.ssh/id");
  CHECK(expand_identity_path("%d/.ssh/%r@%h:%p", c) == "/home/me/.ssh/deploy@10.0.0.5:2222");
  CHECK(expand_identity_path("/k/%n-%k-%u-%i-%l-%L-100%%", c) ==
        "/k/lab-lab-me-1000-laptop.example.org-laptop-100%");
  CHECK(expand_identity_path("/k/%Z", c) == "/k/%Z");  // unknown: left as written
  ::setenv("RATCHET_SCAN_TEST", "val", 1);
  CHECK(expand_identity_path("/k/${RATCHET_SCAN_TEST}/x", c) == "/k/val/x");
  ::unsetenv("RATCHET_SCAN_TEST");
  CHECK(expand_identity_path("/k/${RATCHET_SCAN_TEST}", c) == "/k/${RATCHET_SCAN_TEST}");
  CHECK(expand_identity_path("rel/~/x", c) == "rel/~/x");
  // %C: SHA-1 of %l%h%p%r, as ssh(1) (printf 'laptop.example.org10.0.0.52222deploy' | sha1sum).
  CHECK(expand_identity_path("/k/%C", c) == "/k/" + ratchet::testing::run_local(
      "printf %s laptop.example.org10.0.0.52222deploy | sha1sum | cut -d' ' -f1 | tr -d '\n'"));
}

namespace {

SshHostConfig resolve(const std::string& config, const std::string& host,
                      const std::string& user = "") {
  SshHostConfig out;
  SshConfigQuery q;
  q.host = host;
  q.user = user;
  q.local_user = "me";
  auto err = scan_ssh_config({{config, true}}, q, &out);
  INFO((err ? *err : ""));
  REQUIRE_FALSE(err);
  return out;
}

}  // namespace

TEST_CASE("ssh config: HostName Port User and the jump of the host argument", "[ssh_config]") {
  std::string cfg = write("resolve", R"(Host web
  HostName Web.Example.ORG
  Port 2201
Host w*
  Port 2999
  User deploy
  ProxyJump ops@bastion:2222,b2
Host pc
  ProxyCommand nc -X connect %h %p   # the whole rest of the line
  ProxyJump never-used
Host *.lab
  HostName %h.internal
Host Upper
  User upper
)");
  auto web = resolve(cfg, "web");
  CHECK(web.hostname == "web.example.org");  // lowercased, as ssh -G
  CHECK(web.port == 2201);                   // the first value obtained
  CHECK(web.user == "deploy");
  CHECK(web.proxy_jump == "ops@bastion:2222,b2");
  CHECK(web.proxy_command.empty());
  auto pc = resolve(cfg, "pc");
  CHECK(pc.proxy_command == "nc -X connect %h %p   # the whole rest of the line");
  CHECK(pc.proxy_jump.empty());  // one slot: the ProxyCommand came first
  CHECK(resolve(cfg, "app.lab").hostname == "app.lab.internal");
  CHECK(resolve(cfg, "App.LAB").hostname == "app.lab");  // `Host *.lab` is case-sensitive
  CHECK(resolve(cfg, "Upper").user == "upper");
  CHECK(resolve(cfg, "upper").user.empty());
  auto other = resolve(cfg, "OTHER");
  CHECK(other.hostname == "other");
  CHECK(other.port == 0);
}

TEST_CASE("ssh config: Match final reads the config again for the HostName", "[ssh_config]") {
  std::string cfg = write("final", R"(Match final host b
  Port 8
Host a
  HostName B
Host b
  User ub
Match canonical
  IdentityFile /k/canonical
)");
  auto a = resolve(cfg, "a");
  CHECK(a.hostname == "b");
  CHECK(a.port == 8);
  CHECK(a.user == "ub");  // Host lines test the HostName on the final pass
  CHECK(a.identity.identity_files == Files{"/k/canonical"});
  // No `Match final` anywhere: one pass, and final/canonical never hold.
  std::string one = write("one-pass", "Host a\n  HostName b\nHost b\n  User ub\nMatch canonical\n  Port 9\n");
  auto b = resolve(one, "a");
  CHECK(b.user.empty());
  CHECK(b.port == 0);
}

TEST_CASE("ssh config: host key and algorithm keywords and bad values", "[ssh_config]") {
  std::string cfg = write("algos", R"(Host h
  HostKeyAlgorithms -ssh-ed25519
  PubkeyAcceptedKeyTypes +ssh-rsa
  HashKnownHosts yes
  UserKnownHostsFile ~/kh1 ~/kh2
Host *
  HostKeyAlgorithms ssh-rsa
  HashKnownHosts no
  GlobalKnownHostsFile /etc/kh
)");
  auto h = resolve(cfg, "h");
  CHECK(h.host_key_algorithms == "-ssh-ed25519");
  CHECK(h.pubkey_accepted_algorithms == "+ssh-rsa");
  CHECK(h.hash_known_hosts == true);
  CHECK(h.user_known_hosts_files == Files{"~/kh1", "~/kh2"});
  CHECK(h.global_known_hosts_file == "/etc/kh");
  auto x = resolve(cfg, "x");
  CHECK(x.host_key_algorithms == "ssh-rsa");
  CHECK(x.hash_known_hosts == false);
  SshHostConfig out;
  std::string bad = write("bad-port", "Host other\n  Port 99999\n");
  auto err = scan_ssh_config({{bad, true}}, SshConfigQuery{"h", "", "me"}, &out);
  REQUIRE(err);
  CHECK(*err == bad + " line 2: Port must be 1..65535, not \"99999\"");
  bad = write("bad-hash", "HashKnownHosts maybe\n");
  err = scan_ssh_config({{bad, true}}, SshConfigQuery{"h", "", "me"}, &out);
  REQUIRE(err);
  CHECK(*err == bad + " line 1: HashKnownHosts must be yes or no, not \"maybe\"");
}
