#include <catch2/catch.hpp>

#include <fstream>

#include "steps/holders.h"
#include "steps/prepare.h"
#include "support/action_of.h"
#include "support/local_proc.h"

using namespace ratchet;
using ratchet::playbook::Value;

static playbook::Step step(const std::string& kind, Value fields) {
  playbook::Step s;
  s.id = "s";
  s.kind = playbook::parse_kind(kind).value();
  fields["kind"] = kind;
  s.body = testing::action_of(std::move(fields));
  return s;
}

TEST_CASE("prepare: shell fields quote values, data fields keep their type", "[steps]") {
  Value scope = {{"f", "a b; $(x)"}, {"devices", Value::array({"/dev/nvidia*", "/dev/x y"})},
                {"keep", Value::array({"nvidia-persistenced"})}};
  steps::PreparedStep ps;
  std::string err;
  REQUIRE(steps::prepare_step(step("run", {{"command", "cat {{ f }} {{ devices }}"}}), scope, {}, &ps, &err));
  CHECK(ps.rungs[0].action->text == "cat 'a b; $(x)' '/dev/nvidia*' '/dev/x y'");
  CHECK(ps.action_is_result);

  auto v = step("verify", {{"no_holders", "{{ devices }}"}, {"exclude", "{{ keep }}"}});
  REQUIRE(steps::prepare_step(v, scope, {}, &ps, &err));
  CHECK(ps.rungs[0].check[0].text == "ratchet_no_holders --exclude nvidia-persistenced -- '/dev/nvidia*' '/dev/x y'");
  CHECK_FALSE(ps.rungs[0].action);
}

