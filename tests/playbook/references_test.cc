#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "playbook/loader.h"
#include "support/scratch_dir.h"

using namespace ratchet::playbook;

namespace {

const std::string& scratch() {
  static const ratchet::testing::ScratchDir dir("ratchet-refs");
  return dir.path;
}

void write(const std::string& name, const std::string& text) {
  std::ofstream(scratch() + "/" + name, std::ios::binary) << text;
}

// Loads pb.toml (which must load) and returns check_references' errors, formatted.
std::string ref_errors(const std::string& text, const Inventory* inv = nullptr) {
  write("pb.toml", text);
  std::vector<LoadError> errors;
  auto pb = load_playbook(scratch() + "/pb.toml", {}, &errors);
  for (const auto& e : errors) FAIL_CHECK(format_error(e));
  REQUIRE(pb);
  check_references(*pb, inv, &errors);
  std::string out;
  for (const auto& e : errors) out += format_error(e);
  for (size_t at; (at = out.find(scratch() + "/")) != std::string::npos;)
    out.replace(at, scratch().size() + 1, "");
  return out;
}

}  // namespace

TEST_CASE("references to vars, secrets and built-ins pass", "[playbook]") {
  CHECK(ref_errors(R"(name = "t"
[vars]
unit = "x"
cfg = { a = 1 }
go = true
[secrets]
token = "env:T"
[[step]]
id = "a"
kind = "run"
command = "echo {{ unit }} {{ cfg.a }} {{ host.name }} {{ host.address }} {{ run.id }}"
stdin = "{{ token }} {{ run.started }} {{ playbook.name }} {{ playbook.sha256 }}"
register = "first"
when = "not go"
[[step]]
id = "b"
kind = "run"
command = "echo {{ steps.a.rc }} {{ steps.first.stdout }} {{ ratchet.version }}"
check = "test {{ steps.a.holders }} {{ steps.first.holders_left }}"
)") == "");
}

TEST_CASE("undefined references are errors at the template", "[playbook]") {
  CHECK(ref_errors(R"(name = "t"
[vars]
unit = "x"
[[step]]
id = "a"
kind = "service"
unit = "pre-{{ unti }}"
state = "started"
when = "enabld"
[[step]]
id = "b"
kind = "kill"
holders_of = ["/dev/x", "{{ steps.a.stauts }}", "{{ steps.c.rc }}", "{{ steps.zz.rc }}"]
[[step]]
id = "c"
kind = "verify"
command = "echo {{ host.nmae }} {{ steps.b }}"
)") == "pb.toml:7:13: error: undefined variable `unti` (did you mean `unit`?)\n"
       "    unit = \"pre-{{ unti }}\"\n"
       "                ^\n"
       "pb.toml:9:8: error: undefined variable `enabld` in `when`\n"
       "    when = \"enabld\"\n"
       "           ^\n"
       "pb.toml:13:26: error: unknown step result `stauts` in `steps.a.stauts` (did you mean "
       "`status`?)\n"
       "    holders_of = [\"/dev/x\", \"{{ steps.a.stauts }}\", \"{{ steps.c.rc }}\", \"{{ "
       "steps.zz.rc }}\"]\n"
       "                             ^\n"
       "pb.toml:13:50: error: `steps.c.rc`: step `c` has not run yet at this point (only earlier "
       "steps' results can be used)\n"
       "    holders_of = [\"/dev/x\", \"{{ steps.a.stauts }}\", \"{{ steps.c.rc }}\", \"{{ "
       "steps.zz.rc }}\"]\n"
       "                                                     ^\n"
       "pb.toml:13:70: error: unknown step `zz` in `steps.zz.rc` (did you mean `a`?)\n"
       "    holders_of = [\"/dev/x\", \"{{ steps.a.stauts }}\", \"{{ steps.c.rc }}\", \"{{ "
       "steps.zz.rc }}\"]\n"
       "                                                                         ^\n"
       "pb.toml:17:17: error: unknown built-in `host.nmae` (did you mean `host.name`?)\n"
       "    command = \"echo {{ host.nmae }} {{ steps.b }}\"\n"
       "                    ^\n"
       "pb.toml:17:33: error: `steps.b` needs a field: status, rung, rc, stdout, stderr, ms, "
       "holders, holders_left, gpus or gpus_after\n"
       "    command = \"echo {{ host.nmae }} {{ steps.b }}\"\n"
       "                                    ^\n");
}

TEST_CASE("inventory vars count as defined", "[playbook]") {
  std::string pb = R"(name = "t"
[[step]]
id = "a"
kind = "run"
command = "echo {{ gpus }} {{ site }}"
)";
  CHECK(ref_errors(pb) ==
        "pb.toml:5:17: error: undefined variable `gpus`\n"
        "    command = \"echo {{ gpus }} {{ site }}\"\n"
        "                    ^\n"
        "pb.toml:5:28: error: undefined variable `site`\n"
        "    command = \"echo {{ gpus }} {{ site }}\"\n"
        "                               ^\n");
  std::vector<LoadError> errors;
  auto inv =
      load_inventory(std::string(RATCHET_SOURCE_DIR) + "/tests/playbook/data/lab.toml", &errors);
  REQUIRE(inv);
  CHECK(ref_errors(pb, &*inv) == "");
}

TEST_CASE("template files are read and checked at their own positions", "[playbook]") {
  write("notes.tmpl", "Host {{ host.name }}\nsecret {{ token }} ok\n  unit {{ unitt }}\n");
  CHECK(ref_errors(R"(name = "t"
[vars]
unit = "x"
[secrets]
token = "file:/etc/token"
[[step]]
id = "w"
kind = "write"
path = "/etc/notes"
template = "notes.tmpl"
)") == "notes.tmpl:3:8: error: undefined variable `unitt` (did you mean `unit`?)\n"
       "      unit {{ unitt }}\n"
       "           ^\n");
}

