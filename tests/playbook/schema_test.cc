#include "playbook/schema.h"

#include <catch2/catch.hpp>

using namespace ratchet::playbook;

namespace {

std::vector<std::string> messages(TableRole role, Value t) {
  std::vector<std::string> out;
  for (const auto& p : check_table(role, t))
    out.push_back((p.key.empty() ? "" : p.key + ": ") + p.message +
                  (p.hint.empty() ? "" : " | " + p.hint));
  return out;
}

}  // namespace

TEST_CASE("the schema lists kinds and their keys", "[playbook]") {
  std::vector<std::string> kinds;
  for (const auto& k : step_kinds()) kinds.push_back(k.name);
  CHECK(kinds == std::vector<std::string>{"run", "service", "kill", "verify", "write", "copy", "fetch", "reboot"});
  CHECK_FALSE(find_kind("reboot")->rung);  // a reboot is never an escalation rung
  CHECK(find_kind("kill")->rung);
  CHECK_FALSE(find_kind("verify")->rung);
  CHECK(find_kind("nope") == nullptr);
  std::vector<std::string> kill;
  for (const auto& f : find_kind("kill")->fields) kill.push_back(f.name);
  CHECK(kill == std::vector<std::string>{"pid", "pid_file", "pattern", "holders_of", "user",
                                         "exclude", "tree", "signal", "wait", "missing_ok"});
  CHECK(allowed_keys(TableRole::rung, "service") ==
        std::vector<std::string>{"kind", "timeout", "settle", "retries", "delay", "unit",
                                 "state", "enabled", "unit_file", "transition_wait", "scope", "user"});
  CHECK(allowed_keys(TableRole::step, "run").size() == 16 + 6);  // 16 common keys (tags the last)
  CHECK(find_field(TableRole::step, "run", "command")->shell);
  CHECK(find_field(TableRole::step, "run", "stdin")->secret_ok);
  CHECK(find_field(TableRole::step, "verify", "command")->shell);
  CHECK(find_field(TableRole::step, "write", "content")->secret_ok);
  CHECK(find_field(TableRole::rung, "kill", "when") == nullptr);
  CHECK(find_field(TableRole::step, "kill", "when")->type == FieldType::string);
  CHECK(find_field(TableRole::step, "kill", "holders_of")->type == FieldType::strings);
}

TEST_CASE("type errors say what was expected and what was found", "[playbook]") {
  CHECK(type_error("tree", Value("yes"), FieldType::boolean, false) ==
        "`tree` must be a boolean, not a string");
  CHECK(type_error("exclude", Value::array({"a", 1}), FieldType::strings, false) ==
        "`exclude` must be a string or an array of strings, not an array");
  CHECK(type_error("exclude", Value::array({"a", "b"}), FieldType::strings, false).empty());
  CHECK(type_error("port_free", Value::array({80, 443}), FieldType::ints, false).empty());
  CHECK(type_error("wait", Value("5"), FieldType::duration, false) ==
        "`wait`: \"5\" has no unit (write \"5s\" or \"5ms\")");
  CHECK(type_error("mode", Value(420), FieldType::string, false) ==
        "`mode` must be a string such as \"0644\", not an integer");
  CHECK(type_error("pid", Value("{{ pid }}"), FieldType::integer, true).empty());
  CHECK_FALSE(type_error("pid", Value("{{ pid }}"), FieldType::integer, false).empty());
  CHECK(type_error("wait", Value("{{ w }}"), FieldType::duration, true).empty());
}

