#include "playbook/template.h"

#include <catch2/catch.hpp>
#include <cstdio>

#include "steps/holders.h"

using namespace ratchet::playbook;

namespace {

const Value kHolders = Value::array({
    {{"pid", 4242},
     {"user", "root"},
     {"started", "2026-11-30T04:25:37Z"},
     {"cmdline", "python serve.py"},
     {"files", {"/dev/nvidia0", "/dev/nvidiactl"}}},
    {{"pid", 77},
     {"user", "ops"},
     {"started", "2026-11-30T05:00:00Z"},
     {"cmdline", {"nvidia-smi", "-l"}},
     {"files", {"/dev/nvidia1"}}},
});

Value scope() {
  return {{"unit", "inference"},
          {"n", 8},
          {"ratio", 1.5},
          {"whole", 3.0},
          {"on", true},
          {"devices", {"/dev/nvidia*", "/dev/nvidia-caps"}},
          {"cfg", {{"a", 1}, {"b", "x"}}},
          {"host", {{"name", "gpu-box"}, {"address", "192.0.2.10"}}},
          {"steps", {{"gpus_free", {{"status", "ok"}, {"rc", 0}, {"holders", kHolders}}}}}};
}

std::optional<Value> text(const std::string& t, std::string* err, bool plan = false) {
  return render(t, scope(), {RenderMode::text, plan}, err);
}

std::string shell(const std::string& t, const Value& s, bool plan = false) {
  std::string err;
  auto v = render(t, s, {RenderMode::shell, plan}, &err);
  INFO(err);
  REQUIRE(v);
  return v->as_string();
}

// Runs `cmd` through /bin/sh and returns its stdout.
std::string sh(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  CHECK(pclose(p) == 0);
  return out;
}

}  // namespace

TEST_CASE("an exact single reference keeps its type", "[playbook]") {
  std::string err;
  CHECK(*text("{{ devices }}", &err) == Value::array({"/dev/nvidia*", "/dev/nvidia-caps"}));
  CHECK(text("{{n}}", &err)->is_int());
  CHECK(*text("{{n}}", &err) == 8);
  CHECK(*text("{{   on }}", &err) == true);
  CHECK(*text("{{ cfg }}", &err) == Value({{"a", 1}, {"b", "x"}}));
  CHECK(*text("{{ host.name }}", &err) == "gpu-box");
  CHECK(*text("{{ steps.gpus_free.rc }}", &err) == 0);
  CHECK(*text("{{ devices.1 }}", &err) == "/dev/nvidia-caps");
  CHECK(*text(" {{ n }}", &err) == " 8");  // not exact: text
}

TEST_CASE("embedded values become text", "[playbook]") {
  std::string err;
  CHECK(*text("unit={{unit}} n={{ n }} on={{ on }} r={{ ratio }} w={{ whole }}", &err) ==
        "unit=inference n=8 on=true r=1.5 w=3.0");
  CHECK(*text("[{{ devices }}]", &err) == "[/dev/nvidia*, /dev/nvidia-caps]");
  CHECK(*text("cfg: {{ cfg }}", &err) == "cfg: {\"a\":1,\"b\":\"x\"}");
  CHECK(*text("no templates }} here", &err) == "no templates }} here");
  CHECK(*text("a {{ '{{' }} b }}", &err) == "a {{ b }}");
}

TEST_CASE("holders render one holder a line", "[playbook]") {
  CHECK(to_text(kHolders) ==
        "PID 4242 user root started 2026-11-30T04:25:37Z cmd: python serve.py files: "
        "/dev/nvidia0, /dev/nvidiactl\n"
        "PID 77 user ops started 2026-11-30T05:00:00Z cmd: nvidia-smi -l files: /dev/nvidia1");
  std::string err;
  CHECK(*text("Held by:\n{{ steps.gpus_free.holders }}\n", &err) ==
        "Held by:\n" + to_text(kHolders) + "\n");
  CHECK(to_text(Value::array({{{"pid", 9}}})) == "PID 9");
  // A device held through another node (steps/holders.h's `nodes`).
  ratchet::steps::Holder h{.pid = 5, .user = "root", .comm = "sleep", .cmdline = "sleep 9", .files = {"/dev/nvidia0"}};
  h.nodes = {{"/dev/nvidia0", "/dev/nvidia0", "4026532711", "195:0"}, {"/dev/nvidia0", "/tmp/n0", "", "195:0"}};
  CHECK(to_text(Value::array({ratchet::steps::to_value(h)})) ==
        "PID 5 user root cmd: sleep 9 files: /dev/nvidia0 (holds /dev/nvidia0 of mount namespace 4026532711: same "
        "device 195:0 as /dev/nvidia0) (holds /tmp/n0: same device 195:0 as /dev/nvidia0)");
  CHECK(to_text(Value::array({{{"name", "x"}}, 2})) == "{\"name\":\"x\"}, 2");
  CHECK(to_text(Value()) == "");
}

