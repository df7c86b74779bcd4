// plan::plan_json / decode_file: the plan file round-trips every field the
// engine runs, carries its own digest, and refuses what is not one.
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>

#include "plan/build.h"
#include "plan/codec.h"
#include "playbook/loader.h"
#include "support/scratch_dir.h"

using namespace ratchet;
using nlohmann::json;

namespace {

// A plan of one host for a playbook with every kind, rungs and a file.
plan::Plan sample_plan(const testing::ScratchDir& dir) {
  std::ofstream(dir.path + "/n.tmpl") << "notes for {{ host.name }}: {{ steps.stop.status }}\n";
  std::ofstream(dir.path + "/inference.service") << "[Service]\nExecStart=/bin/true\n";
  std::ofstream(dir.path + "/pb.toml") << R"(name = "sample"
serial = 2
max_fail = "50%"
[vars]
unit = "inference.service"
[[step]]
id = "stop"
kind = "service"
unit = "{{ unit }}"
state = "stopped"
unit_file = "inference.service"
[[step]]
id = "kill"
kind = "kill"
pid_file = "/run/x.pid"
wait = "3s"
on_failure = "continue"
become = true
[[step.escalate]]
kind = "kill"
pid_file = "/run/x.pid"
signal = "KILL"
settle = "1s"
[[step]]
id = "free"
kind = "verify"
no_holders = "/dev/nvidia0"
retries = 2
[[step]]
id = "cmd"
kind = "run"
command = "printf '%s\n' {{ unit }}"
check = "test -e /tmp/done"
stdin = "bytes on stdin\n"
[[step]]
id = "notes"
kind = "write"
path = "/root/notes.md"
template = "n.tmpl"
[[step]]
id = "boot"
kind = "reboot"
test_command = "systemctl is-system-running"
)";
  std::vector<playbook::LoadError> errors;
  auto pb = playbook::load_playbook(dir.path + "/pb.toml", {}, &errors);
  for (const auto& e : errors) FAIL_CHECK(playbook::format_error(e));
  REQUIRE(pb);
  plan::Plan P;
  P.playbook_name = pb->name;
  P.policy = pb->policy;
  P.made = {"2026-12-01T12:00:00Z", 1796126400, "ops@laptop", "0.4.0", "abc"};
  P.selection.inventory = "inv.toml";
  P.selection.extra_vars = {{"unit", "inference.service"}};
  P.sources = {{"playbook", "", pb->path, pb->sha256}};
  for (const auto& [name, f] : pb->files) P.sources.push_back({f.role, name, f.path, f.sha256});
  P.secrets = {{"token", "env:TOKEN"}};
  playbook::Host h;
  h.name = "gpu-box";
  playbook::Value scope = {{"unit", "inference.service"}, {"host", {{"name", "gpu-box"}}}, {"steps", playbook::Value::table()}};
  plan::HostPlan hp;
  std::vector<std::string> perr;
  REQUIRE(plan::plan_host(*pb, h, scope, &hp, &perr));
  hp.endpoint = {"127.0.0.1", 2222, "root", "", "/k", "nc %h %p", true, {"SHA256:abc"}};
  P.hosts.push_back(hp);
  return P;
}

}  // namespace

