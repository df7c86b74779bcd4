#include "playbook/loader.h"
#include "support/scratch_dir.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <set>

#include "playbook/schema.h"
#include "util/hash.h"

using namespace ratchet::playbook;
using ratchet::util::Millis;

namespace {

std::string data(const std::string& name) {
  return std::string(RATCHET_SOURCE_DIR) + "/tests/playbook/data/" + name;
}

const std::string& scratch() {
  static const ratchet::testing::ScratchDir dir("ratchet-loader");
  return dir.path;
}

std::string write(const std::string& name, const std::string& text) {
  std::string path = scratch() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

void replace_all(std::string* s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s->find(from, at)) != std::string::npos; at += to.size())
    s->replace(at, from.size(), to);
}

// Loads `text` as pb.toml; returns every error, formatted, with the scratch dir cut.
std::string errors_of(const std::string& text, const LoadOptions& opt = {}) {
  std::string path = write("pb.toml", text);
  std::vector<LoadError> errors;
  auto pb = load_playbook(path, opt, &errors);
  std::string out;
  for (const auto& e : errors) out += format_error(e);
  if (pb) {
    CHECK(errors.empty());
    return "(loaded)";
  }
  replace_all(&out, scratch() + "/", "");
  return out;
}

Playbook load_ok(const std::string& text, const LoadOptions& opt = {}) {
  std::vector<LoadError> errors;
  auto pb = load_playbook(write("ok.toml", text), opt, &errors);
  for (const auto& e : errors) FAIL_CHECK(format_error(e));
  REQUIRE(pb);
  return *pb;
}

const char* kHead = "name = \"t\"\n";

}  // namespace