TEST_CASE("undefined references and bad syntax are errors", "[playbook]") {
  std::string err;
  CHECK_FALSE(text("{{ unti }}", &err));
  CHECK(err == "undefined variable `unti` (did you mean `unit`?)");
  CHECK_FALSE(text("x {{ steps.gpus_free.stauts }}", &err));
  CHECK(err ==
        "undefined variable `steps.gpus_free.stauts` (did you mean "
        "`steps.gpus_free.status`?)");
  CHECK_FALSE(text("{{ zzzzzz }}", &err));
  CHECK(err == "undefined variable `zzzzzz`");
  CHECK_FALSE(text("a {{ unit", &err));
  CHECK(err == "unclosed `{{`");
  CHECK_FALSE(text("a {{  }}", &err));
  CHECK(err == "empty `{{ }}`");
  CHECK_FALSE(text("{{ unit | upper }}", &err));
  CHECK(err == "`unit | upper` is not a variable name");
}

TEST_CASE("references are listed in order with their spans", "[playbook]") {
  std::string err;
  auto refs = template_refs("{{ unit }} {{steps.stop.status}} {{ '{{' }} {{ unit }}", &err);
  REQUIRE(refs);
  CHECK(*refs == std::vector<std::string>{"unit", "steps.stop.status", "unit"});
  auto spans = template_ref_spans("ab {{ x }}", &err);
  REQUIRE(spans);
  REQUIRE(spans->size() == 1);
  CHECK((*spans)[0].offset == 3);
  CHECK((*spans)[0].length == 7);
  size_t off = 0;
  CHECK_FALSE(template_ref_spans("ok {{ x }} then {{ y", &err, &off));
  CHECK(off == 16);
}

TEST_CASE("plan mode names values known only at run time", "[playbook]") {
  std::string err;
  CHECK(*text("{{ steps.later.stdout }}", &err, true) == "<steps.later.stdout>");
  CHECK(*text("started {{ run.started }}", &err, true) == "started <run.started>");
  CHECK(shell("echo {{ steps.x.stdout }} {{ unit }}", scope(), true) ==
        "echo <steps.x.stdout> inference");
  CHECK_FALSE(text("{{ nope }}", &err, true));  // plain vars must still exist
  CHECK(err == "undefined variable `nope`");
  CHECK_FALSE(text("{{ steps.later.stdout }}", &err, false));
}

TEST_CASE("shell mode quotes every value, arrays become quoted words", "[playbook]") {
  CHECK(shell("systemctl stop {{ unit }}", scope()) == "systemctl stop inference");
  CHECK(shell("ls {{ devices }}", scope()) == "ls '/dev/nvidia*' /dev/nvidia-caps");
  CHECK(shell("test {{ on }} = {{ n }}", scope()) == "test true = 8");
  CHECK(shell("x {{ e }}", Value({{"e", ""}})) == "x ''");
  CHECK(shell("x {{ e }}", Value({{"e", Value::array()}})) == "x ");
}

TEST_CASE("hostile values stay inert through /bin/sh", "[playbook]") {
  const std::vector<std::string> hostile = {"it's",
                                            "\"double\"",
                                            "$(touch /tmp/ratchet-pwned)",
                                            "`id`",
                                            "a; rm -rf /",
                                            "line1\nline2",
                                            "tab\there",
                                            "ünïcödé ✓",
                                            "$HOME",
                                            "*",
                                            "-n",
                                            "back\\slash",
                                            "'; echo injected; '",
                                            "",
                                            "a b  c"};
  for (const auto& v : hostile) {
    std::string cmd = shell("printf '[%s]' {{ v }}", Value({{"v", v}}));
    INFO(cmd);
    CHECK(sh(cmd) == "[" + v + "]");
  }
  Value arr = Value::array();
  std::string expect;
  for (const auto& v : hostile) {
    arr.push_back(v);
    expect += "[" + v + "]";
  }
  CHECK(sh(shell("printf '[%s]' {{ v }}", Value({{"v", arr}}))) == expect);
}

