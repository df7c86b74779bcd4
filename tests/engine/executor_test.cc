#include <catch2/catch.hpp>

#include "engine/executor.h"
#include "steps/library.h"
#include "support/local_proc.h"
#include "support/scripted_transport.h"
#include "transport/wire.h"
#include "transcript/reader.h"
#include "util/hash.h"
#include "util/text.h"

#include <fstream>
#include <map>

using namespace ratchet;

TEST_CASE("executor: the library is sent, the transcript names it by hash, events in order", "[engine]") {
  testing::ScriptedTransport t;
  std::string path = testing::temp_dir("ratchet-exec") + "/t.jsonl";
  {
    transcript::Writer w(path);
    w.add_secret("s3cret-value");
    engine::Executor ex(t, w, "h1");
    ex.set_step("free", false, "", 4096);
    steps::Command c;
    c.role = steps::Role::check;
    c.text = "ratchet_no_holders -- /dev/nvidia0";
    c.timeout = util::Millis(5000);
    t.push(1, "holder\tline\n", "");
    auto r = ex.run(c, 2, "the s3cret-value on stdin");
    CHECK(r.exit_code == 1);
  }
  REQUIRE(t.requests.size() == 1);
  const auto& req = t.requests[0];
  CHECK(req.script == "ratchet_no_holders -- /dev/nvidia0");  // as the step asked, unwrapped
  CHECK(req.library == &steps::wire_library());                // the library travels with it
  CHECK(transport::wire_form(req).stdin_data.find("ratchet_no_holders()") != std::string::npos);
  CHECK(req.capture == 4096);
  CHECK(req.host_timeout.count() == 5000);
  CHECK(req.timeout.count() == 8000);  // + client grace
  CHECK(req.stdin_data == "the s3cret-value on stdin");

  auto tr = transcript::read_transcript(path);
  REQUIRE(tr.events.size() == 3);
  CHECK(tr.events[0]["event"] == "command");
  CHECK(tr.events[0]["rung"] == 2);
  CHECK(tr.events[0]["command"] == "ratchet_no_holders -- /dev/nvidia0");
  std::string sent = tr.events[0]["sent"];
  CHECK(sent == transport::sent_form(req));  // what the transport would send, library by reference
  CHECK(sent.find("# <ratchet host library, sha256 " + steps::host_library_sha256()) != std::string::npos);
  CHECK(sent.find("ratchet_no_holders()") == std::string::npos);
  CHECK(tr.events[0]["stdin"] == "***");  // holds a secret: no digest either
  CHECK_FALSE(tr.events[0].contains("stdin_sha256"));
  CHECK(tr.events[1]["event"] == "output");
  CHECK(tr.events[1]["data"] == "holder\tline\n");
  CHECK(tr.events[2]["event"] == "exit");
  CHECK(tr.events[2]["code"] == 1);
}

TEST_CASE("executor: a secret on a command line is refused, output is masked before base64", "[engine]") {
  testing::ScriptedTransport t;
  std::string path = testing::temp_dir("ratchet-exec") + "/t.jsonl";
  {
    transcript::Writer w(path);
    w.add_secret("S3cr3t");
    engine::Executor ex(t, w, "h1");
    steps::Command c;
    c.role = steps::Role::action;
    c.text = "echo token=S3cr3t";
    auto r = ex.run(c, 0, "");
    CHECK(r.error == "refused: the command would carry a secret on its command line (pass it on stdin)");
    CHECK(t.requests.empty());  // nothing was sent
    c.text = "cat";
    t.push(0, std::string("pre S3cr3t \xff\n"), "");
    ex.run(c, 0, "S3cr3t");
  }
  std::ifstream in(path);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  CHECK(all.find("S3cr3t") == std::string::npos);
  auto tr = transcript::read_transcript(path);
  bool b64 = false;
  for (const auto& e : tr.events)
    if (e["event"] == "output") b64 = e["data_b64"] == util::base64(std::string("pre *** \xff\n"));
  CHECK(b64);
}

