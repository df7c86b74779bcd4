#include "playbook/inventory.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "playbook/loader.h"

using namespace ratchet::playbook;

namespace {

std::string lab_path() { return std::string(RATCHET_SOURCE_DIR) + "/tests/playbook/data/lab.toml"; }

Inventory lab() {
  std::vector<LoadError> errors;
  auto inv = load_inventory(lab_path(), &errors);
  for (const auto& e : errors) FAIL_CHECK(format_error(e));
  REQUIRE(inv);
  return *inv;
}

// Loads inventory `text` and returns its errors, formatted, path cut to "inv.toml".
std::string errors_of(const std::string& text) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("ratchet-inv-" + std::to_string(getpid()) + ".toml"))
                         .string();
  std::ofstream(path) << text;
  std::vector<LoadError> errors;
  auto inv = load_inventory(path, &errors);
  std::string out;
  for (const auto& e : errors) out += format_error(e);
  std::filesystem::remove(path);
  for (size_t at; (at = out.find(path)) != std::string::npos;)
    out.replace(at, path.size(), "inv.toml");
  return inv ? "(loaded)" : out;
}

std::vector<std::string> names(const std::vector<const Host*>& hosts) {
  std::vector<std::string> out;
  for (const Host* h : hosts) out.push_back(h->name);
  return out;
}

}  // namespace

TEST_CASE("an inventory file loads hosts, groups and group vars", "[playbook]") {
  Inventory inv = lab();
  CHECK(inv.path == lab_path());
  REQUIRE(inv.hosts.size() == 3);
  CHECK(inv.order == std::vector<std::string>{"gpu-box", "gpu-box-2", "build"});
  const Host& a = inv.hosts.at("gpu-box");
  CHECK(a.address == "192.0.2.10");
  CHECK(a.port == 22);
  CHECK(a.user == "root");
  CHECK(a.identity == "~/.ssh/id_ed25519");
  CHECK(a.vars == Value({{"gpus", 8}}));
  CHECK(a.where.str() == lab_path() + ":2:8");
  const Host& b = inv.hosts.at("gpu-box-2");
  CHECK(b.port == 2222);
  CHECK(b.become);
  CHECK(b.become_user == "root");
  CHECK(b.known_hosts == "lab_known_hosts");
  CHECK(b.jump == "ops@bastion:22");
  const Host& c = inv.hosts.at("build");
  CHECK(c.port == 0);
  CHECK(c.user.empty());
  CHECK(inv.groups.at("everything") == std::vector<std::string>{"lab", "build"});
  CHECK(inv.group_vars.at("lab") == Value({{"tier", "gpu"}}));
}

TEST_CASE("targets resolve through groups of groups, in file order", "[playbook]") {
  Inventory inv = lab();
  std::string err;
  CHECK(names(resolve_targets(inv, {"all"}, {}, &err)) ==
        std::vector<std::string>{"gpu-box", "gpu-box-2", "build"});
  CHECK(names(resolve_targets(inv, {"build", "everything", "gpu-box"}, {}, &err)) ==
        std::vector<std::string>{"gpu-box", "gpu-box-2", "build"});
  CHECK(names(resolve_targets(inv, {"lab"}, {}, &err)) ==
        std::vector<std::string>{"gpu-box", "gpu-box-2"});
  CHECK(names(resolve_targets(inv, {"all"}, {"lab"}, &err)) ==
        std::vector<std::string>{"gpu-box", "gpu-box-2"});
  CHECK(names(resolve_targets(inv, {"all"}, {"*-2", "bui?d"}, &err)) ==
        std::vector<std::string>{"gpu-box-2", "build"});
  CHECK(names(resolve_targets(inv, {"everything"}, {"ev*"}, &err)) ==
        std::vector<std::string>{"gpu-box", "gpu-box-2", "build"});
  CHECK(err.empty());
  CHECK(names(group_hosts(inv, "everything")) ==
        std::vector<std::string>{"gpu-box", "gpu-box-2", "build"});
}

