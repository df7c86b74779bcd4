// A fleet through the ratchet binary: 50 targets (aliases over 10 loopback sshd
// hosts and 2 real systemd hosts) in one run, groups of groups and group vars,
// plus a host that refuses connections: it is reported unreachable with its
// cause (exit 3) while every other host finishes.
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>

#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "support/systemd_fixture.h"
#include "transcript/reader.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

std::string host_entry(const std::string& name, int port, const std::string& key,
                       const std::string& known_hosts) {
  return fmt::format(
      "[hosts.{}]\naddress = \"127.0.0.1\"\nport = {}\nuser = \"root\"\nidentity = \"{}\"\n"
      "known_hosts = \"{}\"\n\n",
      name, port, key, known_hosts);
}

}  // namespace

TEST_CASE("fleet: 50 targets over 10 sshd and 2 systemd hosts, one refusing host", "[systemd][e2e][fleet]") {
  std::vector<std::unique_ptr<SshdHost>> plain;
  for (int i = 0; i < 10; ++i) plain.push_back(std::make_unique<SshdHost>());
  SystemdHost sd1, sd2;
  SystemdHost* sd[2] = {&sd1, &sd2};
  std::string dir = temp_dir("ratchet-fleet");
  // Where each alias writes: a directory of this test (plain hosts run on this machine).
  std::string base = fmt::format("/tmp/ratchet-fleet-out-{}", getpid());

  std::string inv;
  std::vector<std::string> plain_names, sd_names;
  std::map<std::string, int> on_sd;  // alias -> systemd host index
  for (int i = 0; i < 50; ++i) {
    std::string name = fmt::format("n{:02d}", i);
    int j = i % 12;
    if (j < 10) {
      inv += host_entry(name, plain[j]->port(), plain[j]->client_key(), plain[j]->known_hosts());
      plain_names.push_back(name);
    } else {
      inv += host_entry(name, sd[j - 10]->port(), sd[j - 10]->client_key(), sd[j - 10]->known_hosts());
      sd_names.push_back(name);
      on_sd[name] = j - 10;
    }
  }
  int dead_port = free_port();  // nothing listens there
  inv += host_entry("refuser", dead_port, plain[0]->client_key(), plain[0]->known_hosts());
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "\"" : ", \"") + x + "\"";
    return s;
  };
  inv += "[groups]\nplain = [" + list(plain_names) + "]\nsystemd = [" + list(sd_names) +
         "]\nfleet = [\"plain\", \"systemd\"]\n\n[group_vars.plain]\nflavour = \"sshd\"\n\n"
         "[group_vars.systemd]\nflavour = \"systemd\"\n";
  std::ofstream(dir + "/inv.toml") << inv;
  std::ofstream(dir + "/p.toml") << fmt::format(R"(name = "fleet"
targets = ["fleet", "refuser"]
[vars]
base = "{}"
flavour = "none"
[[step]]
id = "dir"
kind = "run"
command = "mkdir -p {{{{ base }}}}"
creates = "{{{{ base }}}}"
[[step]]
id = "mark"
kind = "write"
path = "{{{{ base }}}}/{{{{ host.name }}}}.txt"
content = "{{{{ host.name }}}} {{{{ flavour }}}}\n"
[[step]]
id = "seen"
kind = "verify"
file_exists = "{{{{ base }}}}/{{{{ host.name }}}}.txt"
)",
                                                 base);

  // `hosts` resolves the selection without connecting: 50 + the refuser.
  auto hosts = run_sh(std::string(RATCHET_BINARY) + " hosts " + dir + "/p.toml -i " + dir + "/inv.toml -F none --json");
  REQUIRE(hosts.code == 0);
  CHECK(json::parse(hosts.out).size() == 51);

  auto t0 = std::chrono::steady_clock::now();
  auto r = run_sh(std::string(RATCHET_BINARY) + " run " + dir + "/p.toml -i " + dir +
                  "/inv.toml -F none --forks 25 --json --transcript " + dir + "/t.jsonl");
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << fmt::format("fleet: 50 targets + 1 refusing host: wall {:.2f} s\n", secs);
  INFO(r.out << r.err);
  CHECK(r.code == 3);  // a host unreachable, no step failed

  json sum = json::parse(r.out);  // stdout is only the JSON summary
  CHECK(sum["exit_code"] == 3);
  CHECK(sum["status"] == "unreachable");
  REQUIRE(sum["hosts"].size() == 51);
  int ok = 0;
  for (const auto& h : sum["hosts"]) {
    INFO(h.dump());
    if (h["host"] == "refuser") {
      CHECK(h["status"] == "unreachable");
      CHECK(h["reason"].get<std::string>().find("connection refused") != std::string::npos);
      CHECK(h["cause"] == "refused");
      continue;
    }
    CHECK(h["status"] == "ok");
    CHECK(h["counts"]["failed"] == 0);
    ok += h["status"] == "ok";
  }
  CHECK(ok == 50);
  CHECK(r.err.find("RECAP") != std::string::npos);  // people read stderr

  // Each alias really ran on its machine, with its group's vars.
  for (const auto& n : plain_names) {
    std::ifstream in(base + "/" + n + ".txt");
    std::string line;
    std::getline(in, line);
    CHECK(line == n + " sshd");
  }
  for (int k = 0; k < 2; ++k) {
    std::string out;
    REQUIRE(sd[k]->ssh("cat " + base + "/*.txt | sort", &out) == 0);
    std::string want;
    for (const auto& [n, idx] : on_sd)
      if (idx == k) want += n + " systemd\n";
    CHECK(out == want);
  }

  // The transcript: one host_end per host, the refuser with its cause.
  auto t = ratchet::transcript::read_transcript(dir + "/t.jsonl");
  int ends = 0;
  for (const auto& e : t.events) {
    ends += e["event"] == "host_end";
    if (e["event"] == "unreachable") {
      CHECK(e["host"] == "refuser");
      CHECK(e["cause"] == "refused");
    }
  }
  CHECK(ends == 51);
  CHECK(t.events.back()["event"] == "run_end");
  run_sh("rm -rf " + base);
}

