// The ratchet binary's usage errors and command-line checks, no host needed:
// one style ("ratchet: error: ..." and one hint line, exit 2), bare `ratchet`,
// validate without an inventory, -e and --limit checked before anything connects,
// and every error of a playbook in one pass.
#include <catch2/catch.hpp>

#include <fstream>

#include "support/local_proc.h"

using namespace ratchet::testing;

namespace {

struct Dir {
  std::string path = temp_dir("ratchet-usage");
  std::string file(const std::string& name, const std::string& text) {
    std::ofstream(path + "/" + name) << text;
    return name;
  }
  ShellResult ratchet(const std::string& args) {
    return run_sh("cd '" + path + "' && " + RATCHET_BINARY + " " + args);
  }
};

const char* kPlaybook =
    "name = \"gpu\"\ntargets = [\"gpu\"]\n[vars]\ndevices = [\"/dev/nvidia*\"]\n[[step]]\nid = \"free\"\n"
    "kind = \"kill\"\nholders_of = \"{{ devices }}\"\n[[step]]\nid = \"up\"\nkind = \"service\"\n"
    "unit = \"{{ unit }}\"\nstate = \"started\"\n";
const char* kInventory =
    "[hosts.gpu01]\naddress = \"192.0.2.1\"\n[hosts.dead]\naddress = \"192.0.2.2\"\n[groups]\ngpu = [\"gpu01\"]\n"
    "[group_vars.gpu]\nunit = \"inference\"\n";

}  // namespace

TEST_CASE("usage errors: one style, one hint line, exit 2, and bare ratchet prints a short usage", "[cli]") {
  Dir d;
  auto r = d.ratchet("");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "usage: ratchet COMMAND [ARGS]...\n"
        "  run       run a playbook against its hosts\n"
        "  plan      dry run: print every command; connects to nothing\n"
        "  apply     run a saved plan (ratchet plan --out) exactly, or refuse\n"
        "  validate  load and validate a playbook; connects to nothing\n"
        "  hosts     list the hosts a selection resolves to; connects to nothing\n"
        "  show      render a transcript for a person\n"
      "  report    write a transcript's run as one self-contained HTML file\n"
        "  exec      run one ad hoc command on hosts\n"
        "  schema    print the JSON Schema of playbooks, included pieces or inventories (docs/editors.md)\n"
        "see 'ratchet --help', or 'ratchet COMMAND --help' for one command\n");
  struct Case {
    const char* args;
    const char* err;
  };
  for (const Case& c : {
           Case{"run", "ratchet: error: playbook is required\nsee 'ratchet run --help'\n"},
           Case{"run p.toml --forks 0",
                "ratchet: error: --forks 0: must be a whole number from 1 to 1000\nsee 'ratchet run --help'\n"},
           Case{"run p.toml --forks 4294967297",
                "ratchet: error: --forks 4294967297: must be a whole number from 1 to 1000\n"
                "see 'ratchet run --help'\n"},
           Case{"plan p.toml --bogus",
                "ratchet: error: the following argument was not expected: --bogus\nsee 'ratchet plan --help'\n"},
           Case{"rnu p.toml", "ratchet: error: unknown command `rnu` (did you mean `run`?)\nsee 'ratchet --help'\n"},
           Case{"run p.toml --connect-timeout 0s",
                "ratchet: error: --connect-timeout: 0s: must be more than 0 (e.g. 10s, 1m)\n"
                "see 'ratchet run --help'\n"},
           Case{"plan p.toml -e novalue", "ratchet: error: -e novalue: write -e key=value\nsee 'ratchet plan --help'\n"},
       }) {
    INFO(c.args);
    r = d.ratchet(c.args);
    CHECK(r.code == 2);
    CHECK(r.err == c.err);  // never the whole help, never CLI11's "ValidationError"
    CHECK(r.out.empty());
  }
  CHECK(d.ratchet("run --help").code == 0);
}