TEST_CASE("prepare: rungs take their own timing, else the step's", "[steps]") {
  auto s = step("verify", {{"file_exists", "/x"}});
  s.settle = util::Millis(3000);
  s.timeout = util::Millis(20'000);
  playbook::Action r1 = testing::action_of({{"kind", "kill"}, {"pid", 42}, {"wait", "2s"}});
  playbook::Action r2 = r1;
  r2.settle = util::Millis(100);
  r2.timeout = util::Millis(5000);
  s.escalate = {r1, r2};
  steps::PreparedStep ps;
  std::string err;
  REQUIRE(steps::prepare_step(s, Value::table(), {}, &ps, &err));
  REQUIRE(ps.rungs.size() == 3);
  CHECK(ps.rungs[1].settle.count() == 3000);
  CHECK(ps.rungs[1].action->timeout.count() == 22'000);
  CHECK(ps.rungs[2].settle.count() == 100);
  CHECK(ps.rungs[2].action->timeout.count() == 7'000);
  CHECK(ps.rungs[1].check.empty());  // the step's check decides
}

TEST_CASE("prepare: a write template renders with placeholders in a dry run", "[steps]") {
  // The bytes come from the model (read once, at load), never from disk here.
  std::map<std::string, playbook::LocalFile> files;
  files["n.tmpl"] = {"template", "/pb/n.tmpl", "host {{ host.name }} freed at rung {{ steps.free.rung }}\n", ""};
  auto s = step("write", {{"path", "/root/notes.md"}, {"template", "n.tmpl"}});
  Value scope = {{"host", {{"name", "gpu-box"}}}, {"steps", Value::table()}};
  steps::PreparedStep ps;
  std::string err;
  steps::PrepareOptions opt;
  opt.files = &files;
  opt.plan = true;
  REQUIRE(steps::prepare_step(s, scope, opt, &ps, &err));
  CHECK(ps.rungs[0].action->stdin_data == "host gpu-box freed at rung <steps.free.rung>\n");
  opt.plan = false;
  scope["steps"]["free"] = {{"rung", 2}};
  REQUIRE(steps::prepare_step(s, scope, opt, &ps, &err));
  CHECK(ps.rungs[0].action->stdin_data == "host gpu-box freed at rung 2\n");
  opt.files = nullptr;
  CHECK_FALSE(steps::prepare_step(s, scope, opt, &ps, &err));
  CHECK(err == "test.toml:1:1: step `s`: `template`: the file was not read when the playbook loaded");
}

TEST_CASE("prepare: a template's value is read by its key's rule once rendered", "[steps]") {
  Value scope = {{"pid", 4242}, {"one", 1}, {"sig", "hup"}, {"wait", "2s"}, {"digits", "77"}};
  steps::PreparedStep ps;
  std::string err;
  REQUIRE(steps::prepare_step(step("kill", {{"pid", "{{ pid }}"}, {"signal", "{{ sig }}"}, {"wait", "{{ wait }}"}}),
                              scope, {}, &ps, &err));
  CHECK(ps.rungs[0].action->text == "ratchet_kill --signal HUP --wait-ms 2000 pid 4242");
  // Text a template wrote: its digits are the number.
  REQUIRE(steps::prepare_step(step("kill", {{"pid", "{{ digits }}0"}}), scope, {}, &ps, &err));
  CHECK(ps.rungs[0].action->text == "ratchet_kill --signal TERM --wait-ms 5000 pid 770");
  // The literal rule, with the same words, at the key's place.
  CHECK_FALSE(steps::prepare_step(step("kill", {{"pid", "{{ one }}"}}), scope, {}, &ps, &err));
  CHECK(err == "test.toml:1:1: step `s`: `pid` 1 is init: ratchet never signals it (rendered from \"{{ one }}\")");
  CHECK_FALSE(steps::prepare_step(step("write", {{"path", "{{ sig }}"}, {"content", "x"}}), scope, {}, &ps, &err));
  CHECK(err == "test.toml:1:1: step `s`: `path` must be absolute, got \"hup\" (rendered from \"{{ sig }}\"); "
               "write the full path from /, such as \"/hup\": a relative path is expanded from the login's working directory on the host");
  CHECK_FALSE(steps::prepare_step(step("kill", {{"pid", 5}, {"signal", "{{ wait }}"}}), scope, {}, &ps, &err));
  CHECK(err.rfind("test.toml:1:1: step `s`: unknown signal `2s` (rendered from \"{{ wait }}\")", 0) == 0);
}

TEST_CASE("prepare: a rendered scope = \"user\" without `user` is refused as a literal one is", "[steps]") {
  Value scope = {{"where", "user"}, {"who", "alice"}};
  steps::PreparedStep ps;
  std::string err;
  CHECK_FALSE(steps::prepare_step(step("service", {{"unit", "gpujob"}, {"state", "stopped"}, {"scope", "{{ where }}"}}),
                                  scope, {}, &ps, &err));
  CHECK(err == "test.toml:1:1: step `s`: `scope = \"user\"` needs `user`: the user whose own systemd manager runs the "
               "unit; add user = \"NAME\", whose systemctl --user runs the unit");
  REQUIRE(steps::prepare_step(step("service", {{"unit", "gpujob"}, {"state", "stopped"}, {"scope", "{{ where }}"},
                                               {"user", "{{ who }}"}}),
                              scope, {}, &ps, &err));
  CHECK(ps.rungs[0].action->text == "ratchet_service --user alice stop gpujob");
}

TEST_CASE("process lines parse into holders", "[steps]") {
  auto h = steps::parse_process_line(
      "4242\troot\t123\t1796000000.50\tpython\tpython serve.py\tS\t-\t/dev/nvidia0\t/dev/nvidiactl");
  REQUIRE(h);
  CHECK(h->pid == 4242);
  CHECK(h->state == "S");
  CHECK(h->owner == steps::Owner{.kind = steps::OwnerKind::none});
  CHECK(h->start_ticks == 123);
  CHECK(h->started == "2026-11-30T00:53:20Z");
  CHECK(h->files == std::vector<std::string>({"/dev/nvidia0", "/dev/nvidiactl"}));
  // Each file is its own field, %-encoded: a name may hold " | ", a tab or a newline.
  h = steps::parse_process_line("7\troot\t1\t1.0\tc\ta\tR\t-\t/tmp/a | b%09c%0Ad%25e\t/tmp/x%zz%4");
  REQUIRE(h);
  CHECK(h->files == std::vector<std::string>({"/tmp/a | b\tc\nd%e", "/tmp/x%zz%4"}));
  CHECK(steps::decode_file("%41%2f%0a") == "A/\n");
  CHECK_FALSE(steps::parse_process_line("garbage"));
  auto all = steps::parse_process_lines("alive\t1\tu\t1\t1.0\tc\ta\tS\t-\t\nother\t2\tu\t1\t1.0\tc\ta\tS\t-\t\n", "alive");
  REQUIRE(all.size() == 1);
  CHECK(all[0].pid == 1);
}

TEST_CASE("prepare: a typed key cannot wait for a run-time value and a shell key cannot render blank", "[steps]") {
  Value scope = {{"empty", ""}, {"steps", Value::table()}};
  steps::PreparedStep ps;
  std::string err;
  steps::PrepareOptions plan;
  plan.plan = true;
  CHECK_FALSE(steps::prepare_step(step("kill", {{"pid", "{{ steps.find.stdout }}"}}), scope, plan, &ps, &err));
  CHECK(err == "test.toml:1:1: step `s`: `pid` must be known when the plan is made, and `steps.find.stdout` is known "
               "only when the run gets there; only text keys (command, pattern, holders_of, content, ...) may use "
               "steps.* and run.*");
  // A text key takes it: the plan shows the placeholder, the run its value.
  REQUIRE(steps::prepare_step(step("kill", {{"pid_file", "/run/{{ steps.find.stdout }}.pid"}}), scope, plan, &ps, &err));
  CHECK(ps.rungs[0].action->text == "ratchet_kill --signal TERM --wait-ms 5000 pid_file '/run/<steps.find.stdout>.pid'");
  // A path key still starts with / in the template: a placeholder is no path.
  CHECK_FALSE(steps::prepare_step(step("kill", {{"pid_file", "{{ steps.find.stdout }}"}}), scope, plan, &ps, &err));
  CHECK(err.find("`pid_file` must be known when the plan is made") != std::string::npos);
  CHECK_FALSE(steps::prepare_step(step("run", {{"command", "{{ empty }}"}}), scope, {}, &ps, &err));
  CHECK(err == "test.toml:1:1: step `s`: `command` is empty (rendered from \"{{ empty }}\")");
  // A rung's problem names the rung.
  auto s = step("verify", {{"file_exists", "/x"}});
  s.escalate = {testing::action_of({{"kind", "kill"}, {"pid", "{{ empty }}"}})};
  CHECK_FALSE(steps::prepare_step(s, scope, {}, &ps, &err));
  CHECK(err == "test.toml:1:1: rung 1 of step `s`: `pid` must be an integer, got \"\" (rendered from \"{{ empty }}\")");
}