TEST_CASE("the design's example playbook loads with its values", "[playbook]") {
  std::vector<LoadError> errors;
  auto pb = load_playbook(data("gpu-release.toml"), {}, &errors);
  REQUIRE(errors.empty());
  REQUIRE(pb);
  CHECK(pb->name == "gpu-release");
  CHECK(pb->description == "Free the GPUs and hand them to a systemd unit");
  CHECK(pb->targets == std::vector<std::string>{"lab"});
  CHECK(pb->dir == data("").substr(0, data("").size() - 1));
  std::ifstream f(data("gpu-release.toml"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), {});
  CHECK(pb->source == bytes);
  CHECK(pb->sha256 == ratchet::util::sha256_hex(bytes));
  CHECK(pb->vars["devices"] == Value::array({"/dev/nvidia*"}));
  CHECK(pb->vars["unit"] == "inference");
  CHECK(pb->var_pos["unit"].str() == data("gpu-release.toml") + ":6:8");

  REQUIRE(pb->steps.size() == 5);
  std::vector<std::string> ids;
  for (const auto& s : pb->steps) ids.push_back(s.id);
  CHECK(ids == std::vector<std::string>{"stop", "kill_the_server_started_by_hand", "gpus_free",
                                        "write_production_notes", "enable_and_start_the_unit"});
  const Step& stop = pb->steps[0];
  CHECK(stop.kind == Kind::service);
  CHECK(stop.name == "Stop the service");
  CHECK(stop.timeout == Millis(60'000));
  CHECK(stop.settle == Millis(1'000));
  const auto& svc = std::get<ServiceAction>(stop.body.keys);
  CHECK(svc.unit.written == Value("{{ unit }}"));  // a template: each host renders it
  CHECK_FALSE(svc.unit.value);
  CHECK(svc.state.value == ServiceState::stopped);
  CHECK(svc.unit.pos.str() == data("gpu-release.toml") + ":20:8");
  CHECK_FALSE(svc.enabled.given);
  CHECK(stop.where.str() == data("gpu-release.toml") + ":16:1");
  CHECK(stop.body.pos.at("unit").str() == data("gpu-release.toml") + ":20:8");

  const Step& kill = pb->steps[1];
  const auto& k = std::get<KillAction>(kill.body.keys);
  CHECK(k.wait.value == Millis(10'000));
  CHECK(k.tree.value == true);
  CHECK(std::string((*k.signal).name) == "TERM");
  CHECK(kill.on_failure == OnFailure::stop);

  const Step& gpus = pb->steps[2];
  CHECK(gpus.settle == Millis(3'000));  // the step beats [defaults]
  CHECK(gpus.timeout == Millis(60'000));
  CHECK(std::get<VerifyAction>(gpus.body.keys).no_holders.written == Value("{{ devices }}"));
  REQUIRE(gpus.escalate.size() == 2);
  CHECK(gpus.escalate[0].kind == Kind::kill);
  const auto& r0 = std::get<KillAction>(gpus.escalate[0].keys);
  CHECK(r0.holders_of.written == Value("{{ devices }}"));
  CHECK(r0.exclude.written == Value("{{ keep }}"));
  CHECK(std::string((*r0.signal).name) == "TERM");
  CHECK(r0.wait.value == Millis(5'000));
  CHECK_FALSE(r0.pid.given);
  CHECK(std::string((*std::get<KillAction>(gpus.escalate[1].keys).signal).name) == "KILL");
  CHECK(gpus.escalate[1].where.str() == data("gpu-release.toml") + ":46:3");
  CHECK_FALSE(gpus.escalate[1].timeout.has_value());

  CHECK(std::get<WriteAction>(pb->steps[3].body.keys).template_file.value == "notes.md.tmpl");
  CHECK((*std::get<WriteAction>(pb->steps[3].body.keys).mode).octal == "0644");
  CHECK(std::get<ServiceAction>(pb->steps[4].body.keys).enabled.value == true);

  std::vector<LoadError> ref_errors;
  check_references(*pb, nullptr, &ref_errors);
  for (const auto& e : ref_errors) FAIL_CHECK(format_error(e));
}

TEST_CASE("defaults apply to every step that does not set the key", "[playbook]") {
  Playbook pb = load_ok(std::string(kHead) + R"(
[defaults]
timeout = "2m"
settle = "250ms"
retries = 3
delay = "2s"
capture = 4096
become = true
become_user = "svc"

[[step]]
name = "a"
kind = "run"
command = "true"

[[step]]
name = "b"
kind = "run"
command = "true"
timeout = "5s"
retries = 0
become = false
capture = 10
on_failure = "continue"
register = "bee"
when = "not skip_b"

  [[step.escalate]]
  kind = "run"
  command = "false"
  timeout = "1s"
  retries = 2
)");
  REQUIRE(pb.steps.size() == 2);
  const Step& a = pb.steps[0];
  CHECK(a.timeout == Millis(120'000));
  CHECK(a.settle == Millis(250));
  CHECK(a.retries == 3);
  CHECK(a.delay == Millis(2'000));
  CHECK(a.capture == 4096);
  CHECK(a.become == true);
  CHECK(a.become_user == "svc");
  CHECK_FALSE(std::get<RunAction>(a.body.keys).expect_exit.given);  // the builder's default: [0]
  const Step& b = pb.steps[1];
  CHECK(b.timeout == Millis(5'000));
  CHECK(b.settle == Millis(250));
  CHECK(b.retries == 0);
  CHECK(b.become == false);  // set, so it wins over a host's become = true (model_test.cc)
  CHECK(b.capture == 10);
  CHECK(b.on_failure == OnFailure::cont);
  CHECK(b.register_as == "bee");
  CHECK(b.when == "not skip_b");
  REQUIRE(b.escalate.size() == 1);
  CHECK(b.escalate[0].timeout == Millis(1'000));
  CHECK(b.escalate[0].retries == 2);
  CHECK(std::get<RunAction>(b.escalate[0].keys).command.value == "false");
}

TEST_CASE("a TOML syntax error names file, line and column", "[playbook]") {
  CHECK(errors_of("name = \"t\"\n[[step]\nkind = \"run\"\n") ==
        "pb.toml:2:8: error: Error while parsing table header: expected ']', saw '\\n'\n"
        "    [[step]\n"
        "           ^\n");
}

TEST_CASE("an unreadable playbook is an error naming the path", "[playbook]") {
  std::vector<LoadError> errors;
  CHECK_FALSE(load_playbook(scratch() + "/missing.toml", {}, &errors));
  REQUIRE(errors.size() == 1);
  CHECK(format_error(errors[0]) ==
        scratch() + "/missing.toml: error: cannot read the playbook: No such file or directory\n");
}

TEST_CASE("unknown keys point at the key and suggest the spelling", "[playbook]") {
  CHECK(errors_of(std::string(kHead) + R"([[step]]
name = "Kill the server"
kind = "kill"
    pidfile = "/run/x.pid"
)") == "pb.toml:2:1: error: step `kill_the_server`: kill needs one selector: `pid`, `pid_file`, "
       "`pattern` or `holders_of`\n"
       "    [[step]]\n"
       "    ^\n"
       "pb.toml:5:5: error: unknown key `pidfile` in step `kill_the_server` (did you mean "
       "`pid_file`?)\n"
       "        pidfile = \"/run/x.pid\"\n"
       "        ^\n");
  CHECK(errors_of("nmae = \"t\"\n[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = \"x\"\n") ==
        "pb.toml:1:1: error: unknown top-level key `nmae` (did you mean `name`?)\n"
        "    nmae = \"t\"\n"
        "    ^\n"
        "pb.toml:1:1: error: playbook has no `name` (add name = \"...\" at the top)\n"
        "    nmae = \"t\"\n"
        "    ^\n");
  CHECK(errors_of(std::string(kHead) + "[defaults]\ntimout = \"1s\"\n[[step]]\nid = \"a\"\n"
                                       "kind = \"run\"\ncommand = \"x\"\n") ==
        "pb.toml:3:1: error: unknown key `timout` in [defaults] (did you mean `timeout`?)\n"
        "    timout = \"1s\"\n"
        "    ^\n");
  // A key of another kind says where it belongs.
  CHECK(errors_of(std::string(kHead) + "[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = \"x\"\n"
                                       "unit_file = \"u\"\n") ==
        "pb.toml:6:1: error: unknown key `unit_file` in step `a` (`unit_file` belongs to "
        "`service` steps)\n"
        "    unit_file = \"u\"\n"
        "    ^\n");
}

TEST_CASE("wrong types and durations without a unit are errors at the value", "[playbook]") {
  CHECK(errors_of(std::string(kHead) + R"([defaults]
timeout = "10"
[[step]]
id = "a"
kind = "run"
command = "true"
retries = "3"
settle = 5
tree = true
)") == "pb.toml:3:11: error: `timeout`: \"10\" has no unit (write \"10s\" or \"10ms\")\n"
       "    timeout = \"10\"\n"
       "              ^\n"
       "pb.toml:8:11: error: `retries` must be an integer, not a string\n"
       "    retries = \"3\"\n"
       "              ^\n"
       "pb.toml:9:10: error: `settle` must be a duration such as \"10s\", not an integer\n"
       "    settle = 5\n"
       "             ^\n"
       "pb.toml:10:1: error: unknown key `tree` in step `a` (`tree` belongs to `kill` steps)\n"
       "    tree = true\n"
       "    ^\n");
}

TEST_CASE("steps and rungs need a known kind", "[playbook]") {
  CHECK(errors_of(std::string(kHead) + R"([[step]]
id = "a"
command = "true"
[[step]]
id = "b"
kind = "kil"
pid = 42
[[step]]
id = "c"
kind = "verify"
port_free = 8080
  [[step.escalate]]
  signal = "KILL"
  [[step.escalate]]
  kind = "verify"
  port_free = 80
)") == "pb.toml:2:1: error: step `a` has no `kind` (add kind = \"run\", \"service\", \"kill\", "
       "\"verify\", \"write\", \"copy\", \"fetch\" or \"reboot\")\n"
       "    [[step]]\n"
       "    ^\n"
       "pb.toml:7:8: error: unknown kind `kil` (did you mean `kill`?)\n"
       "    kind = \"kil\"\n"
       "           ^\n"
       "pb.toml:13:3: error: rung 1 of step `c` has no `kind` (add kind = \"run\", \"service\" or "
       "\"kill\")\n"
       "      [[step.escalate]]\n"
       "      ^\n"
       "pb.toml:16:10: error: a rung must be of kind run, service or kill, not `verify`\n"
       "      kind = \"verify\"\n"
       "             ^\n");
}

TEST_CASE("step ids: derived from names, checked, unique", "[playbook]") {
  CHECK(errors_of(std::string(kHead) + R"([[step]]
name = "Restart it!"
kind = "run"
command = "true"
[[step]]
id = "restart_it"
kind = "run"
command = "true"
[[step]]
id = "Bad-Id"
kind = "run"
command = "true"
[[step]]
name = "?!"
kind = "run"
command = "true"
)") == "pb.toml:7:6: error: duplicate step id `restart_it` (first at pb.toml:3:8)\n"
       "    id = \"restart_it\"\n"
       "         ^\n"
       "pb.toml:11:6: error: step id `Bad-Id` must match [a-z0-9_]+ (try `bad_id`)\n"
       "    id = \"Bad-Id\"\n"
       "         ^\n"
       "pb.toml:15:8: error: cannot make a step id from the name `?!` (set `id`: letters, "
       "digits and _)\n"
       "    name = \"?!\"\n"
       "           ^\n");
}

TEST_CASE("when, on_failure and register values are checked", "[playbook]") {
  CHECK(errors_of(std::string(kHead) + R"([[step]]
id = "a"
kind = "run"
command = "true"
when = "x == 1"
on_failure = "contine"
register = "Out"
)") == "pb.toml:6:8: error: `when` must name a boolean variable or be `not NAME`, not `x == 1`\n"
       "    when = \"x == 1\"\n"
       "           ^\n"
       "pb.toml:7:14: error: `on_failure` must be `stop` or `continue`, not `contine` (did you "
       "mean `continue`?)\n"
       "    on_failure = \"contine\"\n"
       "                 ^\n"
       "pb.toml:8:12: error: `register` name `Out` must match [a-z0-9_]+\n"
       "    register = \"Out\"\n"
       "               ^\n");
}

TEST_CASE("secrets take a source, never a value", "[playbook]") {
  CHECK(errors_of(std::string(kHead) + R"([secrets]
token = "env:API_TOKEN"
key = "file:/etc/key"
password = "hunter2"
[[step]]
id = "a"
kind = "run"
command = "login"
stdin = "{{ token }}"
)") == "pb.toml:5:12: error: secrets take a source, not a value (write \"env:NAME\" or "
       "\"file:PATH\")\n"
       "    password = \"hunter2\"\n"
       "               ^\n");
  Playbook pb = load_ok(std::string(kHead) +
                        "[secrets]\ntoken = \"env:API_TOKEN\"\n[[step]]\n"
                        "id = \"a\"\nkind = \"run\"\ncommand = \"x\"\n");
  CHECK(pb.secrets == std::map<std::string, std::string>{{"token", "env:API_TOKEN"}});
}

TEST_CASE("commands: no template inside quotes, no secret", "[playbook]") {
  CHECK(errors_of(std::string(kHead) + R"([secrets]
token = "env:T"
[[step]]
id = "a"
kind = "run"
command = "echo '{{ who }}' && curl -H {{ token }}"
check = "test -e \"/x/{{ who }}\""
unless = "echo {{ who }} 'it''s'"
)") == "pb.toml:7:18: error: `{{ who }}` inside quotes at col 7: values are quoted for you; "
       "remove the quotes\n"
       "    command = \"echo '{{ who }}' && curl -H {{ token }}\"\n"
       "                     ^\n"
       "pb.toml:7:40: error: secret `token` used in `command` (secrets go on stdin or into file "
       "content only)\n"
       "    command = \"echo '{{ who }}' && curl -H {{ token }}\"\n"
       "                                           ^\n"
       "pb.toml:8:23: error: `{{ who }}` inside quotes at col 13: values are quoted for you; "
       "remove the quotes\n"
       "    check = \"test -e \\\"/x/{{ who }}\\\"\"\n"
       "                          ^\n");
}

TEST_CASE("kind rules: selectors, signals, conditions, states, writes", "[playbook]") {
  CHECK(errors_of(std::string(kHead) + R"([[step]]
id = "k"
kind = "kill"
pid = 1
pattern = "serve"
signal = "TREM"
[[step]]
id = "v"
kind = "verify"
stdout_matches = "ok"
exclude = ["sshd"]
[[step]]
id = "s"
kind = "service"
unit = "x"
state = "stoped"
[[step]]
id = "w"
kind = "write"
path = "/etc/x"
content = "a"
template = "b.tmpl"
mode = "0968"
)") == "pb.toml:5:7: error: `pid` 1 is init: ratchet never signals it\n"
       "    pid = 1\n"
       "          ^\n"
       "pb.toml:6:11: error: kill takes one selector, got `pid` and `pattern`\n"
       "    pattern = \"serve\"\n"
       "              ^\n"
       "pb.toml:7:10: error: unknown signal `TREM` (did you mean `TERM`?)\n"
       "    signal = \"TREM\"\n"
       "             ^\n"
       "pb.toml:8:1: error: step `v`: verify needs a condition: `no_holders`, `gpus_idle`, `absent`, "
       "`port_free`, `port_open`, `service_active`, `file_exists` or `command`\n"
       "    [[step]]\n"
       "    ^\n"
       "pb.toml:11:18: error: `stdout_matches` needs `command` (whose stdout it matches)\n"
       "    stdout_matches = \"ok\"\n"
       "                     ^\n"
       "pb.toml:12:11: error: `exclude` goes with `no_holders` or `gpus_idle`, which this step lacks\n"
       "    exclude = [\"sshd\"]\n"
       "              ^\n"
       "pb.toml:17:9: error: `state` must be `started`, `stopped`, `restarted` or `reloaded`, not "
       "`stoped` (did you mean `stopped`?)\n"
       "    state = \"stoped\"\n"
       "            ^\n"
       "pb.toml:23:12: error: write takes `content` or `template`, not both\n"
       "    template = \"b.tmpl\"\n"
       "               ^\n"
       "pb.toml:24:8: error: `mode` must be 1 to 4 octal digits such as \"0644\", not \"0968\"\n"
       "    mode = \"0968\"\n"
       "           ^\n");
}

TEST_CASE("signals normalise, templated values pass the type check", "[playbook]") {
  Playbook pb = load_ok(std::string(kHead) + R"([vars]
pid = 4242
x = true
[[step]]
id = "k"
kind = "kill"
pid = "{{ pid }}"
signal = "SIGhup"
[[step]]
id = "s"
kind = "service"
unit = "u"
enabled = "{{ x }}"
[[step]]
id = "r"
kind = "run"
command = "exit 3"
expect_exit = 3
)");
  CHECK(std::string((*std::get<KillAction>(pb.steps[0].body.keys).signal).name) == "HUP");
  CHECK(std::get<KillAction>(pb.steps[0].body.keys).pid.written == Value("{{ pid }}"));
  CHECK(std::get<ServiceAction>(pb.steps[1].body.keys).enabled.written == Value("{{ x }}"));
  CHECK(std::get<RunAction>(pb.steps[2].body.keys).expect_exit.value == std::vector<int>{3});
}

TEST_CASE("extra vars (-e) are TOML values, else strings, and beat vars", "[playbook]") {
  LoadOptions opt;
  opt.extra_vars = {{"n", "42"},         {"list", "[\"a\", \"b\"]"}, {"s", "hello world"},
                    {"q", "\"quoted\""}, {"flag", "true"},           {"unit", "other"},
                    {"t", "{ a = 1 }"},  {"two", "1\ny = 2"}};
  Playbook pb = load_ok(std::string(kHead) +
                            "[vars]\nunit = \"inference\"\n[[step]]\nid = \"a\"\n"
                            "kind = \"run\"\ncommand = \"x\"\n",
                        opt);
  CHECK(pb.vars["n"] == 42);
  CHECK(pb.vars["n"].is_int());
  CHECK(pb.vars["list"] == Value::array({"a", "b"}));
  CHECK(pb.vars["s"] == "hello world");
  CHECK(pb.vars["q"] == "quoted");
  CHECK(pb.vars["flag"] == true);
  CHECK(pb.vars["unit"] == "other");
  CHECK(pb.vars["t"] == Value({{"a", 1}}));
  CHECK(pb.vars["two"] == "1\ny = 2");
  opt.extra_vars = {{"bad name", "1"}, {"steps", "2"}};
  CHECK(errors_of("name = \"t\"\n[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = \"x\"\n", opt) ==
        "-e: error: `bad name=1`: `bad name` is not a variable name (write -e name=value)\n"
        "-e: error: `steps` is a built-in name; -e sets vars only\n");
}

TEST_CASE("a playbook may carry its inventory", "[playbook]") {
  Playbook pb = load_ok(std::string(kHead) + R"(targets = "lab"
[inventory.hosts.box]
address = "192.0.2.1"
port = 2200
[inventory.groups]
lab = ["box"]
[[step]]
id = "a"
kind = "run"
command = "x"
)");
  CHECK(pb.targets == std::vector<std::string>{"lab"});
  REQUIRE(pb.inventory);
  CHECK(pb.inventory->hosts.at("box").port == 2200);
  CHECK(pb.inventory->groups.at("lab") == std::vector<std::string>{"box"});
  CHECK(errors_of(std::string(kHead) + "[inventory.hosts.box]\nadress = \"x\"\n[[step]]\n"
                                       "id = \"a\"\nkind = \"run\"\ncommand = \"x\"\n") ==
        "pb.toml:3:1: error: unknown key `adress` in host `box` (did you mean `address`?)\n"
        "    adress = \"x\"\n"
        "    ^\n");
}

TEST_CASE("format_error puts the caret under the column, tabs kept", "[playbook]") {
  LoadError e{{"f.toml", 3, 4}, "bad", "did you mean `x`?", "\tab = 1"};
  CHECK(format_error(e) == "f.toml:3:4: error: bad (did you mean `x`?)\n    \tab = 1\n    \t  ^\n");
  LoadError u{{"é.toml", 1, 8}, "m", "", "name = \"é\" x"};
  CHECK(format_error(u) == "é.toml:1:8: error: m\n    name = \"é\" x\n           ^\n");
  CHECK(format_error({{"f", 0, 0}, "gone", "", ""}) == "f: error: gone\n");
  // A value echoed from the file cannot drive the terminal (found by a trial: OSC title).
  LoadError x{{"f.toml", 7, 10}, "unknown signal `\x1b]0;PWN\x07`", "", "signal = \"\x1b]0;PWN\x07\""};
  CHECK(format_error(x) == "f.toml:7:10: error: unknown signal `?]0;PWN?`\n    signal = \"?]0;PWN?\"\n"
                           "             ^\n");
}

TEST_CASE("template syntax, secrets outside stdin/content, reserved names", "[playbook]") {
  CHECK(errors_of(std::string(kHead) + R"([vars]
steps = 1
[secrets]
key = "env:K"
[[step]]
id = "a"
kind = "run"
command = "echo ok {{ x"
[[step]]
id = "w"
kind = "write"
path = "/etc/{{ key }}"
content = "{{ key }}"
  [[step.escalate]]
  kind = "run"
  command = "true"
  when = "x"
)") == "pb.toml:3:1: error: `steps` is a built-in name, not a var (pick another name)\n"
       "    steps = 1\n"
       "    ^\n"
       "pb.toml:9:20: error: `command`: unclosed `{{`\n"
       "    command = \"echo ok {{ x\"\n"
       "                       ^\n"
       "pb.toml:13:14: error: secret `key` used in `path` (secrets go on stdin or into file "
       "content only)\n"
       "    path = \"/etc/{{ key }}\"\n"
       "                 ^\n"
       "pb.toml:18:3: error: unknown key `when` in rung 1 of step `w`\n"
       "      when = \"x\"\n"
       "      ^\n");
}

TEST_CASE("a step with neither name nor id is named by its place", "[playbook]") {
  std::vector<LoadError> errors;
  auto pb = load_playbook(write("noname.toml", "name = \"n\"\n[[step]]\nkind = \"run\"\ncommand = \"true\"\n"
                                               "[[step]]\nname = \"Second one\"\nkind = \"run\"\ncommand = \"true\"\n"),
                          {}, &errors);
  REQUIRE(pb);
  CHECK(errors.empty());
  CHECK(pb->steps[0].id == "step1");
  CHECK(pb->steps[1].id == "second_one");
}

TEST_CASE("a zero timeout is refused", "[playbook]") {
  std::vector<LoadError> errors;
  auto path = write("zero.toml", "name = \"z\"\n[[step]]\nid = \"s\"\nkind = \"run\"\ncommand = \"true\"\ntimeout = \"0s\"\n");
  CHECK_FALSE(load_playbook(path, {}, &errors));
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "`timeout` must be more than 0s");
  CHECK(errors[0].pos.line == 6);
}

TEST_CASE("loader: strategy, serial and max_fail at the top level", "[playbook]") {
  const char* kOneStep = "[[step]]\nkind = \"run\"\ncommand = \"true\"\n";
  auto pb = load_ok(std::string(kHead) + "strategy = \"free\"\nserial = \"30%\"\nmax_fail = 2\n" + kOneStep);
  CHECK(pb.policy.strategy == Strategy::free);
  CHECK(pb.policy.serial.set);
  CHECK(pb.policy.serial.percent);
  CHECK(pb.policy.serial.value == 30);
  CHECK(pb.policy.max_fail.set);
  CHECK_FALSE(pb.policy.max_fail.percent);
  CHECK(pb.policy.max_fail.value == 2);
  auto plain = load_ok(std::string(kHead) + kOneStep);
  CHECK(plain.policy.strategy == Strategy::linear);
  CHECK_FALSE(plain.policy.serial.set);
  CHECK_FALSE(plain.policy.max_fail.set);

  CHECK(errors_of(std::string(kHead) + "strategy = \"lineer\"\n" + kOneStep) ==
        "pb.toml:2:12: error: `strategy` must be \"linear\" or \"free\", not \"lineer\" (did you mean \"linear\"?)\n"
        "    strategy = \"lineer\"\n"
        "               ^\n");
  CHECK(errors_of(std::string(kHead) + "serial = 0\n" + kOneStep) ==
        "pb.toml:2:10: error: `serial` must be a number of hosts (1..1000000) or a percentage (1%..100%) such as "
        "\"30%\" (write serial = 2 or serial = \"25%\")\n"
        "    serial = 0\n"
        "             ^\n");
  CHECK(errors_of(std::string(kHead) + "max_fail = \"120%\"\n" + kOneStep).find(
            "pb.toml:2:12: error: `max_fail` must be a number of hosts (0..1000000) or a percentage (0%..100%)") == 0);
  CHECK(errors_of(std::string(kHead) + "serial = \"abc%\"\n" + kOneStep).find("pb.toml:2:10: error: `serial`") == 0);
  CHECK(errors_of(std::string(kHead) + "serail = 2\n" + kOneStep).find("did you mean `serial`?") != std::string::npos);
  // max_fail is checked between batches: without serial there is one batch, and it would stop nothing.
  CHECK(errors_of(std::string(kHead) + "max_fail = \"10%\"\n" + kOneStep) ==
        "pb.toml:2:12: error: `max_fail` is checked between batches; set `serial` (without it every host runs in one "
        "batch, and no failure stops another) (write serial = 1 beside it; one host at a "
        "time, a canary first; or serial = \"25%\"; or drop max_fail)\n"
        "    max_fail = \"10%\"\n"
        "               ^\n");
  // A serial that is itself wrong is the one error.
  CHECK(errors_of(std::string(kHead) + "serial = 0\nmax_fail = 1\n" + kOneStep).find("max_fail") == std::string::npos);
}

TEST_CASE("integer keys are range-checked at load with file:line:col, never wrapped", "[playbook]") {
  // retries = 4294967297 used to load as 1 (wrapped to an int).
  CHECK(errors_of(std::string(kHead) + "[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = \"x\"\nretries = 4294967297\n") ==
        "pb.toml:6:11: error: `retries` 4294967297 is outside 0..1000000\n"
        "    retries = 4294967297\n"
        "              ^\n");
  CHECK(errors_of(std::string(kHead) +
                  "[defaults]\ncapture = 99999999999\n[[step]]\nid = \"a\"\nkind = \"kill\"\npid = 5000000\n"
                  "  [[step.escalate]]\n  kind = \"run\"\n  command = \"x\"\n  retries = -2\n") ==
        "pb.toml:3:11: error: `capture` 99999999999 is outside 1..1073741824 bytes\n"
        "    capture = 99999999999\n"
        "              ^\n"
        "pb.toml:7:7: error: `pid` 5000000 is outside 1..4194304\n"
        "    pid = 5000000\n"
        "          ^\n"
        "pb.toml:11:13: error: `retries` -2 is outside 0..1000000\n"
        "      retries = -2\n"
        "                ^\n");
  CHECK(errors_of(std::string(kHead) + "serial = 4294967297\n[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = \"x\"\n") ==
        "pb.toml:2:10: error: `serial` must be a number of hosts (1..1000000) or a percentage (1%..100%) such as "
        "\"30%\" (write serial = 2 or serial = \"25%\")\n"
        "    serial = 4294967297\n"
        "             ^\n");
  CHECK(errors_of(std::string(kHead) + "[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = \"x\"\ntimeout = \"99999h\"\n") ==
        "pb.toml:6:11: error: `timeout`: \"99999h\" is too long (at most 10000h)\n"
        "    timeout = \"99999h\"\n"
        "              ^\n");
}

TEST_CASE("signals and modes: what the loader accepts the builders accept, and the other way round", "[playbook]") {
  // WINCH passed the loader and failed the builder; "15" failed the loader; "04755" passed it.
  Playbook pb = load_ok(std::string(kHead) +
                        "[[step]]\nid = \"a\"\nkind = \"kill\"\npid = 42\nsignal = \"WINCH\"\n"
                        "[[step]]\nid = \"b\"\nkind = \"kill\"\npid = 42\nsignal = \"15\"\n"
                        "[[step]]\nid = \"c\"\nkind = \"write\"\npath = \"/x\"\ncontent = \"x\"\nmode = \"7\"\n");
  CHECK(std::string((*std::get<KillAction>(pb.steps[0].body.keys).signal).name) == "WINCH");
  CHECK(std::string((*std::get<KillAction>(pb.steps[1].body.keys).signal).name) == "TERM");
  CHECK(errors_of(std::string(kHead) + "[[step]]\nid = \"a\"\nkind = \"write\"\npath = \"/x\"\ncontent = \"x\"\n"
                                       "mode = \"04755\"\n") ==
        "pb.toml:7:8: error: `mode` must be 1 to 4 octal digits such as \"0644\", not \"04755\"\n"
        "    mode = \"04755\"\n"
        "           ^\n");
}

TEST_CASE("a TOML error points at the header that caused it, with the fix", "[playbook]") {
  // toml++ names the line after the header; the header is what to change.
  CHECK(errors_of(std::string(kHead) + "[inventory]\nhosts = { a = { address = \"x\" } }\n\n"
                                       "[inventory.hosts.b]\naddress = \"y\"\n") ==
        "pb.toml:5:1: error: Error while parsing table header: cannot insert 'inventory.hosts.b' into existing "
        "inline table (`inventory.hosts` is an inline table, complete where it is written: put `b` inside its "
        "braces, or write `inventory.hosts` as a [inventory.hosts] table)\n"
        "    [inventory.hosts.b]\n"
        "    ^\n");
  CHECK(errors_of(std::string(kHead) + "vars = { a = 1 }\n  [vars.b]\nc = 2\n") ==
        "pb.toml:3:3: error: Error while parsing table header: cannot insert 'vars.b' into existing inline table "
        "(`vars` is an inline table, complete where it is written: put `b` inside its braces, or write `vars` as "
        "a [vars] table)\n"
        "      [vars.b]\n"
        "      ^\n");
}

TEST_CASE("typed model: every key of every kind is read into its field at its line and column", "[playbook]") {
  write("unit.service", "[Service]\nExecStart=/bin/true\n");
  write("n.tmpl", "notes\n");
  write("copy-src.txt", "copied\n");
  // Each kind's keys, one a line, as a step allows them together (kill: one
  // selector, so each selector gets its own step; write: content or template).
  struct Case {
    const char* kind;
    std::vector<std::pair<const char*, const char*>> keys;  // key, TOML value
  };
  const std::vector<Case> cases = {
      {"run", {{"command", "\"make\""}, {"check", "\"test -e /x\""}, {"creates", "[\"/x\"]"}, {"unless", "\"false\""},
               {"expect_exit", "[0, 3]"}, {"stdin", "\"in\""}}},
      {"service", {{"unit", "\"unit\""}, {"state", "\"reloaded\""}, {"enabled", "true"}, {"unit_file", "\"unit.service\""},
                   {"transition_wait", "\"2s\""}, {"scope", "\"user\""}, {"user", "\"alice\""}}},
      {"kill", {{"pid", "42"}, {"user", "[\"svc\"]"}, {"exclude", "\"sshd\""}, {"tree", "true"}, {"signal", "\"hup\""},
                {"wait", "\"250ms\""}, {"missing_ok", "true"}}},
      {"kill", {{"pid_file", "\"/run/x.pid\""}}},
      {"kill", {{"pattern", "\"^python\""}}},
      {"kill", {{"holders_of", "[\"/dev/nvidia*\"]"}}},
      {"verify", {{"no_holders", "\"/dev/x\""}, {"user", "\"svc\""}, {"exclude", "[\"a\", \"b\"]"}, {"missing_ok", "false"},
                  {"absent", "\"^x$\""}, {"port_free", "8000"}, {"port_open", "[22, 80]"}, {"service_active", "\"sshd\""},
                  {"file_exists", "\"/etc/hosts\""}, {"command", "\"uname\""}, {"stdout_matches", "\"Linux\""}}},
      {"verify", {{"gpus_idle", "true"}, {"gpus", "[\"0\", \"GPU-3051597d-0a17\"]"}, {"max_memory_used", "1024"},
                  {"gpu_devices", "[\"/dev/nvidia*\"]"}, {"nvidia_smi", "\"/usr/bin/nvidia-smi\""},
                  {"smi_timeout", "\"3s\""}}},
      {"write", {{"path", "\"/root/n.md\""}, {"content", "\"x\""}, {"mode", "\"0600\""}, {"owner", "\"root\""},
                 {"group", "\"root\""}, {"backup", "true"}}},
      {"write", {{"path", "\"/root/t.md\""}, {"template", "\"n.tmpl\""}}},
      {"reboot", {{"command", "\"reboot\""}, {"test_command", "\"true\""}, {"reboot_timeout", "\"90s\""}}},
      {"copy", {{"src", "\"copy-src.txt\""}, {"dest", "\"/root/c.txt\""}, {"mode", "\"0640\""}, {"owner", "\"root\""},
                {"group", "\"root\""}, {"exclude", "[\"*.bak\"]"}, {"follow", "true"}}},
      {"fetch", {{"src", "[\"/var/log/*.log\"]"}, {"max_size", "1048576"}, {"missing_ok", "true"}}},
  };
  std::string text = kHead;
  int line = 1;
  std::vector<std::map<std::string, int>> lines;  // per step: key -> line
  for (size_t i = 0; i < cases.size(); ++i) {
    text += fmt::format("[[step]]\nid = \"s{}\"\nkind = \"{}\"\n", i, cases[i].kind);
    line += 3;
    lines.emplace_back();
    for (const auto& [k, v] : cases[i].keys) {
      text += fmt::format("{} = {}\n", k, v);
      lines.back()[k] = ++line;
    }
  }
  Playbook pb = load_ok(text);
  REQUIRE(pb.steps.size() == cases.size());
  std::set<std::string> seen;  // kind.key, to prove every key was covered
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& want = lines[i];
    size_t given = 0;
    each_key(pb.steps[i].body, [&](const FieldSpec& f, const FieldBase& b) {
      INFO(cases[i].kind << "." << f.name);
      ++given;
      seen.insert(std::string(cases[i].kind) + "." + f.name);
      REQUIRE(want.count(f.name));
      CHECK(b.pos.line == want.at(f.name));
      CHECK(b.pos.col == static_cast<int>(f.name.size()) + 4);  // `key = ` then the value
      CHECK_FALSE(b.templated());
    });
    CHECK(given == want.size());
  }
  for (const auto& k : step_kinds())
    for (const auto& f : k.fields) CHECK(seen.count(k.name + "." + f.name) == 1);
  // The values, typed.
  const auto& run = std::get<RunAction>(pb.steps[0].body.keys);
  CHECK(run.expect_exit.value == std::vector<int>{0, 3});
  CHECK(run.creates.value == std::vector<std::string>{"/x"});
  CHECK(run.stdin_data.value == "in");
  const auto& svc = std::get<ServiceAction>(pb.steps[1].body.keys);
  CHECK(svc.state.value == ServiceState::reloaded);
  CHECK(svc.transition_wait.value == Millis(2'000));
  CHECK(svc.scope.value == ServiceScope::user);
  CHECK(svc.user.value == "alice");
  const auto& kill = std::get<KillAction>(pb.steps[2].body.keys);
  CHECK(kill.pid.value == 42);
  CHECK((*kill.signal).number == 1);
  CHECK(kill.wait.value == Millis(250));
  CHECK(kill.exclude.value == std::vector<std::string>{"sshd"});
  const auto& v = std::get<VerifyAction>(pb.steps[6].body.keys);
  CHECK(v.port_open.value == std::vector<int>{22, 80});
  CHECK(v.missing_ok.value == false);
  const auto& g = std::get<VerifyAction>(pb.steps[7].body.keys);
  CHECK(g.gpus.value == std::vector<std::string>{"0", "GPU-3051597d-0a17"});
  CHECK(g.max_memory_used.value == 1024);
  CHECK(g.smi_timeout.value == Millis(3'000));
  const auto& w = std::get<WriteAction>(pb.steps[8].body.keys);
  CHECK((*w.mode).octal == "0600");
  CHECK(w.backup.value == true);
  CHECK(std::get<WriteAction>(pb.steps[9].body.keys).template_file.value == "n.tmpl");
  CHECK(pb.files.at("n.tmpl").bytes == "notes\n");
  CHECK(std::get<RebootAction>(pb.steps[10].body.keys).reboot_timeout.value == Millis(90'000));
}

TEST_CASE("TOML slips get their fix: a mode with a leading zero and a string left open", "[playbook]") {
  CHECK(errors_of(std::string(kHead) + "[[step]]\nid = \"w\"\nkind = \"write\"\npath = \"/x\"\ncontent = \"x\"\nmode = 0640\n") ==
        "pb.toml:7:12: error: Error while parsing decimal integer: leading zeroes are prohibited (write a file mode as a "
        "string: mode = \"0640\")\n"
        "    mode = 0640\n"
        "               ^\n");
  std::string open_string = errors_of(std::string(kHead) + "[[step]]\nid = \"w\"\nkind = \"run\"\ncommand = \"true\n");
  CHECK(open_string.find("(the string is not closed on this line: add its closing quote)\n") != std::string::npos);
  // A pid file is read on the host: from /, never from the login's directory.
  CHECK(errors_of(std::string(kHead) + "[[step]]\nid = \"k\"\nkind = \"kill\"\npid_file = \"run/x.pid\"\n") ==
        "pb.toml:5:12: error: `pid_file` must be absolute, got \"run/x.pid\" (write the full path from /, such as "
        "\"/run/x.pid\": a relative path is expanded from the login's working directory on the host)\n"
        "    pid_file = \"run/x.pid\"\n"
        "               ^\n");
}

TEST_CASE("a relative path of any key expanded on the host is refused at its place", "[playbook]") {
  struct Case {
    const char* kind;
    const char* other;  // the kind's other keys a step needs
    const char* key;
    const char* word;   // "must hold absolute paths" or "must be absolute"
  };
  const Case cases[] = {
      {"kill", "", "holders_of", "must hold absolute paths"},
      {"verify", "", "no_holders", "must hold absolute paths"},
      {"verify", "gpus_idle = true\n", "gpu_devices", "must hold absolute paths"},
      {"verify", "", "file_exists", "must hold absolute paths"},
      {"run", "command = \"true\"\n", "creates", "must hold absolute paths"},
      {"fetch", "", "src", "must hold absolute paths"},
      {"kill", "", "pid_file", "must be absolute"},
      {"write", "content = \"x\"\n", "path", "must be absolute"},
  };
  for (const auto& c : cases) {
    INFO(c.key);
    const bool list = std::string(c.word) == "must hold absolute paths";
    std::string value = list ? "[\"var/lab-gpu/nvidia*\"]" : "\"var/lab-gpu/nvidia*\"";
    std::string line = std::string(c.key) + " = " + value;
    std::string err = errors_of(std::string(kHead) + "[[step]]\nid = \"s\"\nkind = \"" + c.kind + "\"\n" + c.other +
                                line + "\n");
    const int at = 5 + (std::string(c.other).empty() ? 0 : 1);
    CHECK(err == fmt::format("pb.toml:{}:{}: error: `{}` {}, got \"var/lab-gpu/nvidia*\" (write the full path from /, "
                             "such as \"/var/lab-gpu/nvidia*\": a relative path is expanded from the login's working "
                             "directory on the host)\n    {}\n    {}^\n",
                             at, std::string(c.key).size() + 4, c.key, c.word, line, std::string(std::string(c.key).size() + 3, ' ')));
  }
  // A rung's keys, the same rule.
  CHECK(errors_of(std::string(kHead) +
                  "[[step]]\nid = \"s\"\nkind = \"verify\"\nno_holders = \"/dev/x\"\n  [[step.escalate]]\n  kind = \"kill\"\n"
                  "  holders_of = \"dev/x\"\n")
            .rfind("pb.toml:8:16: error: `holders_of` must hold absolute paths, got \"dev/x\"", 0) == 0);
  CHECK(errors_of(std::string(kHead) + "[[step]]\nid = \"s\"\nkind = \"verify\"\ngpus_idle = true\nnvidia_smi = \"bin/nvidia-smi\"\n")
            .rfind("pb.toml:6:14: error: `nvidia_smi` must be a program name (looked up on the login's PATH) or an "
                   "absolute path, got \"bin/nvidia-smi\"", 0) == 0);
}

TEST_CASE("an -e value that starts like TOML and is not TOML is an error at its column and plain text stays text",
          "[playbook]") {
  const std::string pb = "name = \"t\"\n[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = \"x\"\n";
  LoadOptions opt;
  opt.extra_vars = {{"devices", "[/var/lab-gpu/nvidia*]"}};
  CHECK(errors_of(pb, opt) ==
        "-e: error: `devices=[/var/lab-gpu/nvidia*]`: the value starts like TOML (`[`) but is not TOML at column 2 of "
        "it: Error while parsing value: could not determine value type (write valid TOML, each string quoted "
        "(-e 'devices=[\"/dev/nvidia0\"]'), or quote the whole value to pass it as text (-e 'devices=\"...\"'))\n");
  for (const char* bad : {"{ a = }", "\"open", "'open", "[\"a\", ]x", " [1, 2"}) {
    INFO(bad);
    opt.extra_vars = {{"v", bad}};
    CHECK(errors_of(pb, opt).rfind(fmt::format("-e: error: `v={}`: the value starts like TOML", bad), 0) == 0);
  }
  // Text that is no TOML value and does not start like one stays text.
  opt.extra_vars = {{"wait", "10s"}, {"path", "/var/x/nvidia*"}, {"word", "trueish"}, {"ver", "1.2.3"},
                    {"ip", "127.0.0.1"}, {"tail", "a[b"}};
  Playbook p = load_ok(pb, opt);
  CHECK(p.vars["wait"] == "10s");
  CHECK(p.vars["path"] == "/var/x/nvidia*");
  CHECK(p.vars["word"] == "trueish");
  CHECK(p.vars["ver"] == "1.2.3");
  CHECK(p.vars["ip"] == "127.0.0.1");
  CHECK(p.vars["tail"] == "a[b");
}