TEST_CASE("bad selections are errors with suggestions", "[playbook]") {
  Inventory inv = lab();
  std::string err;
  CHECK(resolve_targets(inv, {"labb"}, {}, &err).empty());
  CHECK(err == "unknown host or group `labb` in targets (did you mean `lab`?)");
  CHECK(resolve_targets(inv, {"all"}, {"gpu-bx"}, &err).empty());
  CHECK(err == "unknown host or group `gpu-bx` in --limit (did you mean `gpu-box`?)");
  CHECK(resolve_targets(inv, {"all"}, {"db*"}, &err).empty());
  CHECK(err == "--limit `db*` matches no host or group");
  CHECK(resolve_targets(inv, {"lab"}, {"build"}, &err).empty());
  CHECK(err == "--limit `build` selects no target: build is in the inventory but not among the targets (lab)");
  CHECK(resolve_targets(inv, {}, {}, &err).empty());
  CHECK(err == "no targets: name hosts or groups in the playbook's `targets`");
}

TEST_CASE("a --limit pattern that selects no target says which and why", "[playbook]") {
  Inventory inv = lab();
  std::string err;
  // One pattern of several that selects nothing is an error too (was: silently dropped).
  CHECK(resolve_targets(inv, {"lab"}, {"gpu-box", "build"}, &err).empty());
  CHECK(err == "--limit `build` selects no target: build is in the inventory but not among the targets (lab)");
  CHECK(resolve_targets(inv, {"gpu-box"}, {"lab", "gpu-box"}, &err).size() == 1);
  CHECK(resolve_targets(inv, {"build"}, {"lab"}, &err).empty());
  CHECK(err == "--limit `lab` selects no target: group lab is in the inventory, but its hosts (gpu-box, "
               "gpu-box-2) are not among the targets (build)");
  CHECK(resolve_targets(inv, {"build"}, {"gpu*"}, &err).empty());
  CHECK(err == "--limit `gpu*` selects no target: it matches gpu-box, gpu-box-2, whose hosts (gpu-box, "
               "gpu-box-2) are not among the targets (build)");
  inv.groups["empty"] = {};
  CHECK(resolve_targets(inv, {"all"}, {"empty"}, &err).empty());
  CHECK(err == "--limit `empty` selects no target: group empty holds no host");
}

TEST_CASE("a host sees group vars, outermost first, then its own", "[playbook]") {
  Inventory inv = lab();
  CHECK(host_scope_vars(inv, inv.hosts.at("gpu-box")) ==
        Value({{"rack", "a"}, {"site", "fra"}, {"tier", "gpu"}, {"gpus", 8}}));
  CHECK(host_scope_vars(inv, inv.hosts.at("gpu-box-2")) ==
        Value({{"rack", "b"}, {"site", "fra"}, {"tier", "gpu"}, {"gpus", 4}}));
  CHECK(host_scope_vars(inv, inv.hosts.at("build")) ==
        Value({{"rack", "a"}, {"site", "fra"}, {"tier", "any"}}));
}

TEST_CASE("inventory errors: keys, ports, members, cycles", "[playbook]") {
  CHECK(errors_of(R"([hosts.a]
adress = "x"
port = 70000
[hosts.b]
[groups]
g = ["a", "bb"]
h = ["i"]
i = ["h", "a"]
[group_vars.gg]
x = 1
[hostz]
)") == "inv.toml:2:1: error: unknown key `adress` in host `a` (did you mean `address`?)\n"
       "    adress = \"x\"\n"
       "    ^\n"
       "inv.toml:3:8: error: `port` 70000 is outside 1..65535\n"
       "    port = 70000\n"
       "           ^\n"
       "inv.toml:6:11: error: unknown host or group `bb` in group `g` (did you mean `b`?)\n"
       "    g = [\"a\", \"bb\"]\n"
       "              ^\n"
       "inv.toml:7:1: error: group `h` contains itself (h -> i -> h)\n"
       "    h = [\"i\"]\n"
       "    ^\n"
       "inv.toml:9:13: error: group_vars for unknown group `gg` (did you mean `g`?)\n"
       "    [group_vars.gg]\n"
       "                ^\n"
       "inv.toml:11:2: error: unknown inventory key `hostz` (did you mean `hosts`?)\n"
       "    [hostz]\n"
       "     ^\n");
  CHECK(errors_of("[hosts.all]\n[hosts.x]\n[groups]\nx = [\"all\"]\n") ==
        "inv.toml:1:8: error: `all` names every host; a host cannot be called that\n"
        "    [hosts.all]\n"
        "           ^\n"
        "inv.toml:4:1: error: `x` is both a host and a group\n"
        "    x = [\"all\"]\n"
        "    ^\n"
        "inv.toml:4:6: error: unknown host or group `all` in group `x`\n"
        "    x = [\"all\"]\n"
        "         ^\n");
}

