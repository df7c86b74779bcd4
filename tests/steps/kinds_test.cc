// The builders (steps/*_kind.cc): typed keys in, exact commands out. Values
// were read by their rules before (playbook/key_rules.h, tested there).
#include <catch2/catch.hpp>

#include "playbook/schema.h"
#include "steps/kinds.h"
#include "util/hash.h"

using namespace ratchet::steps;
using ratchet::playbook::Field;
using ratchet::util::Millis;
using Strings = std::vector<std::string>;

namespace {

template <class T>
Field<T> given(T v) {
  Field<T> f;
  f.given = true;
  f.value = std::move(v);
  return f;
}

Rung build(const ratchet::playbook::ActionKeys& keys, BuildContext ctx = {}) {
  Rung r;
  build_rung(keys, ctx, &r);
  return r;
}

// The keys a literal table reads into (the loader's path: check_table).
ratchet::playbook::ActionKeys read(const std::string& kind, ratchet::playbook::Value t) {
  t["kind"] = kind;
  ratchet::playbook::ActionKeys keys;
  auto problems = ratchet::playbook::check_table(ratchet::playbook::TableRole::step, t, &keys);
  std::string said;
  for (const auto& p : problems) said += p.key + ": " + p.message + "\n";
  INFO(ratchet::util::toml_text(t) + "\n" + said);
  REQUIRE(problems.empty());
  return keys;
}

}  // namespace

