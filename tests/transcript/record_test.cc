#include <catch2/catch.hpp>

#include <map>

#include "support/local_proc.h"
#include "transcript/reader.h"
#include "transcript/record.h"
#include "util/hash.h"

using namespace ratchet;

TEST_CASE("record: connect_fields has via only through jump hosts and after_reboot only when asked",
          "[transcript]") {
  transport::ConnectInfo info;
  info.address = "10.0.0.1";
  info.port = 22;
  info.user = "root";
  info.fingerprint = "SHA256:x";
  info.auth_method = "publickey (agent)";
  info.ms = 7;
  auto ev = transcript::connect_fields("h", info);
  CHECK(ev == nlohmann::json{{"host", "h"}, {"address", "10.0.0.1"}, {"port", 22}, {"user", "root"},
                             {"fingerprint", "SHA256:x"}, {"auth_method", "publickey (agent)"}, {"ms", 7}});
  info.via = {"a@j1:22", "b@j2:2222"};
  ev = transcript::connect_fields("h", info, true);
  CHECK(ev["via"] == nlohmann::json::array({"a@j1:22", "b@j2:2222"}));
  CHECK(ev["after_reboot"] == true);
}

TEST_CASE("record: output events carry the stream's bytes and sha256, never a digest of a secret",
          "[transcript]") {
  std::string path = testing::temp_dir("ratchet-rec") + "/t.jsonl";
  {
    transcript::Writer w(path);
    w.add_secret("hunter2-secret");
    transport::ExecResult r;
    r.exit_code = 0;
    r.out.data = "plain output\n";
    r.out.total = 13;
    r.out.sha256 = util::sha256_hex("plain output\n");
    r.err.data = "the hunter2-secret leaked\n";
    r.err.total = r.err.data.size();
    r.err.sha256 = util::sha256_hex(r.err.data);
    transcript::record_result(w, {"h", "s", 0}, r, false);
  }
  auto tr = transcript::read_transcript(path);
  std::map<std::string, nlohmann::json> by_stream;
  for (const auto& e : tr.events)
    if (e["event"] == "output") by_stream[e["stream"]] = e;
  REQUIRE(by_stream.count("stdout"));
  CHECK(by_stream["stdout"]["bytes"] == 13);
  CHECK(by_stream["stdout"]["sha256"] == util::sha256_hex("plain output\n"));
  REQUIRE(by_stream.count("stderr"));
  CHECK(by_stream["stderr"]["data"] == "the *** leaked\n");
  CHECK_FALSE(by_stream["stderr"].contains("sha256"));  // a digest around a secret could be brute-forced
}