TEST_CASE("an address that is not a host name or IP is an error at its value, never dropped", "[playbook]") {
  // libssh rejects such a value; it used to keep the host's name and connect there.
  CHECK(errors_of("[hosts.localhost]\naddress = \"127.0.0.9 # typo\"\n") ==
        "inv.toml:2:11: error: host `localhost`: address `127.0.0.9 # typo` holds a space (write a host name, an "
        "IPv4 address or an IPv6 address (no port: use `port`))\n"
        "    address = \"127.0.0.9 # typo\"\n"
        "              ^\n");
  CHECK(errors_of("[hosts.a]\naddress = \"-oProxyCommand=sh\"\n").find(
            "inv.toml:2:11: error: host `a`: address `-oProxyCommand=sh` starts with `-`") == 0);
  CHECK(errors_of("[hosts.a]\naddress = \"\"\n").find("inv.toml:2:11: error: host `a`: address `` is empty") == 0);
  CHECK(errors_of("[hosts.a]\naddress = \"10.0.0.1;x\"\n").find("holds `;`") != std::string::npos);
  CHECK(errors_of("[hosts.a]\naddress = \"127.0.0.1:22\"\n").find("address `127.0.0.1:22` holds a port") !=
        std::string::npos);
  CHECK(errors_of("[hosts.a]\naddress = \"a\\tb\"\n").find("holds `\\x09`") != std::string::npos);
  for (const char* good : {"gpu-box.lab.example", "10.0.0.5", "fe80::1%eth0", "::1", "host_1"}) {
    INFO(good);
    CHECK(errors_of(std::string("[hosts.a]\naddress = \"") + good + "\"\n") == "(loaded)");
  }
}

TEST_CASE("a malformed jump is an error at its value, with the line and a caret", "[playbook]") {
  CHECK(errors_of("[hosts.box]\naddress = \"127.0.0.1\"\njump = \"user@:notaport\"\n") ==
        "inv.toml:3:8: error: host `box`: jump `user@:notaport`: no host name (write jump = \"user@host:port\", "
        "or \"user@a:22,user@b:22\" for a chain)\n"
        "    jump = \"user@:notaport\"\n"
        "           ^\n");
}

TEST_CASE("an inventory with no hosts says so, naming the file", "[playbook]") {
  Inventory inv;
  inv.path = "empty.toml";
  std::string err;
  CHECK(resolve_targets(inv, {"all"}, {}, &err).empty());
  CHECK(err == "inventory empty.toml defines no hosts: add a [hosts.NAME] table with its address");
}

TEST_CASE("an inventory's [defaults] sign is read and a wrong key or type there is named", "[playbook]") {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("ratchet-inv-sign-" + std::to_string(getpid()) + ".toml"))
                         .string();
  std::ofstream(path) << "[defaults]\nsign = true\n[hosts.a]\naddress = \"10.0.0.1\"\n";
  std::vector<LoadError> errors;
  auto inv = load_inventory(path, &errors);
  std::filesystem::remove(path);
  REQUIRE(inv);
  CHECK(inv->sign);
  CHECK_FALSE(lab().sign);
  CHECK(errors_of("[defaults]\nsing = true\n[hosts.a]\n") ==
        "inv.toml:2:1: error: unknown key `sing` in the inventory's [defaults] (did you mean `sign`?)\n"
        "    sing = true\n"
        "    ^\n");
  CHECK(errors_of("[defaults]\nsign = \"yes\"\n[hosts.a]\n") ==
        "inv.toml:2:8: error: `sign` must be a boolean, not a string (write sign = true or sign = false)\n"
        "    sign = \"yes\"\n"
        "           ^\n");
}