TEST_CASE("quoted templates in commands are found by a quote scanner", "[playbook]") {
  CHECK(quoted_template_offset("echo {{ x }}") == -1);
  CHECK(quoted_template_offset("echo '{{ x }}'") == 6);
  CHECK(quoted_template_offset("echo \"a {{ x }}\"") == 8);
  CHECK(quoted_template_offset("echo 'a' {{ x }} \"b\"") == -1);
  CHECK(quoted_template_offset("echo \"it\\\"s\" {{ x }}") == -1);  // escaped " inside "..."
  CHECK(quoted_template_offset("echo \\' {{ x }}") == -1);          // escaped ' outside quotes
  CHECK(quoted_template_offset("echo \"'\" {{ x }}") == -1);        // ' inside "..." opens nothing
  CHECK(quoted_template_offset("echo '\"' {{ x }} '{{ y }}'") == 18);
  CHECK(quoted_template_offset("echo {{ '{{' }} ok") == -1);
}

TEST_CASE("render_tree renders every string inside tables and arrays", "[playbook]") {
  std::string err;
  Value in = {{"paths", {"{{ devices }}", "/x/{{ unit }}"}}, {"n", "{{ n }}"}, {"k", 3}};
  auto out = render_tree(in, scope(), false, &err);
  REQUIRE(out);
  CHECK(*out ==
        Value({{"paths", {Value::array({"/dev/nvidia*", "/dev/nvidia-caps"}), "/x/inference"}},
               {"n", 8},
               {"k", 3}}));
  CHECK_FALSE(render_tree(Value::array({"{{ nope }}"}), scope(), false, &err));
  CHECK(err == "undefined variable `nope`");
}

TEST_CASE("templates inside a here-document body are found", "[playbook]") {
  CHECK(heredoc_template_offset("cat <<EOF\nvalue: {{ b }}\nEOF") == 17);
  CHECK(heredoc_template_offset("cat <<'EOF'\n{{ b }}\nEOF") == 12);
  CHECK(heredoc_template_offset("echo {{ b }} <<<x") == -1);
  CHECK(heredoc_template_offset("echo '<<' {{ b }}\nnext {{ c }}") == -1);
  CHECK(heredoc_template_offset("printf '%s\\n' {{ b }}") == -1);
}

TEST_CASE("templates where the shell would not honour their quotes are found", "[playbook]") {
  std::string why;
  // Found by a trial: `# {{ v }}` with a newline in v ran the next line as a command.
  CHECK(unsafe_template_offset("logger done  # previous said {{ steps.probe.stdout }}", &why) == 29);
  CHECK(why == "inside a shell comment (after #): a newline in the value would run as a command");
  CHECK(unsafe_template_offset("echo hi #{{ v }}", &why) == 9);
  CHECK(unsafe_template_offset("true;# {{ v }}", &why) == 7);
  CHECK(unsafe_template_offset("echo \\{{ v }}", &why) == 6);
  CHECK(why == "right after a backslash, which escapes the value's opening quote");
  CHECK(unsafe_template_offset("echo ${{ v }}", &why) == 6);
  CHECK(unsafe_template_offset("echo `echo {{ v }}`", &why) == 11);
  CHECK(why == "inside backquotes, where the shell reads quotes twice; use $(...)");
  // Fine: a # inside a word or in quotes, a comment on another line, $( ), \\ before a space.
  for (const char* ok : {"echo a#b {{ v }}", "echo '#' {{ v }}", "echo \"#\" {{ v }}", "echo ${#x} {{ v }}",
                         "# note\necho {{ v }}", "echo $(echo {{ v }})", "echo `date` {{ v }}",
                         "echo \\\\ {{ v }}", "echo $# {{ v }}"}) {
    INFO(ok);
    CHECK(unsafe_template_offset(ok, &why) == -1);
  }
}

TEST_CASE("quotes inside a shell comment quote nothing, and an escaped blank starts no comment", "[playbook]") {
  std::string why;
  // Found by a trial: an apostrophe in a comment flipped the quote state, so a
  // template inside real quotes passed (and ran its value as code).
  CHECK(quoted_template_offset("# the host's name:\necho '{{ v }}'\n# '\n") == 25);
  CHECK(heredoc_template_offset(": # '\ncat <<EOF # '\n{{ v }}\nEOF\n") == 20);
  // ... and the other way: a correct template after such a comment is no false error.
  CHECK(quoted_template_offset("# don't\necho {{ v }}") == -1);
  CHECK(unsafe_template_offset("# don't\necho {{ v }}", &why) == -1);
  // `\ #` is part of a word, not a comment: the backquote after it is real.
  CHECK(unsafe_template_offset("echo \\ #`\n: \\\\{{ v }}\n# `\n", &why) == 14);
  CHECK(why == "inside backquotes, where the shell reads quotes twice; use $(...)");
  // A line continuation joins the next line's # to the word before it.
  CHECK(unsafe_template_offset("echo a\\\n#`\necho {{ v }}`", &why) == 16);
}