TEST_CASE("plan file: every field round-trips and the digest covers the whole document", "[plan]") {
  testing::ScratchDir dir("ratchet-codec");
  plan::Plan P = sample_plan(dir);
  // A stdin that is not UTF-8 survives (base64 in the file).
  P.hosts[0].steps[3].prepared.rungs[0].action->stdin_data = std::string("\xff\xfe raw\n", 7);
  P.hosts[0].guards.lock = true;
  P.hosts[0].guards.lock_path = "/run/lock/lab.lock";
  P.hosts[0].guards.audit_log = "";
  std::string text = plan::encode_file(P);
  std::string err;
  auto back = plan::decode_file(text, &err);
  INFO(err);
  REQUIRE(back);
  CHECK(plan::encode_file(*back) == text);  // nothing lost, nothing added
  const auto& steps = back->hosts[0].steps;
  REQUIRE(steps.size() == 6);
  CHECK(steps[0].prepared.rungs[0].check.size() == 1);
  CHECK(steps[1].become);
  CHECK(steps[1].become_shown == "root");
  CHECK(steps[1].on_failure == playbook::OnFailure::cont);
  CHECK(steps[1].prepared.rungs.size() == 2);
  CHECK(steps[1].prepared.rungs[1].settle == util::Millis(1000));
  CHECK(steps[1].rung_facts[0].wait == util::Millis(3000));
  CHECK(steps[2].prepared.rungs[0].retries == 2);
  CHECK(steps[3].prepared.rungs[0].action->stdin_data == std::string("\xff\xfe raw\n", 7));
  CHECK(steps[3].runtime_refs.empty());
  CHECK(steps[4].runtime_refs == std::vector<std::string>{"steps.stop.status"});
  CHECK(steps[5].prepared.rungs[0].after.size() == 2);
  CHECK(steps[5].prepared.rungs[0].reboot_timeout.count() > 0);
  CHECK(back->policy.serial.value == 2);
  CHECK(back->policy.max_fail.percent);
  CHECK(back->hosts[0].endpoint.known_keys == std::vector<std::string>{"SHA256:abc"});
  CHECK(back->hosts[0].endpoint.proxy == "nc %h %p");
  CHECK(back->hosts[0].endpoint.identities_only);
  CHECK(back->hosts[0].guards.lock);
  CHECK(back->hosts[0].guards.lock_path == "/run/lock/lab.lock");
  CHECK(back->hosts[0].guards.audit_log.empty());
  CHECK(back->secrets.at("token") == "env:TOKEN");
  CHECK(back->selection.extra_vars.at(0).second == "inference.service");
  // The digest is of the document itself.
  json doc = json::parse(text);
  CHECK(doc["digest"] == plan::digest_of(doc));
  CHECK(doc["format"] == "ratchet-plan");
  CHECK(doc["version"] == 1);
}

TEST_CASE("plan file: an edit, a truncation, a foreign file or another format version is refused", "[plan]") {
  testing::ScratchDir dir("ratchet-codec-bad");
  std::string text = plan::encode_file(sample_plan(dir));
  std::string err;
  json doc = json::parse(text);
  {
    json edited = doc;
    edited["hosts"][0]["steps"][0]["commands"][0]["command"] = "rm -rf /";
    CHECK_FALSE(plan::decode_file(edited.dump(2), &err));
    CHECK(err.find("the plan file was edited after it was made: it says digest " + doc["digest"].get<std::string>() +
                   " but its content hashes to ") == 0);
  }
  CHECK_FALSE(plan::decode_file(text.substr(0, text.size() / 2), &err));
  CHECK(err.find("not one JSON object") != std::string::npos);
  CHECK_FALSE(plan::decode_file("{\"format\": \"terraform\"}", &err));
  CHECK(err.find("not a ratchet plan file") == 0);
  {
    json v2 = doc;
    v2["version"] = 2;
    v2["digest"] = plan::digest_of(v2);
    CHECK_FALSE(plan::decode_file(v2.dump(), &err));
    CHECK(err == "plan file format version 2 is not 1, the one this ratchet reads: make the plan again");
  }
  {
    json missing = doc;  // digest recomputed: well-formed but a field is gone
    missing["hosts"][0]["steps"][0].erase("timeout_ms");
    missing["digest"] = plan::digest_of(missing);
    CHECK_FALSE(plan::decode_file(missing.dump(), &err));
    CHECK(err == "the plan file is malformed: host gpu-box (step stop): `timeout_ms` is missing");
  }
  CHECK(plan::looks_like_plan(text));
  CHECK_FALSE(plan::looks_like_plan("name = \"x\"\n"));
}

