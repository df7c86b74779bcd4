// `ratchet report` end to end: a real run on the loopback sshd writes a
// transcript, the report is made of it (by `run --report` or `ratchet report`)
// and checked in headless Chromium (tests/report/browser/check_report.js,
// puppeteer-core on Debian's /usr/bin/chromium): every host and step with its
// status, no request beyond the page's own file, no console error, and no
// script from host output ever runs. Chromium, node or the node modules
// missing is a failure, not a skip: scripts/setup.sh test installs them.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

const std::string kBrowserDir = std::string(RATCHET_SOURCE_DIR) + "/tests/report/browser";

void require_browser() {
  INFO(
      "the browser test needs Debian's chromium, node and `npm ci` in tests/report/browser: run "
      "scripts/setup.sh test");
  REQUIRE(::access("/usr/bin/chromium", X_OK) == 0);
  REQUIRE(run_sh("command -v node").code == 0);
  REQUIRE(::access((kBrowserDir + "/node_modules/puppeteer-core/package.json").c_str(), R_OK) == 0);
}

/// check_report.js on `page` made of `transcript`; its JSON verdict (CHECKed ok).
json check_in_browser(const std::string& page, const std::string& transcript,
                      const std::string& png, const std::string& extra = "") {
  require_browser();
  auto r = run_sh(fmt::format(
      "cd '{}' && node check_report.js --page '{}' --transcript '{}' --screenshot '{}' {}",
      kBrowserDir, page, transcript, png, extra));
  INFO(r.out << r.err);
  auto last = r.out.substr(0, r.out.find_last_not_of('\n') + 1);
  last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
  json v = json::parse(last, nullptr, false);
  REQUIRE(v.is_object());
  CHECK(v["problems"] == json::array());
  CHECK(r.code == 0);
  CHECK(::access(png.c_str(), R_OK) == 0);
  std::cout << fmt::format(
      "report in Chromium: {} host(s), load {} ms (navigation {} ms); {} marker(s) beside {} label(s), "
      "lowest text contrast {}:1; screenshot {}\n",
      v.value("hosts", 0), v.value("load_ms", 0), v.value("nav_load_ms", 0), v.value("marks", 0),
      v.value("labels", 0), v.value("min_contrast", 0.0), png);
  return v;
}

std::string inventory(const SshdHost& s, const std::vector<std::string>& names) {
  std::string inv;
  for (const auto& n : names)
    inv += fmt::format(
        "[hosts.{}]\naddress = \"127.0.0.1\"\nport = {}\nuser = \"root\"\nidentity = \"{}\"\n"
        "known_hosts = \"{}\"\n\n",
        n, s.port(), s.client_key(), s.known_hosts());
  return inv;
}

std::string targets(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "\"" : ", \"") + n + "\"";
  return "[" + s + "]";
}

mode_t mode_of(const std::string& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("report e2e: a runbook's run --report opens in Chromium with every step and its status",
          "[ssh][e2e][report]") {
  require_browser();
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-report-e2e");
  write_file(dir + "/inv.toml", inventory(sshd, {"box"}));
  write_file(dir + "/p.toml", fmt::format(R"(name = "seed-like"
targets = ["box"]
[vars]
out = "{0}/out"
[[step]]
id = "hello"
name = "Say hello"
kind = "run"
command = "echo hello from the host; echo a warning >&2"
[[step]]
id = "notes"
name = "Write the notes"
kind = "write"
path = "{{{{ out }}}}.notes"
content = "notes\n"
[[step]]
id = "flag"
name = "The flag file exists"
kind = "verify"
file_exists = "{{{{ out }}}}.flag"
  [[step.escalate]]
  kind = "run"
  command = "touch {{{{ out }}}}.flag"
[[step]]
id = "oops"
name = "A step that fails"
kind = "run"
command = "echo it went wrong >&2; exit 3"
on_failure = "continue"
[[step]]
id = "last"
name = "Still runs"
kind = "verify"
file_exists = "{{{{ out }}}}.notes"
)",
                                          dir));
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_sh(fmt::format(
      "{} run {}/p.toml -i {}/inv.toml -F none --transcript {}/t.jsonl --report {}/r.html",
      RATCHET_BINARY, dir, dir, dir, dir));
  INFO(r.out << r.err);
  CHECK(r.code == 1);  // a step failed
  CHECK(r.out.find("report " + dir + "/r.html (") != std::string::npos);
  std::cout << fmt::format(
      "report e2e: run + report, 1 host: {:.2f} s\n",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  CHECK(mode_of(dir + "/r.html") == 0600);
  std::string page = read_file(dir + "/r.html");
  CHECK(page.find("run_by") == std::string::npos);  // the field's value is shown, not its name
  auto v = check_in_browser(
      dir + "/r.html", dir + "/t.jsonl", dir + "/r.png",
      "--contains 'hello from the host' --contains 'it went wrong' --contains 'rung 1'");
  CHECK(v["chain"] == "intact");
  CHECK(v["exit_status"] == "failed");
  // The rung's ▲ was drawn, beside the labels (check_report.js: no marker over
  // a label, every legend entry and label at 4.5:1 or more).
  CHECK(v["marks"].get<int>() >= 1);
  CHECK(v["min_contrast"].get<double>() >= 4.5);

  // The same transcript cut inside its last line: the report says it is cut.
  std::string text = read_file(dir + "/t.jsonl");
  write_file(dir + "/cut.jsonl", text.substr(0, text.rfind("{\"event\":\"host_end\"") + 20));
  auto c = run_sh(fmt::format("{} report {}/cut.jsonl -o {}/cut.html", RATCHET_BINARY, dir, dir));
  INFO(c.out << c.err);
  CHECK(c.code == 0);
  CHECK(c.err.find("the run has no run_end") != std::string::npos);
  auto vc = check_in_browser(dir + "/cut.html", dir + "/cut.jsonl", dir + "/cut.png",
                             "--contains 'is cut'");
  CHECK(vc["chain"] == "cut");
}

TEST_CASE("report e2e: a 20-host fleet run: one timeline row and section per host",
          "[ssh][e2e][report]") {
  require_browser();
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-report-e2e");
  std::vector<std::string> names;
  for (int i = 0; i < 20; ++i) names.push_back(fmt::format("n{:02d}", i));
  write_file(dir + "/inv.toml", inventory(sshd, names));
  write_file(dir + "/p.toml", fmt::format(R"(name = "fleet"
targets = {}
[[step]]
id = "one"
kind = "run"
command = "echo {{{{ host.name }}}}"
[[step]]
id = "two"
kind = "run"
command = "sleep 0.1"
[[step]]
id = "three"
kind = "verify"
command = "true"
)",
                                          targets(names)));
  auto r = run_sh(
      fmt::format("{} run {}/p.toml -i {}/inv.toml -F none --forks 10 --transcript {}/t.jsonl",
                  RATCHET_BINARY, dir, dir, dir));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  auto t0 = std::chrono::steady_clock::now();
  auto rep = run_sh(fmt::format("{} report {}/t.jsonl -o {}/r.html", RATCHET_BINARY, dir, dir));
  std::cout << fmt::format(
      "report e2e: ratchet report, 20 hosts: {:.0f} ms, {} bytes\n",
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
      read_file(dir + "/r.html").size());
  INFO(rep.out << rep.err);
  REQUIRE(rep.code == 0);
  auto v = check_in_browser(dir + "/r.html", dir + "/t.jsonl", dir + "/r.png", "--contains n19");
  CHECK(v["hosts"] == 20);
  CHECK(v["chain"] == "intact");
}