TEST_CASE("validate works without an inventory and says what it could not check", "[cli]") {
  Dir d;
  d.file("p.toml", kPlaybook);
  auto r = d.ratchet("validate p.toml");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out ==
        "p.toml: ok: playbook `gpu`, 2 steps, no inventory\n"
        "p.toml: checked without hosts: every key the playbook's own vars and -e decide, rendered and read by its "
        "rule\n"
        "p.toml: not checked without hosts: the targets, vars no playbook var defines (`unit`), keys that use "
        "host.*, and host or group vars that would replace the playbook's (give -i INVENTORY to check them)\n");
  // plan and run still need hosts.
  r = d.ratchet("plan p.toml");
  CHECK(r.code == 2);
  CHECK(r.err ==
        "ratchet: error: p.toml: no inventory: give -i INVENTORY, an [inventory] table in the playbook, or "
        "--target user@host:port\nsee 'ratchet plan --help'\n");
}

TEST_CASE("an -e name nothing uses and a --limit that selects no target are usage errors before connecting", "[cli]") {
  Dir d;
  d.file("p.toml", kPlaybook);
  d.file("inv.toml", kInventory);
  auto r = d.ratchet("plan p.toml -i inv.toml -e devcies=/dev/sda");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "-e: error: `devcies` is not a var of the playbook or its hosts, nor used by a template: -e devcies=... "
        "would change nothing (did you mean `devices`?)\n\n");
  CHECK(d.ratchet("plan p.toml -i inv.toml -e devices=/dev/sda -e unit=x").code == 0);
  r = d.ratchet("plan p.toml -i inv.toml --limit dead");
  CHECK(r.code == 2);
  CHECK(r.err ==
        "ratchet: error: --limit `dead` selects no target: dead is in the inventory but not among the targets "
        "(gpu)\nsee 'ratchet plan --help'\n");
}

TEST_CASE("validate reports every error in one pass: playbook, references, -e, inventory", "[cli]") {
  Dir d;
  d.file("p.toml", "name = \"gpu\"\n[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = \"echo {{ host.nme }} {{ nosuch }}\"\n"
                   "retries = -1\n");
  d.file("bad.toml", "[hosts.h]\nport = 0\n");
  d.file("inv.toml", "[hosts.h]\naddress = \"192.0.2.1\"\n");
  // Was: the schema error alone; the reference and the inventory waited for the next run.
  auto r = d.ratchet("validate p.toml -i bad.toml");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "p.toml:5:17: error: unknown built-in `host.nme` (did you mean `host.name`?)\n"
        "    command = \"echo {{ host.nme }} {{ nosuch }}\"\n"
        "                    ^\n\n"
        "p.toml:6:11: error: `retries` -1 is outside 0..1000000\n"
        "    retries = -1\n"
        "              ^\n\n"
        "bad.toml:2:8: error: `port` 0 is outside 1..65535\n"
        "    port = 0\n"
        "           ^\n\n"
        "ratchet: 3 errors; nothing was run\n");
  r = d.ratchet("validate p.toml -i inv.toml -e typo=1");
  CHECK(r.code == 2);
  CHECK(r.err ==
        "p.toml:5:17: error: unknown built-in `host.nme` (did you mean `host.name`?)\n"
        "    command = \"echo {{ host.nme }} {{ nosuch }}\"\n"
        "                    ^\n\n"
        "p.toml:5:32: error: undefined variable `nosuch`\n"
        "    command = \"echo {{ host.nme }} {{ nosuch }}\"\n"
        "                                   ^\n\n"
        "p.toml:6:11: error: `retries` -1 is outside 0..1000000\n"
        "    retries = -1\n"
        "              ^\n\n"
        "-e: error: `typo` is not a var of the playbook or its hosts, nor used by a template: -e typo=... would "
        "change nothing (-e sets a var that the playbook's templates use)\n\n"
        "ratchet: 4 errors; nothing was run\n");
}