TEST_CASE("check_table applies each kind's rules", "[playbook]") {
  CHECK(messages(TableRole::step,
                 {{"kind", "kill"}, {"holders_of", "/dev/nvidia*"}, {"signal", "sigkill"}})
            .empty());
  Value t = {{"kind", "kill"}, {"pid_file", "/run/x.pid"}, {"signal", "SIGINT"}};
  ActionKeys keys;
  CHECK(check_table(TableRole::rung, t, &keys).empty());
  CHECK(std::string((*std::get<KillAction>(keys).signal).name) == "INT");
  CHECK(messages(TableRole::step, {{"kind", "kill"}, {"pid", 0}}) ==
        std::vector<std::string>{"pid: `pid` 0 is outside 1..4194304"});
  CHECK(messages(TableRole::step, {{"kind", "service"}}) ==
        std::vector<std::string>{"service needs `unit`",
                                 "service needs `state`, `enabled` or `unit_file`"});
  CHECK(messages(TableRole::step, {{"kind", "write"}, {"content", "x"}}) ==
        std::vector<std::string>{"write needs `path`"});
  CHECK(messages(TableRole::step,
                 {{"kind", "write"}, {"path", "/x"}, {"content", "x"}, {"mode", "755"}})
            .empty());
  CHECK(messages(TableRole::step, {{"kind", "run"}}) ==
        std::vector<std::string>{"run needs `command`"});
  CHECK(messages(TableRole::step, {{"kind", "run"}, {"command", "x"}, {"expect_exit", {0, 256}}}) ==
        std::vector<std::string>{"expect_exit: `expect_exit` 256 is outside 0..255"});
  CHECK(messages(TableRole::step, {{"kind", "verify"}, {"port_open", 0}}) ==
        std::vector<std::string>{"port_open: `port_open` 0 is outside 1..65535"});
  CHECK(messages(TableRole::step, {{"kind", "verify"},
                                   {"no_holders", "/dev/x"},
                                   {"user", "root"},
                                   {"exclude", {"sshd"}},
                                   {"missing_ok", true}})
            .empty());
  CHECK(messages(TableRole::rung, {{"kind", "run"}, {"command", "x"}, {"when", "y"}}) ==
        std::vector<std::string>{"when: unknown key `when`"});
  CHECK(messages(TableRole::step, {{"kind", "run"}, {"command", "x"}, {"retries", -1}}) ==
        std::vector<std::string>{"retries: `retries` -1 is outside 0..1000000"});
  // With an unknown kind, keys of any kind pass; typos are still caught.
  CHECK(messages(TableRole::step, {{"kind", "rn"}, {"command", "x"}, {"comand", "y"}}) ==
        std::vector<std::string>{"kind: unknown kind `rn` | did you mean `run`?",
                                 "comand: unknown key `comand` | did you mean `command`?"});
}

TEST_CASE("signals and slugs normalise", "[playbook]") {
  CHECK(normalize_signal("TERM") == "TERM");
  CHECK(normalize_signal("SIGTERM") == "TERM");
  CHECK(normalize_signal("kill") == "KILL");
  CHECK(normalize_signal("hup") == "HUP");
  CHECK(normalize_signal("SIGFOO").empty());
  CHECK(slug("Kill the server started by hand") == "kill_the_server_started_by_hand");
  CHECK(slug("  GPUs -- free? ") == "gpus_free");
  CHECK(slug("Étape 2") == "tape_2");
  CHECK(slug("!!").empty());
}

TEST_CASE("schema: a spec for every kind in the order of kKinds", "[playbook]") {
  REQUIRE(step_kinds().size() == kKinds.size());
  for (size_t i = 0; i < kKinds.size(); ++i) {
    CHECK(step_kinds()[i].kind == kKinds[i]);
    CHECK(step_kinds()[i].name == name(kKinds[i]));
    CHECK(&kind_spec(kKinds[i]) == &step_kinds()[i]);
    CHECK(find_kind(name(kKinds[i])) == &step_kinds()[i]);
  }
}

TEST_CASE("check_table: common keys take no template and a scalar kind key no array", "[playbook]") {
  CHECK(messages(TableRole::step, {{"kind", "run"}, {"command", "x"}, {"on_failure", "{{ t }}"}}) ==
        std::vector<std::string>{"on_failure: `on_failure` is read when the playbook loads: it cannot hold a template | "
                                 "templates go in a kind's keys (command, pid, path, ...); use `when` with a boolean var "
                                 "to choose per host"});
  CHECK(messages(TableRole::step, {{"kind", "run"}, {"command", "x"}, {"id", "{{ t }}"}}).size() == 1);
  CHECK(messages(TableRole::step, {{"kind", "run"}, {"command", "x"}, {"name", "{{ literal }}"}}).empty());
  CHECK(messages(TableRole::step, {{"kind", "write"}, {"path", "/x"}, {"content", {"{{ f }}"}}}) ==
        std::vector<std::string>{"content: `content` must be a string, not an array"});
  CHECK(messages(TableRole::rung, {{"kind", "run"}, {"command", "x"}, {"wait", "7s"}}) ==
        std::vector<std::string>{"wait: unknown key `wait` | `wait` belongs to `kill` steps"});
}