TEST_CASE("report e2e: markup in host output and step names is text: no script runs in Chromium",
          "[ssh][e2e][report]") {
  require_browser();
  SshdHost sshd;
  std::string dir = temp_dir("ratchet-report-e2e");
  write_file(dir + "/inv.toml", inventory(sshd, {"box"}));
  // The payloads set window.pwned or open a dialog if they ever run.
  write_file(
      dir + "/payload.txt",
      "<script>window.pwned=1</script>\n<img src=x onerror=\"window.pwned=2;alert(2)\">\n"
      "</pre></details></section><script>alert(3)</script>\n<svg onload=\"window.pwned=4\"></svg>\n"
      "\" onmouseover=\"window.pwned=5\" x=\"\n");
  write_file(dir + "/p.toml", fmt::format(R"(name = "inject <script>window.pwned=6</script>"
targets = ["box"]
[[step]]
id = "evil"
name = "<img src=x onerror=alert(7)> & \"quotes\""
kind = "run"
command = "cat {0}/payload.txt; cat {0}/payload.txt >&2"
)",
                                          dir));
  auto r = run_sh(fmt::format("{} run {}/p.toml -i {}/inv.toml -F none --transcript {}/t.jsonl",
                              RATCHET_BINARY, dir, dir, dir));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  auto rep = run_sh(fmt::format("{} report {}/t.jsonl -o {}/r.html", RATCHET_BINARY, dir, dir));
  INFO(rep.out << rep.err);
  REQUIRE(rep.code == 0);
  check_in_browser(dir + "/r.html", dir + "/t.jsonl", dir + "/r.png",
                   "--hostile --contains '<script>window.pwned=1</script>' --contains '<img src=x "
                   "onerror=alert(7)>'");
}

TEST_CASE("report: usage errors name the file and exit 2", "[e2e][report]") {
  std::string dir = temp_dir("ratchet-report-cli");
  write_file(dir + "/x.jsonl", "not a transcript\n");
  auto a = run_sh(fmt::format("{} report {}/x.jsonl -o {}/r.html", RATCHET_BINARY, dir, dir));
  CHECK(a.code == 2);
  CHECK(a.err.find(dir + "/x.jsonl is not a ratchet transcript") != std::string::npos);
  auto b = run_sh(fmt::format("{} report {}/x.jsonl", RATCHET_BINARY, dir));
  CHECK(b.code == 2);  // -o is required
  auto c = run_sh(fmt::format("{} report {}/x.jsonl -o {}/x.jsonl", RATCHET_BINARY, dir, dir));
  CHECK(c.code == 2);
  CHECK(c.err.find("is the transcript itself") != std::string::npos);
  CHECK(read_file(dir + "/x.jsonl") == "not a transcript\n");
  // --report is made from the transcript file: one that is no regular file is refused before
  // anything runs.
  write_file(dir + "/inv.toml", "[hosts.box]\naddress = \"127.0.0.1\"\nport = 1\n");
  write_file(dir + "/p.toml",
             "name = \"p\"\ntargets = [\"box\"]\n[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = "
             "\"true\"\n");
  auto e = run_sh(fmt::format(
      "{} run {}/p.toml -i {}/inv.toml -F none --transcript /dev/null --report {}/r.html",
      RATCHET_BINARY, dir, dir, dir));
  INFO(e.out << e.err);
  CHECK(e.code == 2);
  CHECK(e.err.find("--report needs the transcript in a regular file, and --transcript /dev/null is "
                   "not one") != std::string::npos);
  CHECK(e.err.find("connect") == std::string::npos);
  CHECK(::access((dir + "/r.html").c_str(), F_OK) != 0);
}
