#include <catch2/catch.hpp>

#include "engine/executor.h"
#include "steps/library.h"
#include "support/local_proc.h"
#include "support/scripted_transport.h"
#include "transcript/reader.h"
#include "util/text.h"

#include <fstream>

using namespace ratchet;

TEST_CASE("executor: the library is sent, the transcript names it by hash; events in order", "[engine]") {
  testing::ScriptedTransport t;
  std::string path = testing::temp_dir("ratchet-exec") + "/t.jsonl";
  {
    transcript::Writer w(path);
    w.add_secret("s3cret-value");
    engine::Executor ex(t, w, "h1");
    ex.set_step("free", false, "", 4096);
    steps::Command c;
    c.role = "check";
    c.text = "ratchet_no_holders -- /dev/nvidia0";
    c.timeout = util::Millis(5000);
    t.push(1, "holder\tline\n", "");
    auto r = ex.run(c, 2, "the s3cret-value on stdin");
    CHECK(r.exit_code == 1);
  }
  REQUIRE(t.requests.size() == 1);
  const auto& req = t.requests[0];
  CHECK(req.command.find("ratchet_no_holders()") != std::string::npos);  // the library travels
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
    c.role = "action";
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