TEST_CASE("executor: a command with a NUL is refused, not sent - one over MAX_ARG_STRLEN travels on stdin",
          "[engine]") {
  testing::ScriptedTransport t;
  std::string path = testing::temp_dir("ratchet-exec") + "/t.jsonl";
  {
    transcript::Writer w(path);
    engine::Executor ex(t, w, "h1");
    steps::Command c;
    c.role = steps::Role::check;
    c.text = std::string("echo a\0b", 8);
    auto r = ex.run(c, 0, "");
    CHECK(r.error == "refused: the command holds a NUL byte, which no shell command line can carry (pass the "
                     "value on stdin)");
    CHECK(t.requests.empty());  // nothing was sent
    // The command travels on stdin (wire.h): no argument limit without become.
    c.text = "test -n " + std::string(140000, 'A');
    t.push(0, "", "");
    CHECK(ex.run(c, 0, "").error.empty());
    CHECK(t.requests.size() == 1);
  }
  auto tr = transcript::read_transcript(path);
  int refused = 0;
  for (const auto& e : tr.events) refused += e["event"] == "exit" && e.contains("error");
  CHECK(refused == 1);  // the refusal is on record, after its command event
}

TEST_CASE("executor: become probes sudo -n once, a password goes first on stdin only when needed", "[engine]") {
  testing::ScriptedTransport t;
  std::string path = testing::temp_dir("ratchet-become") + "/t.jsonl";
  const std::string pw = "hunter2-pw";
  steps::Command c;
  c.role = steps::Role::action;
  c.text = "id -u";
  c.timeout = util::Millis(5000);
  SECTION("NOPASSWD: sudo -n, stdin untouched") {
    transcript::Writer w(path);
    engine::Executor ex(t, w, "h1");
    ex.set_become_password(&pw);
    ex.set_step("s", true, "");
    t.push(0);            // sudo -n true
    t.push(0, "0\n");     // the command
    t.push(0, "0\n");     // again: no second probe
    CHECK(ex.run(c, 0, "data").exit_code == 0);
    CHECK(ex.run(c, 0, "").exit_code == 0);
    REQUIRE(t.requests.size() == 3);
    // The probe runs sudo in the C locale (its messages are read); commands keep theirs.
    const auto& probe = t.requests[0];
    CHECK(probe.script == "true");
    CHECK((probe.become.enabled && probe.become.user.empty() && !probe.become.password && probe.become.c_locale));
    CHECK(probe.host_timeout.count() == 15'000);
    const auto& cmd = t.requests[1];
    CHECK((cmd.become.enabled && !cmd.become.password && !cmd.become.c_locale));
    CHECK(cmd.become_password.empty());  // sudo -n: the password never travels
    CHECK(cmd.stdin_data == "data");
    // After the go line: the command (the payload), then its input.
    const std::string sent = transport::wire_form(cmd).stdin_data;
    CHECK(sent.substr(sent.size() - 4) == "data");
    CHECK(sent.substr(0, sent.size() - 4).rfind(transport::kPayloadEnd) ==
          sent.size() - 4 - transport::kPayloadEnd.size());
  }
  SECTION("password needed: checked once with sudo -S, then every command gets it first") {
    {
      transcript::Writer w(path);
      w.add_secret(pw);
      engine::Executor ex(t, w, "h1");
      ex.set_become_password(&pw);
      ex.set_step("s", true, "app");
      t.push(1, "", "sudo: a password is required\n");
      t.push(0);           // sudo -S true with the password
      t.push(0, "1001\n");
      CHECK(ex.ensure_become(0).empty());
      CHECK(ex.run(c, 0, "payload").exit_code == 0);
    }
    REQUIRE(t.requests.size() == 3);
    const auto& probe = t.requests[0];
    CHECK((probe.become.enabled && probe.become.user == "app" && !probe.become.password && probe.become.c_locale));
    CHECK(probe.stdin_data.empty());
    CHECK(probe.become_password.empty());
    const auto& check = t.requests[1];
    CHECK((check.become.user == "app" && check.become.password && check.become.c_locale));
    CHECK(check.become_password == pw);
    CHECK(check.stdin_data.empty());
    const auto& cmd = t.requests[2];
    CHECK((cmd.become.user == "app" && cmd.become.password && !cmd.become.c_locale));
    CHECK(cmd.become_password == pw);
    CHECK(cmd.stdin_data == "payload");  // the command's own input; the password goes first on the wire
    // After the go line: the command (the payload), sudo's password line, then the input.
    const std::string sent = transport::wire_form(cmd).stdin_data;
    const std::string tail = std::string(transport::kPayloadEnd) + pw + "\npayload";
    CHECK(sent.substr(sent.size() - tail.size()) == tail);
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text.find(pw) == std::string::npos);
    CHECK(text.find("\"become_password\":true") != std::string::npos);
    CHECK(text.find("\"role\":\"become_probe\"") != std::string::npos);
  }
  SECTION("password needed but none given: a clear reason, nothing else sent") {
    transcript::Writer w;
    engine::Executor ex(t, w, "h1");
    ex.set_step("s", true, "");
    t.push(1, "", "sudo: a password is required\n");
    auto r = ex.run(c, 0, "");
    CHECK(r.error.find("become: sudo asks for a password to run as root; give --ask-become-pass") == 0);
    CHECK(t.requests.size() == 1);
    CHECK(ex.run(c, 0, "").error == r.error);  // cached: no second probe
    CHECK(t.requests.size() == 1);
  }
  SECTION("a wrong password: rejected clearly, the password masked in the reason") {
    transcript::Writer w;
    w.add_secret(pw);
    engine::Executor ex(t, w, "h1");
    ex.set_become_password(&pw);
    ex.set_step("s", true, "");
    t.push(1, "", "sudo: a password is required\n");
    t.push(1, "", "Sorry, try again.\nsudo: no password was provided (echo hunter2-pw)\n");
    std::string why = ex.ensure_become(0);
    CHECK(why == "become: sudo rejected the become password (to run as root): Sorry, try again.; "
                 "sudo: no password was provided (echo ***)");
    CHECK(t.requests.size() == 2);
  }
  SECTION("sudo refuses for another reason: its message") {
    transcript::Writer w;
    engine::Executor ex(t, w, "h1");
    ex.set_step("s", true, "");
    t.push(1, "", "sudo: unknown user nobody2\n");
    CHECK(ex.ensure_become(0) ==
          "become: `sudo -n -H -- /bin/sh -c ...` to run as root failed (exit 1): sudo: unknown user nobody2");
  }
}