TEST_CASE("local files are read once at load: a missing one or a templated path is a load error", "[playbook]") {
  write("pb.toml", R"(name = "t"
[vars]
unit = "x"
[[step]]
id = "w2"
kind = "write"
path = "/etc/notes2"
template = "missing.tmpl"
[[step]]
id = "u"
kind = "service"
unit = "x.service"
state = "started"
unit_file = "units/{{ unit }}.service"
)");
  std::vector<LoadError> errors;
  CHECK_FALSE(load_playbook(scratch() + "/pb.toml", {}, &errors));
  std::string out;
  for (const auto& e : errors) out += format_error(e);
  for (size_t at; (at = out.find(scratch() + "/")) != std::string::npos;) out.replace(at, scratch().size() + 1, "");
  CHECK(out == "pb.toml:8:12: error: cannot read template `missing.tmpl`: No such file or directory\n"
               "    template = \"missing.tmpl\"\n"
               "               ^\n"
               "pb.toml:14:13: error: `unit_file` must be a literal path: the unit file is read once, when the "
               "playbook loads (a unit file is sent as it is written: for per-host text, write it with a `write` step's template)\n"
               "    unit_file = \"units/{{ unit }}.service\"\n"
               "                ^\n");
  // A file read at load: its bytes and sha256 are in the model.
  write("n.tmpl", "hello\n");
  write("pb.toml", "name = \"t\"\n[[step]]\nid = \"w\"\nkind = \"write\"\npath = \"/x\"\ntemplate = \"n.tmpl\"\n");
  errors.clear();
  auto pb = load_playbook(scratch() + "/pb.toml", {}, &errors);
  REQUIRE(pb);
  REQUIRE(pb->files.count("n.tmpl") == 1);
  CHECK(pb->files.at("n.tmpl").bytes == "hello\n");
  CHECK(pb->files.at("n.tmpl").sha256 == "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
}

TEST_CASE("positions inside multi-line strings are exact", "[playbook]") {
  CHECK(ref_errors(R"(name = "t"
[[step]]
id = "w"
kind = "write"
path = "/etc/motd"
content = """
Welcome to {{ host.name }}.
  Unit: {{ unit }} ({{ unit }})
"""
)") == "pb.toml:8:9: error: undefined variable `unit`\n"
       "      Unit: {{ unit }} ({{ unit }})\n"
       "            ^\n"
       "pb.toml:8:21: error: undefined variable `unit`\n"
       "      Unit: {{ unit }} ({{ unit }})\n"
       "                        ^\n");
}

namespace {

// Loads pb.toml (which must load) with `opt` and returns check_extra_vars' errors, formatted.
std::string extra_errors(const std::string& text, LoadOptions opt, const Inventory* inv = nullptr) {
  write("pb.toml", text);
  std::vector<LoadError> errors;
  auto pb = load_playbook(scratch() + "/pb.toml", opt, &errors);
  for (const auto& e : errors) FAIL_CHECK(format_error(e));
  REQUIRE(pb);
  check_extra_vars(*pb, inv, opt, &errors);
  std::string out;
  for (const auto& e : errors) out += format_error(e);
  return out;
}

}  // namespace

TEST_CASE("an -e name nothing defines or uses is an error with a did-you-mean", "[playbook]") {
  const std::string pb =
      "name = \"t\"\n[vars]\ndevices = [\"/dev/nvidia*\"]\n[[step]]\nid = \"a\"\nkind = \"kill\"\n"
      "holders_of = \"{{ devices }}\"\n[[step]]\nid = \"b\"\nkind = \"run\"\ncommand = \"echo {{ unit }}\"\n"
      "when = \"reboot\"\n";
  LoadOptions opt;
  opt.extra_vars = {{"devcies", "/dev/sda"}};  // used to leave /dev/nvidia* the target, silently
  CHECK(extra_errors(pb, opt) ==
        "-e: error: `devcies` is not a var of the playbook or its hosts, nor used by a template: -e devcies=... "
        "would change nothing (did you mean `devices`?)\n");
  opt.extra_vars = {{"zzzzzz", "1"}};
  CHECK(extra_errors(pb, opt) ==
        "-e: error: `zzzzzz` is not a var of the playbook or its hosts, nor used by a template: -e zzzzzz=... "
        "would change nothing (-e sets a var that the playbook's templates use)\n");
  // Defined (a var), used (a template, `when`), a host var, or a --secret: fine.
  opt.extra_vars = {{"devices", "[\"/dev/x\"]"}, {"unit", "u"}, {"reboot", "true"}};
  CHECK(extra_errors(pb, opt).empty());
  Inventory inv;
  inv.hosts["h"].vars = Value({{"rack", "a"}});
  opt.extra_vars = {{"rack", "b"}};
  CHECK(extra_errors(pb, opt, &inv).empty());
  CHECK_FALSE(extra_errors(pb, opt).empty());  // without that inventory nothing has `rack`
}

TEST_CASE("without an inventory, names only a host could define are noted, not errors", "[playbook]") {
  write("pb.toml", "name = \"t\"\n[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = \"echo {{ unit }} {{ host.nme }}\"\n"
                   "when = \"gpus\"\n");
  std::vector<LoadError> errors;
  auto pb = load_playbook(scratch() + "/pb.toml", {}, &errors);
  REQUIRE(pb);
  std::vector<std::string> unchecked;
  check_references(*pb, nullptr, &errors, &unchecked);
  CHECK(unchecked == std::vector<std::string>{"gpus", "unit"});
  REQUIRE(errors.size() == 1);  // a misspelt built-in is an error with or without hosts
  CHECK(errors[0].message == "unknown built-in `host.nme`");
}