TEST_CASE("fleet: serial = 1, max_fail = \"10%\" over 5 hosts, the first failing: one batch runs, 4 hosts skipped",
          "[ssh][e2e][fleet]") {
  SshdHost sshd;  // five inventory names for one loopback sshd
  std::string dir = temp_dir("ratchet-max-fail");
  std::string inv;
  for (int i = 1; i <= 5; ++i) {
    inv += host_entry(fmt::format("h{}", i), sshd.port(), sshd.client_key(), sshd.known_hosts());
    if (i == 1) inv += "vars = { code = 1 }\n\n";  // the canary, first in the inventory, fails
  }
  std::ofstream(dir + "/inv.toml") << inv;
  const std::string head = "name = \"canary\"\nmax_fail = \"10%\"\n";
  const std::string steps = fmt::format(R"([vars]
code = 0
[[step]]
id = "mark"
kind = "run"
command = "touch {}/{{{{ host.name }}}}.ran; exit {{{{ code }}}}"
)",
                                        dir);
  const std::string bin = std::string(RATCHET_BINARY);
  const std::string sel = " -i " + dir + "/inv.toml -F none";

  // Without serial: refused by validate (and so by plan and run), at max_fail's place.
  std::ofstream(dir + "/noserial.toml") << head << steps;
  auto v = run_sh(bin + " validate " + dir + "/noserial.toml" + sel);
  CHECK(v.code == 2);
  CHECK(v.err.find(dir + "/noserial.toml:2:12: error: `max_fail` is checked between batches; set `serial`") !=
        std::string::npos);

  std::ofstream(dir + "/p.toml") << head << "serial = 1\n" << steps;
  // plan says what the thresholds are in hosts.
  auto plan = run_sh(bin + " plan " + dir + "/p.toml" + sel);
  INFO(plan.out << plan.err);
  REQUIRE(plan.code == 0);
  CHECK(plan.out.find("\nserial 1: 5 batches of 1 host\n") != std::string::npos);
  CHECK(plan.out.find("\nmax_fail 10% of 5 hosts = 0: the first failed host stops later batches\n") !=
        std::string::npos);

  auto r = run_sh(bin + " run " + dir + "/p.toml" + sel + " --json --transcript " + dir + "/t.jsonl");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  json sum = json::parse(r.out);
  REQUIRE(sum["hosts"].size() == 5);
  CHECK(sum["hosts"][0]["host"] == "h1");
  CHECK(sum["hosts"][0]["status"] == "failed");
  for (int i = 1; i < 5; ++i) {
    INFO(sum["hosts"][i].dump());
    CHECK(sum["hosts"][i]["status"] == "skipped");
    CHECK(sum["hosts"][i]["reason"] == "not run: 1 host(s) failed, more than max_fail = 0");
  }
  // Exactly one batch started, and only its host ran the step.
  auto t = ratchet::transcript::read_transcript(dir + "/t.jsonl");
  int batches = 0, step_starts = 0;
  for (const auto& e : t.events) {
    batches += e["event"] == "batch_start";
    step_starts += e["event"] == "step_start";
  }
  CHECK(batches == 1);
  CHECK(step_starts == 1);
  CHECK(std::ifstream(dir + "/h1.ran").good());
  for (int i = 2; i <= 5; ++i) CHECK_FALSE(std::ifstream(dir + fmt::format("/h{}.ran", i)).good());
  run_sh("rm -rf " + dir);
}
