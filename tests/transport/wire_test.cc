#include "transport/wire.h"

#include <catch2/catch.hpp>

#include "util/shell.h"

using namespace ratchet;
using namespace ratchet::transport;
using std::chrono::milliseconds;

TEST_CASE("wire_command without a deadline execs /bin/sh -c with the quoted command",
          "[transport]") {
  CHECK(wire_command("echo hi", milliseconds(0), Become{}) == "exec /bin/sh -c 'echo hi'");
  CHECK(wire_command("echo 'a b'", milliseconds(0), Become{}) ==
        "exec /bin/sh -c 'echo '\\''a b'\\'''");
  CHECK(wire_command("true", milliseconds(0), Become{}) == "exec /bin/sh -c true");
}

TEST_CASE("wire_command with a deadline passes command and milliseconds to the wrapper",
          "[transport]") {
  const std::string script = "'" + std::string(deadline_script()) + "'";
  CHECK(wire_command("sleep 30", milliseconds(60'000), Become{}) ==
        "exec /bin/sh -c " + script + " ratchet 'sleep 30' 60000");
  CHECK(wire_command("it's", milliseconds(1500), Become{}) ==
        "exec /bin/sh -c " + script + " ratchet 'it'\\''s' 1500");
}

TEST_CASE("the deadline script travels single-quoted as is", "[transport]") {
  std::string_view s = deadline_script();
  CHECK(s.find('\'') == std::string_view::npos);  // so quoting never rewrites it
  CHECK(s.find('\\') == std::string_view::npos);  // read alike by sh, csh and fish
  CHECK(s.find('\n') == std::string_view::npos);  // csh rejects newlines in quotes
  CHECK(util::shell_quote(s) == "'" + std::string(s) + "'");
  CHECK(s.rfind("exec /bin/sh -c \"$1\"") == s.size() - 20);  // ends by exec'ing the command
}

TEST_CASE("become wraps the whole wire string in sudo -n -H", "[transport]") {
  const std::string script = "'" + std::string(deadline_script()) + "'";
  CHECK(wire_command("id -u", milliseconds(0), Become{true, ""}) ==
        "exec sudo -n -H -- /bin/sh -c 'id -u'");
  CHECK(wire_command("id -u", milliseconds(0), Become{true, "postgres"}) ==
        "exec sudo -n -H -u postgres -- /bin/sh -c 'id -u'");
  CHECK(wire_command("id -u", milliseconds(0), Become{true, "odd user"}) ==
        "exec sudo -n -H -u 'odd user' -- /bin/sh -c 'id -u'");
  CHECK(wire_command("id -u", milliseconds(5000), Become{true, "app"}) ==
        "exec sudo -n -H -u app -- /bin/sh -c " + script + " ratchet 'id -u' 5000");
  CHECK(wire_command("id -u", milliseconds(5000), Become{false, "app"}) ==
        "exec /bin/sh -c " + script + " ratchet 'id -u' 5000");
}

TEST_CASE("become with a password: sudo -k -S with an empty prompt, never -n", "[transport]") {
  CHECK(wire_command("id -u", milliseconds(0), Become{true, "", true}) ==
        "exec sudo -k -S -p '' -H -- /bin/sh -c 'id -u'");
  CHECK(wire_command("id -u", milliseconds(0), Become{true, "app", true}) ==
        "exec sudo -k -S -p '' -H -u app -- /bin/sh -c 'id -u'");
  CHECK(wire_command("id -u", milliseconds(0), Become{false, "app", true}) ==
        "exec /bin/sh -c 'id -u'");
}

TEST_CASE("client_deadline adds the grace to the host deadline", "[transport]") {
  CHECK(client_deadline(milliseconds(1000)) == milliseconds(4000));
  CHECK(client_deadline(milliseconds(60'000)) == milliseconds(63'000));
  CHECK(kClientGrace == milliseconds(3000));
}
