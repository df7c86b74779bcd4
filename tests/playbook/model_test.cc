// playbook/model.h helpers: whom a step becomes on a host, the address to connect to.
#include <catch2/catch.hpp>

#include "playbook/model.h"

using namespace ratchet::playbook;

TEST_CASE("becomes: a step's (or [defaults]') become wins, else the host's", "[playbook]") {
  Host root_host;
  root_host.become = true;
  Step on, off, unset;
  on.become = true;
  off.become = false;
  CHECK(becomes(on, root_host));
  CHECK_FALSE(becomes(off, root_host));  // become = false on a become = true host
  CHECK(becomes(unset, root_host));
  CHECK(becomes(on, Host{}));
  CHECK_FALSE(becomes(unset, Host{}));
}

TEST_CASE("become_user_for: the step's user, else the host's, else root", "[playbook]") {
  Host h;
  Step s;
  CHECK(become_user_for(s, h) == "root");
  h.become_user = "ops";
  CHECK(become_user_for(s, h) == "ops");
  s.become_user = "svc";
  CHECK(become_user_for(s, h) == "svc");
}

TEST_CASE("connect_name: the address, else the name without an ad hoc :port", "[playbook]") {
  Host h;
  h.name = "gpu-box";
  CHECK(connect_name(h) == "gpu-box");
  h.name = "10.0.0.5:2222";
  h.port = 2222;
  CHECK(connect_name(h) == "10.0.0.5");
  h.port = 22;  // the suffix is not this port: part of the name
  CHECK(connect_name(h) == "10.0.0.5:2222");
  h.address = "192.0.2.10";
  CHECK(connect_name(h) == "192.0.2.10");
}