TEST_CASE("plan file: a role or judge or kind this ratchet does not know is malformed", "[plan]") {
  testing::ScratchDir dir("ratchet-codec-enums");
  const json doc = json::parse(plan::encode_file(sample_plan(dir)));
  // Sets `*at` (a member of step `stop`) to `v`, digest recomputed, and returns the error.
  auto decode_with = [&doc](const char* pointer, const char* v) {
    json edited = doc;
    edited[json::json_pointer(std::string("/hosts/0/steps/0") + pointer)] = v;
    edited["digest"] = plan::digest_of(edited);
    std::string err;
    CHECK_FALSE(plan::decode_file(edited.dump(), &err));
    return err;
  };
  CHECK(doc["hosts"][0]["steps"][0]["commands"][0]["role"] == "check");
  CHECK(doc["hosts"][0]["steps"][0]["commands"][0]["judge"] == "service");
  CHECK(decode_with("/commands/0/role", "probe") ==
        "the plan file is malformed: host gpu-box (step stop) command: `role` is `probe`, not one of check, action, "
        "become_probe");
  CHECK(decode_with("/commands/0/judge", "exit1") ==
        "the plan file is malformed: host gpu-box (step stop) command: `judge` is `exit1`, not one of exit0, exit, "
        "holders, absent, matches, service, write, kill, kill_action, gpus, copy");
  CHECK(decode_with("/kind", "shell") ==
        "the plan file is malformed: host gpu-box (step stop): `kind` is `shell`, not one of run, service, kill, "
        "verify, write, copy, fetch, reboot");
  CHECK(decode_with("/rungs/0/kind", "Service") ==
        "the plan file is malformed: host gpu-box (step stop) rung: `kind` is `Service`, not one of run, service, "
        "kill, verify, write, copy, fetch, reboot");
  // A role it knows, but not one a plan holds.
  CHECK(decode_with("/commands/0/role", "become_probe") ==
        "the plan file is malformed: host gpu-box (step stop): unexpected command of role `become_probe` in rung 0");
}

TEST_CASE("plan file: a forged file with a valid digest is refused when it holds what the encoder never writes",
          "[plan]") {
  testing::ScratchDir dir("ratchet-codec-forged");
  const json doc = json::parse(plan::encode_file(sample_plan(dir)));
  auto forged = [&](const std::function<void(json&)>& edit) {
    json d = doc;
    edit(d);
    d["digest"] = plan::digest_of(d);
    std::string err;
    CHECK_FALSE(plan::decode_file(d.dump(2), &err));
    return err;
  };
  const std::string would_not = "the plan file holds what this ratchet would not write";
  // The file shows one stdin, the decoder would read the other.
  CHECK(forged([](json& d) {
          auto& c = d["hosts"][0]["steps"][3]["commands"][1];
          c["stdin_b64"] = "ZWNobyBQV05FRAo=";
        }).find(would_not) == 0);
  CHECK(forged([](json& d) { d["hosts"][0]["steps"][0]["note"] = "an unknown member"; }).find(would_not) == 0);
  CHECK(forged([](json& d) { d["hosts"][0]["port"] = 2222 + (1LL << 32); }).find(would_not) == 0);
  CHECK(forged([](json& d) { d["path"] = "/elsewhere/pb.toml"; }).find(would_not + " (at `path`") == 0);
  CHECK(forged([](json& d) { d["sha256"] = std::string(64, '0'); }).find(would_not + " (at `sha256`") == 0);
  CHECK(forged([](json& d) { d["hosts"][0]["steps"][2]["commands"][0]["stdout_matches"] = "x"; }).find(would_not) == 0);
  // Duplicate keys: a reviewer's tool may read the first, a decoder the last.
  std::string text = plan::encode_file(sample_plan(dir));
  size_t at = text.find("\"playbook\": ");
  REQUIRE(at != std::string::npos);
  text.insert(at, "\"playbook\": \"decoy\",\n  ");
  std::string err;
  CHECK_FALSE(plan::decode_file(text, &err));
  CHECK(err == "not a plan file `ratchet plan --out` wrote: the key `playbook` appears twice in one object");
  // Deep nesting is refused while parsing, not by running out of stack.
  std::string deep = "{\"format\": \"ratchet-plan\", \"vars\": " + std::string(20000, '[') + std::string(20000, ']') + "}";
  CHECK_FALSE(plan::decode_file(deep, &err));
  CHECK(err == "not a plan file `ratchet plan --out` wrote: it nests deeper than 64 levels");
}