TEST_CASE("executor: the become password masks only once sent, and never refuses a command", "[engine]") {
  testing::ScriptedTransport t;
  std::string path = testing::temp_dir("ratchet-become-mask") + "/t.jsonl";
  const std::string pw = "ratchet";  // a weak password that is also a word of every library call
  steps::Command c;
  c.role = steps::Role::check;
  c.text = "ratchet_stat /etc/motd";
  c.timeout = util::Millis(5000);
  SECTION("NOPASSWD: never sent, nothing masked") {
    {
      transcript::Writer w(path);
      engine::Executor ex(t, w, "h1");
      ex.set_become_password(&pw);
      ex.set_step("s", true, "");
      t.push(0);
      t.push(0, "ok\n");
      CHECK(ex.run(c, 0, "").exit_code == 0);
    }
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text.find("ratchet_stat /etc/motd") != std::string::npos);
    CHECK(text.find("***") == std::string::npos);
  }
  SECTION("password sent: masked from then on, the command still runs") {
    {
      transcript::Writer w(path);
      engine::Executor ex(t, w, "h1");
      ex.set_become_password(&pw);
      ex.set_step("s", true, "");
      t.push(1, "", "sudo: a password is required\n");
      t.push(0);
      t.push(0, "ok\n");
      auto r = ex.run(c, 0, "");
      CHECK(r.error.empty());
      CHECK(r.exit_code == 0);
    }
    REQUIRE(t.requests.size() == 3);
    CHECK(t.requests[2].become.password);
    CHECK(t.requests[2].become_password == pw);
    CHECK(t.requests[2].stdin_data.empty());
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text.find("\"command\":\"***_stat /etc/motd\"") != std::string::npos);
  }
}

