// Live progress on a real terminal: the ratchet binary runs 20 hosts inside a
// tmux pane (a pseudo-terminal of 160x60); the test reads the final screen.
// One line per host, redrawn in place (the block appears once in the whole
// scrollback), a failure printed once above it, escapes from a host's output
// never reach the terminal, the recap lists every host, NO_COLOR is honoured.
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <thread>

#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "support/tmux.h"

using namespace ratchet::testing;

namespace {

int count(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("live progress: 20 hosts in a pseudo-terminal, final screen and recap", "[ssh][cli][tty]") {
  if (run_sh("command -v tmux").code != 0) FAIL("tmux is not installed (scripts/setup.sh test installs it)");
  std::vector<std::unique_ptr<SshdHost>> boxes;
  for (int i = 0; i < 4; ++i) boxes.push_back(std::make_unique<SshdHost>());
  std::string dir = temp_dir("ratchet-tty");
  std::string inv;
  for (int i = 0; i < 20; ++i) {
    const auto& b = *boxes[i % 4];
    inv += fmt::format(
        "[hosts.node{:02d}]\naddress = \"127.0.0.1\"\nport = {}\nuser = \"root\"\nidentity = \"{}\"\n"
        "known_hosts = \"{}\"\n",
        i, b.port(), b.client_key(), b.known_hosts());
  }
  std::ofstream(dir + "/inv.toml") << inv;
  // node07 fails its second step; every host prints 20000 lines with escapes.
  std::ofstream(dir + "/p.toml") << R"(name = "tty"
[[step]]
id = "warm_up"
kind = "run"
command = "sleep 0.3"
[[step]]
id = "noisy"
kind = "run"
command = "printf '\\033[2J\\033[H\\033[31mSCREEN-WIPED\\n'; seq 1 20000; test {{ host.name }} != node07"
[[step]]
id = "settle"
kind = "run"
command = "sleep 0.3"
)";
  std::string cmd = fmt::format("{} run {}/p.toml -i {}/inv.toml -F none --forks 8 --transcript {}/t.jsonl",
                                RATCHET_BINARY, dir, dir, dir);

  for (bool no_color : {false, true}) {
    INFO("NO_COLOR " << no_color);
    Tmux tmux;
    REQUIRE(tmux.start(std::string(no_color ? "NO_COLOR=1 " : "") + "TERM=xterm-256color " + cmd +
                       "; echo EXIT=$?; sleep 600"));
    std::string screen;
    bool done = eventually([&] {
      screen = tmux.capture();
      return screen.find("EXIT=") != std::string::npos;
    }, 90'000);
    INFO(screen);
    REQUIRE(done);
    std::string colored = tmux.capture(true);
    CHECK(screen.find("EXIT=1") != std::string::npos);

    // In place: the block's header is on screen once, however many redraws.
    CHECK(count(screen, "ratchet: 20 host(s)") == 1);
    CHECK(screen.find("ratchet: 20 host(s), 19 ok, 1 failed") != std::string::npos);
    // Every host has one line in the block and one in the recap.
    for (int i = 0; i < 20; ++i) {
      std::string h = fmt::format("node{:02d}", i);
      INFO(h);
      CHECK(count(screen, h + " ") >= 2);
    }
    // The failure was printed once, above the block, with its step.
    CHECK(count(screen, "node07: FAILED noisy") == 1);
    // Nothing a host printed reached the terminal: no wiped screen, no output lines.
    CHECK(screen.find("SCREEN-WIPED") == std::string::npos);
    CHECK(screen.find("\n19999\n") == std::string::npos);
    CHECK(screen.find("RECAP") != std::string::npos);
    CHECK(screen.find("total") != std::string::npos);
    // When the view ends, every step's result stays on screen, a row per host
    // and a column per step, above the recap (was: per-host counts only).
    size_t table = screen.find("\nhost    warm_up  noisy    settle\n");
    CHECK(table != std::string::npos);
    CHECK(table < screen.find("RECAP"));
    CHECK(screen.find("\nnode00  changed  changed  changed\n") != std::string::npos);
    CHECK(screen.find("\nnode07  changed  failed   skipped\n") != std::string::npos);
    CHECK(screen.find("\nnode19  changed  changed  changed\n") != std::string::npos);
    CHECK(screen.find("node07: 1 skipped (host stopped at noisy): settle") != std::string::npos);
    if (no_color) {
      CHECK(colored.find("\x1b[3") == std::string::npos);  // no SGR color at all
    } else {
      CHECK(colored.find("\x1b[32m") != std::string::npos);  // ok in green
      CHECK(colored.find("\x1b[31m") != std::string::npos);  // failed in red
    }
  }
}

TEST_CASE("live progress: one host's step results stay on screen when the view ends", "[ssh][cli][tty]") {
  if (run_sh("command -v tmux").code != 0) FAIL("tmux is not installed (scripts/setup.sh test installs it)");
  SshdHost box;
  std::string dir = temp_dir("ratchet-tty");
  std::ofstream(dir + "/inv.toml") << fmt::format(
      "[hosts.box]\naddress = \"127.0.0.1\"\nport = {}\nuser = \"root\"\nidentity = \"{}\"\nknown_hosts = \"{}\"\n",
      box.port(), box.client_key(), box.known_hosts());
  std::ofstream(dir + "/p.toml") << R"(name = "tty1"
[[step]]
id = "first"
kind = "run"
command = "true"
[[step]]
id = "breaks"
kind = "run"
command = "printf 'caf\\351 \\033[2J\\\\x\\n' >&2; exit 3"
[[step]]
id = "never"
kind = "run"
command = "true"
)";
  Tmux tmux;
  REQUIRE(tmux.start(fmt::format("TERM=xterm-256color {} run {}/p.toml -i {}/inv.toml -F none --transcript {}/t.jsonl"
                                 "; echo EXIT=$?; sleep 600",
                                 RATCHET_BINARY, dir, dir, dir)));
  std::string screen;
  bool done = eventually([&] {
    screen = tmux.capture();
    return screen.find("EXIT=") != std::string::npos;
  }, 60'000);
  INFO(screen);
  REQUIRE(done);
  CHECK(screen.find("EXIT=1") != std::string::npos);
  // Host bytes in one escape style: \xNN for the bad byte and ESC, \\ for a backslash.
  const std::string reason = "exit 3: caf\\xe9 \\x1b[2J\\\\x";
  CHECK(count(screen, "box: FAILED breaks: " + reason + "\n") == 1);  // printed once, above the block
  // Then a line per step, the one not run included, then the recap.
  size_t header = screen.find("ratchet: 1 host(s), 1 failed");
  size_t first = screen.find("\nbox: changed            first ");
  size_t breaks = screen.find("\nbox: failed             breaks ");
  size_t never = screen.find("\nbox: skipped            never                       host stopped at breaks\n");
  size_t recap = screen.find("RECAP");
  CHECK(header != std::string::npos);
  CHECK(first != std::string::npos);
  CHECK(breaks != std::string::npos);
  CHECK(never != std::string::npos);
  CHECK(recap != std::string::npos);
  CHECK(header < first);
  CHECK(first < breaks);
  CHECK(breaks < never);
  CHECK(never < recap);
  CHECK(screen.find(": " + reason + "\n", breaks) < never);
  CHECK(screen.find("box: 1 skipped (host stopped at breaks): never", recap) != std::string::npos);
}
