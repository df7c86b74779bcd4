#include "playbook/guards.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "playbook/inventory.h"
#include "playbook/loader.h"

using namespace ratchet::playbook;

namespace {

std::string scratch_file(const std::string& name, const std::string& text) {
  std::string path = (std::filesystem::temp_directory_path() / ("ratchet-guards-" + std::to_string(getpid()) + name)).string();
  std::ofstream(path) << text;
  return path;
}

// Loads playbook `text`; its errors, formatted (the path cut to "pb.toml"), or "(loaded)" with *out filled.
std::string load(const std::string& text, Playbook* out = nullptr) {
  std::string path = scratch_file("pb.toml", text);
  std::vector<LoadError> errors;
  auto pb = load_playbook(path, {}, &errors);
  std::filesystem::remove(path);
  std::string msg;
  for (const auto& e : errors) msg += format_error(e);
  for (size_t at; (at = msg.find(path)) != std::string::npos;) msg.replace(at, path.size(), "pb.toml");
  if (pb && out) *out = *pb;
  return pb ? "(loaded)" : msg;
}

const char* kSteps = "[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = \"true\"\n";

}  // namespace

TEST_CASE("guards: the host's lock and audit keys win over the playbook's over the defaults", "[playbook]") {
  Guards none = resolve_guards({}, {});
  CHECK_FALSE(none.lock);
  CHECK(none.lock_path == "/run/lock/ratchet.lock");
  CHECK(none.audit_log == "/var/log/ratchet/runs.log");
  GuardKeys pb, host;
  pb.lock = true;
  pb.lock_path = "/tmp/a.lock";
  host.audit_log = "";  // audit_log = false
  Guards g = resolve_guards(pb, host);
  CHECK(g.lock);
  CHECK(g.lock_path == "/tmp/a.lock");
  CHECK(g.audit_log.empty());
  host.lock = false;
  CHECK_FALSE(resolve_guards(pb, host).lock);
}

TEST_CASE("guards: top-level lock keys load and bad ones are errors at their value", "[playbook]") {
  Playbook pb;
  REQUIRE(load(std::string("name = \"t\"\nlock = true\nlock_path = \"/tmp/x.lock\"\naudit_log = false\n") + kSteps, &pb) ==
          "(loaded)");
  CHECK(pb.guards.lock == true);
  CHECK(pb.guards.lock_path == "/tmp/x.lock");
  CHECK(pb.guards.audit_log == "");
  CHECK(load(std::string("name = \"t\"\nlock = \"yes\"\n") + kSteps).find("pb.toml:2:") != std::string::npos);
  CHECK(load(std::string("name = \"t\"\nlock = \"yes\"\n") + kSteps).find("`lock` must be true or false") !=
        std::string::npos);
  CHECK(load(std::string("name = \"t\"\naudit_log = true\n") + kSteps).find("`audit_log` must be an absolute path or false") !=
        std::string::npos);
  CHECK(load(std::string("name = \"t\"\nlock_path = \"run/x\"\n") + kSteps).find("`lock_path` must be an absolute path") !=
        std::string::npos);
  CHECK(load(std::string("name = \"t\"\naudit_log = \"/var/log/\\nx\"\n") + kSteps).find("control character") !=
        std::string::npos);
}

TEST_CASE("guards: an inventory host sets its own lock and audit_log", "[playbook]") {
  std::string path = scratch_file("inv.toml",
                                  "[hosts.a]\naddress = \"127.0.0.1\"\nlock = true\naudit_log = \"/tmp/r.log\"\n"
                                  "[hosts.b]\naddress = \"127.0.0.1\"\naudit_log = false\n");
  std::vector<LoadError> errors;
  auto inv = load_inventory(path, &errors);
  std::filesystem::remove(path);
  for (const auto& e : errors) FAIL_CHECK(format_error(e));
  REQUIRE(inv);
  CHECK(inv->hosts.at("a").guards.lock == true);
  CHECK(inv->hosts.at("a").guards.audit_log == "/tmp/r.log");
  CHECK_FALSE(inv->hosts.at("b").guards.lock.has_value());
  CHECK(inv->hosts.at("b").guards.audit_log == "");
}
