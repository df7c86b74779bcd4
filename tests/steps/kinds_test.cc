#include <catch2/catch.hpp>

#include "steps/kinds.h"
#include "util/hash.h"

using namespace ratchet::steps;
using nlohmann::json;

static Rung build(const std::string& kind, const json& f, BuildContext ctx = {}) {
  Rung r;
  std::string err;
  INFO(f.dump());
  REQUIRE(build_rung(ratchet::playbook::parse_kind(kind).value(), f, ctx, &r, &err));
  CHECK(err.empty());
  return r;
}

static std::string build_error(const std::string& kind, const json& f) {
  Rung r;
  std::string err;
  CHECK_FALSE(build_rung(ratchet::playbook::parse_kind(kind).value(), f, {}, &r, &err));
  return err;
}

TEST_CASE("kill by pid file with its tree", "[steps]") {
  auto r = build("kill", {{"pid_file", "/run/inference.pid"}, {"tree", true}, {"signal", "SIGTERM"},
                          {"wait", "10s"}, {"exclude", json::array({"nvidia-persistenced", "nv-hostengine"})}});
  REQUIRE(r.action);
  CHECK(r.action->text ==
        "ratchet_kill --signal TERM --wait-ms 10000 --tree --exclude nvidia-persistenced,nv-hostengine "
        "pid_file /run/inference.pid");
  CHECK(r.action->timeout.count() == 70'000);  // timeout + wait
  REQUIRE(r.check.size() == 1);
  CHECK(r.check[0].text == "ratchet_kill_check --exclude nvidia-persistenced,nv-hostengine pid_file /run/inference.pid");
  CHECK(r.check[0].stdin_from_action);
}

TEST_CASE("kill holders of globs: patterns travel quoted, unexpanded", "[steps]") {
  auto r = build("kill", {{"holders_of", json::array({"/dev/nvidia*", "/dev/nvidia-caps/"})}, {"signal", "KILL"},
                          {"user", "svc"}});
  CHECK(r.action->text == "ratchet_kill --signal KILL --wait-ms 5000 --user svc holders_of '/dev/nvidia*' /dev/nvidia-caps/");
}

TEST_CASE("kill selectors and signals are checked", "[steps]") {
  CHECK(build_error("kill", {{"signal", "TERM"}}) ==
        "kill: give one selector: `pid`, `pid_file`, `pattern` or `holders_of`");
  CHECK(build_error("kill", {{"pid", 5}, {"pattern", "x"}}) == "kill: give one selector, not `pid` and `pattern`");
  CHECK(build_error("kill", {{"pid", 1}}) == "kill: `pid` must be a process ID above 1, got 1");
  CHECK(build_error("kill", {{"pid", 5}, {"signal", "TREM"}}) ==
        "kill: `signal` must be a signal name such as TERM or KILL, got \"TREM\"");
  CHECK(build("kill", {{"pid", "4242"}, {"signal", "9"}}).action->text == "ratchet_kill --signal KILL --wait-ms 5000 pid 4242");
}

TEST_CASE("pattern values stay inert data", "[steps]") {
  auto r = build("kill", {{"pattern", "python serve.py; rm -rf /"}});
  CHECK(r.action->text == "ratchet_kill --signal TERM --wait-ms 5000 pattern 'python serve.py; rm -rf /'");
}

TEST_CASE("service: stop, enable, install a unit file", "[steps]") {
  auto stop = build("service", {{"unit", "inference"}, {"state", "stopped"}});
  CHECK(stop.check[0].text == "ratchet_service_state inference '' 30000");  // transition_wait: 30 s
  CHECK(stop.action->text == "ratchet_service stop inference");
  CHECK(stop.check[0].expect == json({{"state", "stopped"}}));

  BuildContext ctx;
  ctx.unit_file_content = "[Service]\nExecStart=/bin/true\n";
  auto all = build("service", {{"unit", "inference"}, {"unit_file", "units/inference.service"},
                               {"enabled", true}, {"state", "started"}}, ctx);
  CHECK(all.check[0].text == "ratchet_service_state inference /etc/systemd/system/inference.service 30000");
  CHECK(all.action->text ==
        "ratchet_write /etc/systemd/system/inference.service 0644 root root 0 && systemctl daemon-reload && "
        "ratchet_service enable inference && ratchet_service start inference");
  auto quick = build("service", {{"unit", "x"}, {"state", "started"}, {"transition_wait", "2s"}});
  CHECK(quick.check[0].text == "ratchet_service_state x '' 2000");
  CHECK(quick.check[0].timeout == ctx.timeout + std::chrono::milliseconds(2000));  // the wait is on top
  CHECK(all.action->stdin_data == ctx.unit_file_content);
  CHECK(all.check[0].expect["file_sha256"] == ratchet::util::sha256_hex(ctx.unit_file_content));
  CHECK(build("service", {{"unit", "x"}, {"state", "restarted"}}).always_act);
  CHECK(build_error("service", {{"unit", "x"}, {"state", "running"}}) ==
        "service: `state` must be started, stopped, restarted or reloaded, got \"running\"");
}

TEST_CASE("verify: one check command per condition", "[steps]") {
  auto r = build("verify", {{"no_holders", json::array({"/dev/nvidia*"})},
                            {"exclude", json::array({"nvidia-persistenced"})},
                            {"port_free", 8000},
                            {"service_active", "inference"},
                            {"command", "curl -sf localhost:8000/health"},
                            {"stdout_matches", "ok"}});
  REQUIRE(r.check.size() == 4);
  CHECK(r.check[0].text == "ratchet_no_holders --exclude nvidia-persistenced -- '/dev/nvidia*'");
  CHECK(r.check[1].text == "ratchet_port_free 8000");
  CHECK(r.check[2].text == "systemctl is-active --quiet -- inference");
  CHECK(r.check[3].text == "curl -sf localhost:8000/health");
  CHECK(r.check[3].judge == Judge::matches);
  CHECK_FALSE(r.action);
}

TEST_CASE("write: atomic write command, content on stdin, hash check", "[steps]") {
  BuildContext ctx;
  ctx.write_content = "hello\n";
  auto r = build("write", {{"path", "/root/production notes.md"}, {"mode", "0644"}, {"backup", true}}, ctx);
  CHECK(r.action->text == "ratchet_write '/root/production notes.md' 0644 '' '' 1");
  CHECK(r.action->stdin_data == "hello\n");
  CHECK(r.check[0].text == "ratchet_stat '/root/production notes.md'");
  CHECK(r.check[0].expect["mode"] == "644");
  CHECK(r.check[0].expect["sha256"] == ratchet::util::sha256_hex("hello\n"));
  CHECK(build_error("write", {{"path", "relative.txt"}}) == "write: `path` must be absolute, got \"relative.txt\"");
  CHECK(build_error("write", {{"path", "/x"}, {"mode", "rw-r--r--"}}) ==
        "write: `mode` must be 1 to 4 octal digits such as \"0644\", got \"rw-r--r--\"");
  // A template that rendered to "" is not "no mode": the loader's rule, once more.
  CHECK(build_error("write", {{"path", "/x"}, {"mode", ""}}) ==
        "write: `mode` must be 1 to 4 octal digits such as \"0644\", got \"\"");
}

TEST_CASE("run: action, and check from check/unless/creates", "[steps]") {
  auto r = build("run", {{"command", "make install"}, {"creates", "/opt/app bin"}, {"expect_exit", json::array({0, 2})}});
  CHECK(r.action->text == "make install");
  CHECK(r.action->expect == json::array({0, 2}));
  CHECK(r.check[0].text == "test -e '/opt/app bin'");
  CHECK(build("run", {{"command", "true"}}).check.empty());
}

TEST_CASE("judging a service state", "[steps]") {
  auto r = build("service", {{"unit", "inference"}, {"state", "stopped"}});
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

TEST_CASE("regexes are checked when the step is built", "[steps]") {
  CHECK(build_error("kill", {{"pattern", "foo("}}).rfind("`pattern`: \"foo(\" is not a valid extended regex", 0) == 0);
  CHECK(build_error("verify", {{"absent", "a[b"}}).rfind("`absent`: \"a[b\" is not a valid extended regex", 0) == 0);
}

TEST_CASE("stdout_matches matches a line, like grep -E", "[steps]") {
  auto r = build("verify", {{"command", "uname"}, {"stdout_matches", "^Linux$"}});
  ratchet::transport::ExecResult res;
  res.exit_code = 0;
  res.out.data = "Linux\n";
  CHECK(judge_check(r.check[0], res).holds);
  res.out.data = "GNU/Linux\nx\n";
  auto v = judge_check(r.check[0], res);
  CHECK_FALSE(v.holds);
  CHECK(v.reason == "stdout does not match /^Linux$/");
}
