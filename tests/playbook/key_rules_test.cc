// Each kind key's one rule (playbook/key_rules.h): a literal the loader reads
// and a value a template rendered pass or fail alike, with the same words.
#include "playbook/key_rules.h"

#include <catch2/catch.hpp>

#include <optional>

#include "playbook/schema.h"

using namespace ratchet::playbook;

namespace {

// The problem `read` reports for `v`, literal and rendered ("" = it passed);
// both must agree.
template <class T, class R>
std::string problem(R read, const char* key, const Value& v) {
  T lit{}, ren{};
  KeyProblem a, b;
  bool ok_lit = read(key, v, false, &lit, &a);
  bool ok_ren = read(key, v, true, &ren, &b);
  CHECK(ok_lit == ok_ren);
  CHECK(a.message == b.message);
  return ok_lit ? "" : a.message + (a.hint.empty() ? "" : " | " + a.hint);
}

}  // namespace

TEST_CASE("key rules: a value passes or fails alike from a literal or a template", "[playbook]") {
  CHECK(problem<long long>(read_pid, "pid", 1) == "`pid` 1 is init: ratchet never signals it");
  CHECK(problem<long long>(read_pid, "pid", 0) == "`pid` 0 is outside 1..4194304");
  CHECK(problem<long long>(read_pid, "pid", 4242).empty());
  CHECK(problem<ratchet::util::SignalSpec>(read_signal, "signal", "TREM") == "unknown signal `TREM` | did you mean `TERM`?");
  CHECK(problem<ServiceState>(read_state, "state", "running") ==
        "`state` must be `started`, `stopped`, `restarted` or `reloaded`, not `running`");
  CHECK(problem<FileMode>(read_mode, "mode", "rw-r--r--") == "`mode` must be 1 to 4 octal digits such as \"0644\", not \"rw-r--r--\"");
  // A template that rendered to "" is not "no mode".
  CHECK(problem<FileMode>(read_mode, "mode", "") == "`mode` must be 1 to 4 octal digits such as \"0644\", not \"\"");
  CHECK(problem<std::string>(read_abs_path, "path", "notes.md") == "`path` must be absolute, got \"notes.md\" | write the full path from /, such as \"/notes.md\": a relative path is expanded from the login's working directory on the host");
  CHECK(problem<std::string>(read_regex, "pattern", "foo(").rfind("`pattern`: \"foo(\" is not a valid extended regex", 0) == 0);
  CHECK(problem<std::vector<std::string>>(read_regexes, "absent", Value::array({"ok", "a[b"})).rfind("`absent`: \"a[b\" is not a valid extended regex", 0) == 0);
  CHECK(problem<std::string>(read_regex, "pattern", std::string(kMaxRegex + 1, 'a')) == "`pattern`: a regex of 4097 bytes is too long (at most 4096)");
  CHECK(problem<std::vector<std::string>>(read_paths, "holders_of", Value::array()) == "`holders_of` names no path | name at least one file or glob");
  CHECK(problem<std::vector<std::string>>(read_names, "user", Value::array({"a,b"})) == "`user`: name \"a,b\" contains a comma | write each name as its own array item");
  CHECK(problem<std::vector<int>>(read_ints, "port_free", Value::array({80, 70000})) == "`port_free` 70000 is outside 1..65535");
  CHECK(problem<std::vector<int>>(read_ints, "expect_exit", 256) == "`expect_exit` 256 is outside 0..255");
  CHECK(problem<ratchet::util::Millis>(read_reboot_timeout, "reboot_timeout", "2s") == "`reboot_timeout` must be at least 5s | a host needs time to go down and come back");
  CHECK(problem<std::string>(read_word, "pid_file", "") == "`pid_file` is empty");
  CHECK(problem<ratchet::util::Millis>(read_smi_timeout, "smi_timeout", "500ms") == "`smi_timeout` must be from 1s to 10m | the bound on each nvidia-smi call: a healthy driver answers in well under a second");
  CHECK(problem<ratchet::util::Millis>(read_smi_timeout, "smi_timeout", "11m") == "`smi_timeout` must be from 1s to 10m | the bound on each nvidia-smi call: a healthy driver answers in well under a second");
  CHECK(problem<ratchet::util::Millis>(read_smi_timeout, "smi_timeout", "ten").rfind("`smi_timeout`: ", 0) == 0);
}