TEST_CASE("validate without an inventory reads every key the playbook's own vars decide, as -i does", "[cli][validate]") {
  Dir d;
  d.file("p.toml",
         "name = \"gpu\"\ntargets = [\"gpu\"]\n[vars]\npid_file = \"run/inference.pid\"\ndevices = [\"var/lab-gpu/nvidia*\"]\n"
         "[[step]]\nid = \"stop\"\nkind = \"kill\"\npid_file = \"{{ pid_file }}\"\n"
         "[[step]]\nid = \"free\"\nkind = \"verify\"\nno_holders = \"/dev/x\"\n"
         "  [[step.escalate]]\n  kind = \"kill\"\n  holders_of = \"{{ devices }}\"\n"
         "[[step]]\nid = \"up\"\nkind = \"service\"\nunit = \"{{ unit }}\"\nstate = \"started\"\n");
  d.file("inv.toml", kInventory);
  const std::string pid_file =
      "p.toml:9:12: step `stop`: `pid_file` must be absolute, got \"run/inference.pid\" (rendered from "
      "\"{{ pid_file }}\"); write the full path from /, such as \"/run/inference.pid\": a relative path is expanded "
      "from the login's working directory on the host";
  const std::string devices =
      "p.toml:16:16: rung 1 of step `free`: `holders_of` must hold absolute paths, got \"var/lab-gpu/nvidia*\" "
      "(rendered from \"{{ devices }}\"); write the full path from /, such as \"/var/lab-gpu/nvidia*\": a relative "
      "path is expanded from the login's working directory on the host";
  auto r = d.ratchet("validate p.toml");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "ratchet: error: " + pid_file + " (the playbook's own vars, no inventory)\n" +
                     "ratchet: error: " + devices + " (the playbook's own vars, no inventory)\n" +
                     "ratchet: note: `devices`, `pid_file` from the playbook's vars; an inventory's host or group var "
                     "of that name would replace it: fix the playbook's value, which is what runs without one\n"
                     "ratchet: 2 errors; nothing was run\n");
  // With the inventory, the same words, per host.
  r = d.ratchet("validate p.toml -i inv.toml");
  CHECK(r.code == 2);
  CHECK(r.err.find("ratchet: error: " + pid_file + " (host gpu01)\n") != std::string::npos);
  // A value -e gave is refused the same way, and no inventory could replace it: no note.
  r = d.ratchet("validate p.toml -e pid_file=/run/inference.pid -e 'devices=[\"var/x/nvidia*\"]'");
  CHECK(r.code == 2);
  CHECK(r.err.find("rung 1 of step `free`: `holders_of` must hold absolute paths, got \"var/x/nvidia*\"") !=
        std::string::npos);
  CHECK(r.err.find("ratchet: note:") == std::string::npos);
  // -e decides too; a key that uses host.* or a var only an inventory sets is left to -i.
  r = d.ratchet("validate p.toml -e pid_file=/run/inference.pid -e 'devices=[\"/dev/nvidia*\"]'");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("p.toml: checked without hosts: every key the playbook's own vars and -e decide") != std::string::npos);
}

TEST_CASE("extra vars (-e): a value that starts like TOML and does not parse is an error and text stays text", "[cli]") {
  Dir d;
  d.file("p.toml", kPlaybook);
  d.file("inv.toml", kInventory);
  auto r = d.ratchet("plan p.toml -i inv.toml -e 'devices=[/var/lab-gpu/nvidia*]'");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "-e: error: `devices=[/var/lab-gpu/nvidia*]`: the value starts like TOML (`[`) but is not TOML at column 2 of "
        "it: Error while parsing value: could not determine value type (write valid TOML, each string quoted "
        "(-e 'devices=[\"/dev/nvidia0\"]'), or quote the whole value to pass it as text (-e 'devices=\"...\"'))\n\n");
  // Valid TOML reaches the plan; a relative glob in it is refused there, naming host and step.
  r = d.ratchet("plan p.toml -i inv.toml -e 'devices=[\"var/x/nvidia*\"]'");
  CHECK(r.code == 2);
  CHECK(r.err ==
        "ratchet: error: p.toml:8:14: step `free`: `holders_of` must hold absolute paths, got \"var/x/nvidia*\" "
        "(rendered from \"{{ devices }}\"); write the full path from /, such as \"/var/x/nvidia*\": a relative path "
        "is expanded from the login's working directory on the host (host gpu01)\n");
  r = d.ratchet("plan p.toml -i inv.toml -e 'devices=/dev/nvidia*'");  // text: one path
  INFO(r.err);
  CHECK(r.code == 0);
}
