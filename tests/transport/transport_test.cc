#include "transport/transport.h"

#include <catch2/catch.hpp>

using namespace ratchet::transport;

TEST_CASE("cause_name gives the transcript's cause words", "[transport]") {
  CHECK(cause_name(FailureKind::dns) == "dns");
  CHECK(cause_name(FailureKind::refused) == "refused");
  CHECK(cause_name(FailureKind::timeout) == "timeout");
  CHECK(cause_name(FailureKind::host_key_unknown) == "host_key");
  CHECK(cause_name(FailureKind::host_key_changed) == "host_key");
  CHECK(cause_name(FailureKind::auth) == "auth");
  CHECK(cause_name(FailureKind::other) == "other");
}

TEST_CASE("CaptureBuffer keeps everything up to the cap", "[transport]") {
  CaptureBuffer b(10);
  b.append("hello", 5);
  b.append("world", 5);
  Captured c = b.finish();
  CHECK(c.data == "helloworld");
  CHECK(c.total == 10);
  CHECK(c.dropped == 0);
}

TEST_CASE("CaptureBuffer keeps head and tail halves and marks the gap", "[transport]") {
  CaptureBuffer b(6);
  std::string all = "abcdefghijklmnopqrstuvwxyz";
  for (char ch : all) b.append(&ch, 1);  // byte by byte
  Captured c = b.finish();
  CHECK(c.data == "abc\n[ratchet: 20 bytes dropped]\nxyz");
  CHECK(c.total == 26);
  CHECK(c.dropped == 20);

  CaptureBuffer big(7);  // odd cap: head 3, tail 4; one large append
  big.append(all.data(), all.size());
  c = big.finish();
  CHECK(c.data == "abc\n[ratchet: 19 bytes dropped]\nwxyz");
  CHECK(c.dropped == 19);
}

TEST_CASE("CaptureBuffer with cap 0 keeps only the marker", "[transport]") {
  CaptureBuffer b(0);
  b.append("xyz", 3);
  Captured c = b.finish();
  CHECK(c.data == capture_marker(3));
  CHECK(c.total == 3);
  CHECK(c.dropped == 3);
}