TEST_CASE("key rules: values read into their types", "[playbook]") {
  ratchet::util::SignalSpec sig{};
  KeyProblem p;
  REQUIRE(read_signal("signal", "sigkill", false, &sig, &p));
  CHECK(std::string(sig.name) == "KILL");
  CHECK(sig.number == 9);
  std::vector<int> codes;
  REQUIRE(read_ints("expect_exit", 3, false, &codes, &p));
  CHECK(codes == std::vector<int>{3});
  FileMode m;
  REQUIRE(read_mode("mode", "0644", false, &m, &p));
  CHECK(m.octal == "0644");
  CHECK(m.bare() == "644");
  REQUIRE(read_mode("mode", "0000", false, &m, &p));
  CHECK(m.bare() == "0");
  ratchet::util::Millis d{};
  REQUIRE(read_duration("wait", "1m30s", false, &d, &p));
  CHECK(d.count() == 90'000);
}

TEST_CASE("key rules: a template writes text that only a rendered value may be", "[playbook]") {
  long long pid = 0;
  KeyProblem p;
  // "{{ a }}{{ b }}" renders to a string: its digits are the number.
  CHECK(read_pid("pid", "4242", true, &pid, &p));
  CHECK(pid == 4242);
  CHECK_FALSE(read_pid("pid", "4242", false, &pid, &p));
  CHECK(p.message == "`pid` must be an integer, not a string");
  CHECK_FALSE(read_pid("pid", "42x", true, &pid, &p));
  CHECK(p.message == "`pid` must be an integer, got \"42x\"");
  bool b = false;
  CHECK(read_bool("tree", "true", true, &b, &p));
  CHECK(b);
  CHECK_FALSE(read_bool("tree", "yes", true, &b, &p));
  CHECK(p.message == "`tree` must be a boolean, got \"yes\"");
  std::vector<std::string> names;
  CHECK(read_texts("holders_of", Value::array({"/dev/a", 7}), true, &names, &p));
  CHECK(names == std::vector<std::string>{"/dev/a", "7"});
}

TEST_CASE("key rules: every kind key has its rule and its field", "[playbook]") {
  for (const auto& k : step_kinds()) {
    ActionKeys keys = keys_of(k.kind);
    for (const auto& f : k.fields) {
      INFO(k.name + "." + f.name);
      REQUIRE(f.read);
      REQUIRE(f.field);
      FieldBase& a = f.field(keys);
      a.given = true;
      CHECK(&f.field(keys) == &a);  // one field per key
    }
    size_t given = 0;
    Action act;
    act.kind = k.kind;
    act.keys = keys;
    each_key(act, [&](const FieldSpec&, const FieldBase&) { ++given; });
    CHECK(given == k.fields.size());
  }
  for (const auto& f : common_step_fields()) CHECK_FALSE(f.read);
}

TEST_CASE("key rules: a filter never widens and no value holds a NUL or is blank", "[playbook]") {
  // No user would be no filter: every user's processes. Refused, never widened.
  CHECK(problem<std::vector<std::string>>(read_users, "user", Value::array()) ==
        "`user` names no user | leave `user` out to select processes of any user");
  CHECK(problem<std::vector<std::string>>(read_users, "user", "") ==
        "`user` holds an empty name | an empty name would select or spare nobody: leave it out");
  CHECK(problem<std::vector<std::string>>(read_users, "user", Value::array({"svc", " "})).rfind("`user` holds an empty name", 0) == 0);
  CHECK(problem<std::vector<std::string>>(read_names, "exclude", Value::array()).empty());  // excluding none is no widening
  CHECK(problem<std::string>(read_regex, "pattern", std::string("a\0(", 3)) ==
        "`pattern` holds a NUL byte (at byte 1) | no command, path or name can hold one");
  CHECK(problem<std::string>(read_abs_path, "path", std::string("/x\0y", 4)).rfind("`path` holds a NUL byte", 0) == 0);
  CHECK(problem<std::string>(read_word, "check", "  ") == "`check` is blank");
  CHECK(problem<std::string>(read_abs_path, "path", "/") == "`path` must name a file, not /");
  CHECK(problem<std::vector<std::string>>(read_units, "service_active", Value::array()) == "`service_active` names no unit");
}

TEST_CASE("key rules: gpus are all alone or indexes and UUIDs each once", "[playbook]") {
  const std::string bad = "`gpus` must be \"all\" or a list of GPU indexes or UUIDs, such as [\"0\", \"3\"]";
  for (const Value& v : {Value("ALL"), Value("0,3"), Value(" 0"), Value::array({"-1"}), Value::array({"0", "0"}),
                         Value::array({"all", "0"}), Value::array({"GPU-xyz"}), Value::array()}) {
    INFO(ratchet::util::toml_text(v));
    CHECK(problem<std::vector<std::string>>(read_gpus, "gpus", v) == bad);
  }
  for (const Value& v : {Value("all"), Value::array({"0", "3"}), Value::array({"GPU-3051597d-0a17-6c32-5486-4381f9a274da"}),
                         Value::array({"MIG-3051597d-0a17"})}) {
    INFO(ratchet::util::toml_text(v));
    CHECK(problem<std::vector<std::string>>(read_gpus, "gpus", v).empty());
  }
}

TEST_CASE("key rules: a service's scope is system or user, and scope = \"user\" goes with a user name", "[playbook]") {
  CHECK(problem<ServiceScope>(read_scope, "scope", "users") == "`scope` must be `system` or `user`, not `users` | did you mean `user`?");
  CHECK(problem<ServiceScope>(read_scope, "scope", "session") ==
        "`scope` must be `system` or `user`, not `session` | `user` reaches a user's own systemd manager (systemctl --user)");
  CHECK(problem<ServiceScope>(read_scope, "scope", "user").empty());
  CHECK(problem<std::string>(read_user_name, "user", "alice").empty());
  CHECK(problem<std::string>(read_user_name, "user", "1000").empty());
  CHECK(problem<std::string>(read_user_name, "user", "svc-gpu.1$").empty());
  for (const char* bad : {"-alice", "al ice", "alice@", "a/b", "$x", "al$ice"})
    CHECK(problem<std::string>(read_user_name, "user", bad) ==
          std::string("`user`: \"") + bad + "\" is not a user name | a user name holds letters, digits, `.`, `_` and `-` "
                                            "and does not start with `-`");

  auto keys = [](std::optional<ServiceScope> scope, std::optional<std::string> user) {
    ServiceAction a;
    a.unit.given = true, a.unit.value = "gpujob";
    if (scope) a.scope.given = true, a.scope.value = *scope;
    if (user) a.user.given = true, a.user.value = *user;
    return ActionKeys{a};
  };
  std::string key;
  KeyProblem p;
  CHECK_FALSE(keys_disagree(keys(std::nullopt, std::nullopt), &key, &p));
  CHECK_FALSE(keys_disagree(keys(ServiceScope::system, std::nullopt), &key, &p));
  CHECK_FALSE(keys_disagree(keys(ServiceScope::user, "alice"), &key, &p));
  REQUIRE(keys_disagree(keys(ServiceScope::user, std::nullopt), &key, &p));
  CHECK(key == "scope");
  CHECK(p.message == "`scope = \"user\"` needs `user`: the user whose own systemd manager runs the unit");
  REQUIRE(keys_disagree(keys(std::nullopt, "alice"), &key, &p));
  CHECK(key == "user");
  CHECK(p.message == "`user` goes with scope = \"user\"; this step's scope is `system`");
  CHECK(p.hint == "add scope = \"user\" to reach alice's own systemd manager, or leave `user` out for a system unit");
  REQUIRE(keys_disagree(keys(ServiceScope::system, "alice"), &key, &p));
  CHECK(key == "user");
  // Another kind's keys never disagree so.
  CHECK_FALSE(keys_disagree(ActionKeys{KillAction{}}, &key, &p));
}

TEST_CASE("key rules: every path expanded on the host is absolute, literal or rendered", "[playbook]") {
  // A relative glob would be expanded from the login's working directory: it
  // matches nothing there, and nothing matched must never read as free.
  const std::string fix =
      " | write the full path from /, such as \"/var/x/nvidia*\": a relative path is expanded from the login's "
      "working directory on the host";
  for (const char* key : {"holders_of", "no_holders", "gpu_devices", "file_exists", "creates", "src"}) {
    const KindSpec* spec = nullptr;
    for (const auto& k : step_kinds())
      for (const auto& f : k.fields)
        if (f.name == key && (std::string(key) != "src" || k.kind == Kind::fetch)) spec = &k;
    INFO(key);
    REQUIRE(spec);
    for (const auto& f : spec->fields)
      if (f.name == key) CHECK(f.rule == ValueRule::abs_paths);
    CHECK(problem<std::vector<std::string>>(read_abs_paths, key, Value::array({"/dev/nvidia0", "var/x/nvidia*"})) ==
          "`" + std::string(key) + "` must hold absolute paths, got \"var/x/nvidia*\"" + fix);
    CHECK(problem<std::vector<std::string>>(read_abs_paths, key, "./var/x/nvidia*") ==
          "`" + std::string(key) + "` must hold absolute paths, got \"./var/x/nvidia*\"" + fix);
    CHECK(problem<std::vector<std::string>>(read_abs_paths, key, Value::array({"/dev/nvidia*"})).empty());
  }
  for (const char* key : {"pid_file", "path", "dest"}) {
    CHECK(problem<std::string>(read_abs_path, key, "var/x/nvidia*") ==
          "`" + std::string(key) + "` must be absolute, got \"var/x/nvidia*\"" + fix);
  }
  // nvidia_smi: a name on PATH, or from /; never a path from the login's directory.
  CHECK(problem<std::string>(read_program, "nvidia_smi", "nvidia-smi").empty());
  CHECK(problem<std::string>(read_program, "nvidia_smi", "/usr/bin/nvidia-smi").empty());
  CHECK(problem<std::string>(read_program, "nvidia_smi", "bin/nvidia-smi") ==
        "`nvidia_smi` must be a program name (looked up on the login's PATH) or an absolute path, got "
        "\"bin/nvidia-smi\" | write the full path from /, such as \"/bin/nvidia-smi\": a relative path is expanded "
        "from the login's working directory on the host");
  CHECK(problem<std::string>(read_program, "nvidia_smi", "/") == "`nvidia_smi` must name a program, not /");
  CHECK(problem<std::string>(read_abs_path, "pid_file", "~/x.pid") ==
        "`pid_file` must be absolute, got \"~/x.pid\" | write the full path from /: `~` is not expanded, and a relative "
        "path is expanded from the login's working directory on the host");
}

TEST_CASE("key rules: a unit_file is installed under its own name, which must be the step's unit", "[playbook]") {
  auto keys = [](const std::string& unit, const std::string& file) {
    ServiceAction a;
    a.unit.given = true, a.unit.value = unit;
    a.unit_file.given = true, a.unit_file.value = file;
    return ActionKeys{a};
  };
  std::string key;
  KeyProblem p;
  CHECK_FALSE(keys_disagree(keys("inference", "units/inference.service"), &key, &p));
  CHECK_FALSE(keys_disagree(keys("inference.service", "inference.service"), &key, &p));
  CHECK_FALSE(keys_disagree(keys("gpu.timer", "../units/gpu.timer"), &key, &p));
  REQUIRE(keys_disagree(keys("inference", "units/gpujob.service"), &key, &p));
  CHECK(key == "unit_file");
  CHECK(p.message == "`unit_file` is installed as gpujob.service (its file name), but the step's `unit` is inference.service");
  CHECK(p.hint == "rename the file to inference.service, or set unit = \"gpujob.service\"");
  // A unit still a template is judged once rendered (steps::resolve asks the same rule).
  ServiceAction t;
  t.unit.given = true;
  t.unit_file.given = true, t.unit_file.value = "units/gpujob.service";
  CHECK_FALSE(keys_disagree(ActionKeys{t}, &key, &p));
}