TEST_CASE("kill by pid file with its tree", "[steps]") {
  ratchet::playbook::KillAction k;
  k.pid_file = given<std::string>("/run/inference.pid");
  k.tree = given(true);
  k.signal = given(ratchet::util::SignalSpec{"TERM", 15});
  k.wait = given(Millis(10'000));
  k.exclude = given(Strings{"nvidia-persistenced", "nv-hostengine"});
  auto r = build(k);
  CHECK(r.kind == ratchet::playbook::Kind::kill);
  REQUIRE(r.action);
  CHECK(r.action->text ==
        "ratchet_kill --signal TERM --wait-ms 10000 --tree --exclude nvidia-persistenced,nv-hostengine "
        "pid_file /run/inference.pid");
  CHECK(r.action->timeout.count() == 70'000);  // timeout + wait
  CHECK(r.action->judge == Judge::kill_action);
  CHECK(r.wait.count() == 10'000);
  REQUIRE(r.check.size() == 1);
  CHECK(r.check[0].text == "ratchet_kill_check --tree --exclude nvidia-persistenced,nv-hostengine pid_file /run/inference.pid");
  CHECK(r.check[0].stdin_from_action);
}

TEST_CASE("kill holders of globs: patterns travel quoted and unexpanded", "[steps]") {
  auto r = build(read("kill", {{"holders_of", {"/dev/nvidia*", "/dev/nvidia-caps/"}}, {"signal", "KILL"}, {"user", "svc"}}));
  CHECK(r.action->text == "ratchet_kill --signal KILL --wait-ms 5000 --user svc holders_of '/dev/nvidia*' /dev/nvidia-caps/");
  CHECK(build(read("kill", {{"pid", 4242}, {"signal", "9"}})).action->text == "ratchet_kill --signal KILL --wait-ms 5000 pid 4242");
}

TEST_CASE("kill: a table the loader would refuse never reaches a builder", "[steps]") {
  CHECK_THROWS_AS(build(ratchet::playbook::KillAction{}), std::logic_error);  // no selector
  ratchet::playbook::KillAction k;
  k.pid.given = true;
  k.pid.written = "{{ pid }}";  // a template not yet rendered
  CHECK_THROWS_AS(build(k), std::logic_error);
  CHECK_THROWS_AS(build(ratchet::playbook::VerifyAction{}), std::logic_error);  // no condition
}

TEST_CASE("pattern values stay inert data", "[steps]") {
  auto r = build(read("kill", {{"pattern", "python serve.py; rm -rf /"}}));
  CHECK(r.action->text == "ratchet_kill --signal TERM --wait-ms 5000 pattern 'python serve.py; rm -rf /'");
}

TEST_CASE("service: stop and enable and install a unit file", "[steps]") {
  ratchet::playbook::ServiceAction s;
  s.unit = given<std::string>("inference");
  s.state = given(ratchet::playbook::ServiceState::stopped);
  auto stop = build(s);
  CHECK(stop.check[0].text == "ratchet_service_state inference '' 30000");  // transition_wait: 30 s
  CHECK(stop.action->text == "ratchet_service stop inference");
  Expect want;
  want.state = "stopped";
  CHECK(stop.check[0].expect == want);

  BuildContext ctx;
  ctx.unit_file_content = "[Service]\nExecStart=/bin/true\n";
  auto all = build(read("service", {{"unit", "inference"}, {"unit_file", "units/inference.service"},
                                    {"enabled", true}, {"state", "started"}}), ctx);
  CHECK(all.check[0].text == "ratchet_service_state inference /etc/systemd/system/inference.service 30000");
  CHECK(all.action->text ==
        "ratchet_need_systemd && ratchet_write /etc/systemd/system/inference.service 0644 root root 0 && "
        "systemctl daemon-reload && "
        "ratchet_service enable inference && ratchet_service start inference");
  auto quick = build(read("service", {{"unit", "x"}, {"state", "started"}, {"transition_wait", "2s"}}));
  CHECK(quick.check[0].text == "ratchet_service_state x '' 2000");
  CHECK(quick.check[0].timeout == ctx.timeout + std::chrono::milliseconds(2000));  // the wait is on top
  CHECK(all.action->stdin_data == ctx.unit_file_content);
  CHECK(all.check[0].expect.file_sha256 == ratchet::util::sha256_hex(ctx.unit_file_content));
  CHECK(all.check[0].expect.enabled == true);
  CHECK(all.check[0].expect.state == "started");
  CHECK(build(read("service", {{"unit", "x"}, {"state", "restarted"}})).always_act);
  CHECK_FALSE(build(read("service", {{"unit", "x"}, {"state", "started"}})).always_act);
}

TEST_CASE("service scope = \"user\": every command reaches that user's own manager", "[steps]") {
  BuildContext ctx;
  ctx.unit_file_content = "[Service]\nExecStart=/bin/sleep 300\n";
  auto r = build(read("service", {{"unit", "gpujob"}, {"scope", "user"}, {"user", "alice"}, {"state", "stopped"},
                                  {"enabled", false}, {"unit_file", "units/gpujob.service"}}),
                 ctx);
  // A user unit file goes to the admin's directory of user units; the reload is of alice's manager.
  CHECK(r.check[0].text == "ratchet_service_state --user alice gpujob /etc/systemd/user/gpujob.service 30000");
  CHECK(r.action->text ==
        "ratchet_need_systemd && ratchet_write /etc/systemd/user/gpujob.service 0644 root root 0 && "
        "ratchet_service --user alice daemon-reload && ratchet_service --user alice disable gpujob && "
        "ratchet_service --user alice stop gpujob");
  // scope = "system" is the default, written or not.
  auto sys = build(read("service", {{"unit", "x"}, {"scope", "system"}, {"state", "started"}}));
  CHECK(sys.check[0].text == "ratchet_service_state x '' 30000");
  CHECK(sys.action->text == "ratchet_service start x");
}

TEST_CASE("judging a service state: no LoadState, or a name that runs as a user unit, is could not check", "[steps]") {
  auto r = build(read("service", {{"unit", "gpujob"}, {"state", "stopped"}}));
  ratchet::transport::ExecResult res;
  res.exit_code = 0;
  // What the library printed where systemd did not answer, before it said so itself (R09).
  res.out.data = "load=\nactive=\nenabled=\nreload=\n";
  auto v = judge_check(r.check[0], res);
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: service state unreadable: systemctl printed no LoadState");
  res.out.data = "load=not-found\nactive=inactive\nenabled=\nreload=no\nuser_unit=alice\nuser_unit=bob\n";
  v = judge_check(r.check[0], res);
  CHECK(v.unknown);
  CHECK_FALSE(v.holds);
  CHECK(v.reason ==
        "could not check: not a system unit; runs as a user unit of alice, bob: set scope = \"user\", user = \"alice\"");
}

TEST_CASE("verify: one check command per condition", "[steps]") {
  auto r = build(read("verify", {{"no_holders", {"/dev/nvidia*"}},
                                 {"exclude", {"nvidia-persistenced"}},
                                 {"port_free", 8000},
                                 {"service_active", "inference"},
                                 {"command", "curl -sf localhost:8000/health"},
                                 {"stdout_matches", "ok"}}));
  REQUIRE(r.check.size() == 4);
  CHECK(r.check[0].text == "ratchet_no_holders --exclude nvidia-persistenced -- '/dev/nvidia*'");
  CHECK(r.check[0].judge == Judge::holders);
  CHECK(r.check[1].text == "ratchet_port_free 8000");
  CHECK(r.check[2].text == "ratchet_service_active inference");
  CHECK(r.check[3].text == "curl -sf localhost:8000/health");
  CHECK(r.check[3].judge == Judge::matches);
  CHECK(r.check[3].expect.stdout_matches == "ok");
  CHECK_FALSE(r.action);
}

TEST_CASE("write: atomic write command and content on stdin and a hash check", "[steps]") {
  BuildContext ctx;
  ctx.write_content = "hello\n";
  auto r = build(read("write", {{"path", "/root/production notes.md"}, {"content", "x"}, {"mode", "0644"}, {"backup", true}}), ctx);
  CHECK(r.action->text == "ratchet_write '/root/production notes.md' 0644 '' '' 1");
  CHECK(r.action->stdin_data == "hello\n");
  CHECK(r.check[0].text == "ratchet_stat '/root/production notes.md'");
  REQUIRE(r.check[0].expect.file);
  CHECK(*r.check[0].expect.file == Expect::File{ratchet::util::sha256_hex("hello\n"), "644", "", ""});
}

TEST_CASE("run: action and check from check or unless or creates", "[steps]") {
  auto r = build(read("run", {{"command", "make install"}, {"creates", "/opt/app bin"}, {"expect_exit", {0, 2}}}));
  CHECK(r.action->text == "make install");
  CHECK(r.action->expect.exit_codes == std::vector<int>{0, 2});
  CHECK(r.check[0].text == "test -e '/opt/app bin'");
  CHECK(build(read("run", {{"command", "true"}})).check.empty());
  CHECK(build(read("run", {{"command", "true"}})).action->expect.exit_codes == std::vector<int>{0});
  CHECK(build(read("run", {{"command", "x"}, {"unless", "test -e /y"}})).check[0].text == "test -e /y");
}

TEST_CASE("reboot: boot id and a detached reboot and the after checks", "[steps]") {
  auto r = build(read("reboot", {{"test_command", "uptime"}, {"reboot_timeout", "2m"}}));
  CHECK(r.check[0].text == "cat /proc/sys/kernel/random/boot_id");
  CHECK(r.action->text == "nohup /bin/sh -c 'sleep 1; systemctl reboot' >/dev/null 2>&1 </dev/null &");
  REQUIRE(r.after.size() == 2);
  CHECK(r.after[0].timeout.count() == 120'000);
  CHECK(r.after[1].text == "uptime");
  CHECK(r.reboot_timeout.count() == 120'000);
}

TEST_CASE("judging a service state", "[steps]") {
  auto r = build(read("service", {{"unit", "inference"}, {"state", "stopped"}}));
  ratchet::transport::ExecResult res;
  res.exit_code = 0;
  res.out.data = "load=not-found\nactive=inactive\nenabled=\n";
  auto v = judge_check(r.check[0], res);
  CHECK(v.holds);
  CHECK(v.reason == "unit not found: counts as stopped");
  res.out.data = "load=loaded\nactive=active\nenabled=enabled\n";
  v = judge_check(r.check[0], res);
  CHECK_FALSE(v.holds);
  CHECK(v.reason == "is-active says \"active\"");
}

TEST_CASE("stdout_matches matches a line like grep -E", "[steps]") {
  auto r = build(read("verify", {{"command", "uname"}, {"stdout_matches", "^Linux$"}}));
  ratchet::transport::ExecResult res;
  res.exit_code = 0;
  res.out.data = "Linux\n";
  CHECK(judge_check(r.check[0], res).holds);
  res.out.data = "GNU/Linux\nx\n";
  auto v = judge_check(r.check[0], res);
  CHECK_FALSE(v.holds);
  CHECK(v.reason == "stdout does not match /^Linux$/");
}