TEST_CASE("executor: the transport is given a typed command with script and become and deadlines and stdin and run id",
          "[engine]") {
  testing::ScriptedTransport t;
  std::string path = testing::temp_dir("ratchet-typed") + "/t.jsonl";
  std::atomic<bool> stop{false};
  {
    transcript::Writer w(path);
    engine::Executor ex(t, w, "h1", &stop);
    ex.set_step("s", false, "", 2048);
    steps::Command c;
    c.role = steps::Role::action;
    c.text = "printf '%s' \"$1\" | sha256sum";
    c.timeout = util::Millis(7000);
    t.push(0, "ok\n");
    t.push(0, "ok\n");
    CHECK(ex.run(c, 1, "in put").exit_code == 0);
    CHECK(ex.run(c, 1, "").exit_code == 0);
  }
  REQUIRE(t.requests.size() == 2);
  const auto& req = t.requests[0];
  CHECK(req.script == "printf '%s' \"$1\" | sha256sum");
  CHECK(req.library == &steps::wire_library());  // set, though this script calls none of it
  CHECK(req.stdin_data == "in put");
  CHECK_FALSE(req.become.enabled);
  CHECK(req.become_password.empty());
  CHECK(req.host_timeout.count() == 7000);
  CHECK(req.timeout == transport::client_deadline(util::Millis(7000)));
  CHECK(req.capture == 2048);
  CHECK(req.cancel == &stop);
  CHECK(req.drain_grace == transport::kDrainGrace);
  CHECK(transport::valid_run_id(req.run_id));
  CHECK(t.requests[1].run_id != req.run_id);  // a new id for every command
  CHECK(t.requests[1].stdin_data.empty());
  auto tr = transcript::read_transcript(path);
  REQUIRE(tr.events.size() >= 1);
  CHECK(tr.events[0]["sent"] == transport::sent_form(req));
  CHECK(tr.events[0]["sent"].get<std::string>().find(req.run_id) != std::string::npos);
}

TEST_CASE("executor: without a library (ratchet exec) the script goes alone even when it names ratchet_",
          "[engine]") {
  testing::ScriptedTransport t;
  transcript::Writer w;
  engine::Executor ex(t, w, "h1");
  ex.set_step("exec", false, "");
  ex.set_library(nullptr);
  steps::Command c;
  c.role = steps::Role::action;
  c.text = "ratchet_kill 1";
  t.push(0);
  ex.run(c, 0, "");
  REQUIRE(t.requests.size() == 1);
  CHECK(t.requests[0].library == nullptr);
  CHECK(transport::wire_form(t.requests[0]).command.find("ratchet_kill()") == std::string::npos);
}

TEST_CASE("executor: connect records connect (with via) or unreachable (with the methods tried)", "[engine]") {
  struct Door : testing::ScriptedTransport {
    std::optional<transport::ConnectError> fail;
    std::optional<transport::ConnectError> connect(transport::ConnectInfo* info) override {
      if (fail) return fail;
      info->address = "10.0.0.5";
      info->port = 2222;
      info->user = "ops";
      info->fingerprint = "SHA256:abc";
      info->auth_method = "publickey (agent)";
      info->via = {"j@bastion:22"};
      info->ms = 42;
      return std::nullopt;
    }
  };
  std::string path = testing::temp_dir("ratchet-connect") + "/t.jsonl";
  {
    transcript::Writer w(path);
    Door ok;
    engine::Executor a(ok, w, "h1");
    transport::ConnectInfo info;
    CHECK_FALSE(a.connect(&info));
    CHECK(info.address == "10.0.0.5");
    Door down;
    down.fail = transport::ConnectError{transport::FailureKind::auth, "h2: auth failed", {"publickey (agent)"}};
    engine::Executor b(down, w, "h2");
    CHECK(b.connect(&info)->message == "h2: auth failed");
  }
  auto tr = transcript::read_transcript(path);
  REQUIRE(tr.events.size() == 2);
  auto c = tr.events[0];
  CHECK(c["event"] == "connect");
  CHECK(c["host"] == "h1");
  CHECK(c["address"] == "10.0.0.5");
  CHECK(c["port"] == 2222);
  CHECK(c["user"] == "ops");
  CHECK(c["fingerprint"] == "SHA256:abc");
  CHECK(c["auth_method"] == "publickey (agent)");
  CHECK(c["ms"] == 42);
  CHECK(c["via"] == nlohmann::json::array({"j@bastion:22"}));
  CHECK_FALSE(c.contains("after_reboot"));
  auto u = tr.events[1];
  CHECK(u["event"] == "unreachable");
  CHECK(u["cause"] == "auth");
  CHECK(u["message"] == "h2: auth failed");
  CHECK(u["methods_tried"] == nlohmann::json::array({"publickey (agent)"}));
}
