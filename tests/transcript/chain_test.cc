// The transcript's hash chain (transcript/chain.h): what the writer writes
// verifies, and a changed byte, a deleted line, a cut tail, a wrong digest and
// a cut run before another are each named by the first line that does not fit.
#include <catch2/catch.hpp>

#include <sstream>

#include "support/files.h"
#include "support/local_proc.h"
#include "transcript/chain.h"
#include "transcript/sign.h"
#include "transcript/writer.h"
#include "util/hash.h"

using namespace ratchet::transcript;
using nlohmann::json;
using ratchet::testing::read_file;

namespace {

/// The file's lines, each with its newline.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l + "\n");
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l;
  return s;
}

json step(const char* event, const std::string& host, json more = json::object()) {
  more["host"] = host;
  more["step"] = "s1";
  if (std::string(event) != events::kStepStart) more["rung"] = 0;
  return more;
}

/// One run of two hosts, as `run` writes it: 14 lines, host_end on lines 12 and 13.
void write_run(Writer& w, const std::string& id, int code = 0) {
  w.emit(events::kRunStart, {{"schema", kSchemaVersion}, {"ratchet_version", "v"}, {"run_id", id},
                             {"targets", {"a", "b"}}});
  w.emit(events::kHostLibrary, {{"sha256", "x"}, {"text", "f() { :; }"}});
  for (const std::string h : {"a", "b"})
    w.emit(events::kStepStart, {{"host", h}, {"step", "s1"}, {"kind", "run"}, {"name", "S1"}});
  for (const std::string h : {"a", "b"}) {
    w.emit(events::kCommand, step(events::kCommand, h, {{"role", "action"}, {"command", "echo hi"},
                                                         {"sent", "echo hi"}, {"timeout_ms", 1000}}));
    w.emit(events::kOutput, step(events::kOutput, h, {{"stream", "stdout"}, {"bytes", 3}, {"data", "hi\n"}}));
    w.emit(events::kExit, step(events::kExit, h, {{"code", 0}, {"ms", 2}, {"timed_out", false}}));
  }
  w.emit(events::kStepEnd, step(events::kStepEnd, "a", {{"status", "changed"}, {"ms", 3}}));
  w.emit(events::kHostEnd, {{"host", "a"}, {"status", "ok"}, {"counts", {{"changed", 1}}}, {"ms", 5}});
  w.emit(events::kHostEnd, {{"host", "b"}, {"status", "ok"}, {"counts", {{"changed", 1}}}, {"ms", 5}});
  w.emit(events::kRunEnd, {{"status", code ? "failed" : "ok"}, {"exit_code", code}, {"hosts", {{"ok", 2}}}});
}

struct Run {
  std::string path = ratchet::testing::temp_dir("ratchet-chain") + "/t.jsonl";
  std::map<std::string, std::string> hosts;
  std::string head;
  Run() {
    Writer w(path);
    write_run(w, "R1");
    hosts = w.host_digests();
    head = w.head();
  }
  std::string text() const { return read_file(path); }
};

}  // namespace

TEST_CASE("chain: an intact transcript verifies and each line's prev is the sha256 of the line before",
          "[transcript]") {
  Run run;
  auto lines = lines_of(run.text());
  REQUIRE(lines.size() == 14);
  CHECK(json::parse(lines[0]).contains("prev") == false);
  for (size_t k = 1; k < lines.size(); ++k) {
    INFO("line " << k + 1);
    const std::string before = lines[k - 1].substr(0, lines[k - 1].size() - 1);
    CHECK(json::parse(lines[k])["prev"] == ratchet::util::sha256_hex(before));
    // right after "event" and "t"
    CHECK(lines[k].find(",\"prev\":\"") == lines[k].find(",\"t\":\"") + 31);
  }
  auto c = verify_chain(run.text());
  CHECK(c.problem == "");
  CHECK(c.lines == 14);
  REQUIRE(c.runs.size() == 1);
  const auto& r = c.runs[0];
  CHECK(r.run_id == "R1");
  CHECK(r.first_line == 1);
  CHECK(r.last_line == 14);
  CHECK(r.head == run.head);
  CHECK(r.head == ratchet::util::sha256_hex(lines[13].substr(0, lines[13].size() - 1)));
  REQUIRE(r.hosts.size() == 2);
  CHECK(r.hosts[0].host == "a");
  CHECK(r.hosts[0].line == 12);
  CHECK(r.hosts[0].digest == run.hosts.at("a"));
  CHECK(r.hosts[1].digest == run.hosts.at("b"));
  CHECK(r.hosts[1].digest == ratchet::util::sha256_hex(lines[12].substr(0, lines[12].size() - 1)));
  // run_end carries each host's digest
  CHECK(json::parse(lines[13])["host_digests"] == json(run.hosts));
}

TEST_CASE("chain: a byte changed in line 7 is named by the first line that does not fit", "[transcript]") {
  Run run;
  auto lines = lines_of(run.text());
  SECTION("in its data: line 8's prev no longer matches") {
    size_t at = lines[6].find("\"ms\":2");  // line 7: host a's exit
    REQUIRE(at != std::string::npos);
    lines[6][at + 5] = '3';
    CHECK(verify_chain(joined(lines)).problem == "line 8: prev does not match line 7");
  }
  SECTION("in its prev: line 7 itself does not fit") {
    size_t at = lines[6].find("\"prev\":\"") + 8;
    lines[6][at] = lines[6][at] == '0' ? '1' : '0';
    CHECK(verify_chain(joined(lines)).problem == "line 7: prev does not match line 6");
  }
  SECTION("so that it is no JSON object") {
    lines[6][0] = '[';
    CHECK(verify_chain(joined(lines)).problem == "line 7: not a JSON object");
  }
  SECTION("in a host_end: run_end's host_digests no longer match") {
    // line 12 (host a's end) re-chained by a forger who missed host_digests
    size_t at = lines[11].find("\"ms\":5");
    lines[11][at + 5] = '6';
    std::string fixed = lines[11].substr(0, lines[11].size() - 1);
    for (size_t k = 12; k < lines.size(); ++k) {
      json j = json::parse(lines[k]);
      std::string old_prev = j["prev"];
      size_t p = lines[k].find(old_prev);
      lines[k].replace(p, 64, ratchet::util::sha256_hex(fixed));
      fixed = lines[k].substr(0, lines[k].size() - 1);
    }
    CHECK(verify_chain(joined(lines)).problem == "line 14: host_digests does not match the host_end of host a");
  }
}

TEST_CASE("chain: a line deleted is named at the line that follows it", "[transcript]") {
  Run run;
  auto lines = lines_of(run.text());
  lines.erase(lines.begin() + 4);  // line 5
  CHECK(verify_chain(joined(lines)).problem == "line 5: prev does not match line 4");
  lines.erase(lines.begin());  // and run_start
  CHECK(verify_chain(joined(lines)).problem == "line 1: host_library is not run_start (a transcript begins with run_start)");
}

TEST_CASE("chain: a file cut after line N ends after line N without run_end", "[transcript]") {
  Run run;
  auto lines = lines_of(run.text());
  for (size_t n : {1, 7, 13}) {
    INFO(n);
    std::vector<std::string> head(lines.begin(), lines.begin() + static_cast<long>(n));
    auto c = verify_chain(joined(head));
    CHECK(c.problem == "ends after line " + std::to_string(n) + " without run_end");
    CHECK(c.runs.empty());
    CHECK(c.lines == n);
    // cut inside the next line
    CHECK(verify_chain(joined(head) + lines[n].substr(0, 20)).problem ==
          "ends after line " + std::to_string(n) + " without run_end (line " + std::to_string(n + 1) + " is cut off)");
  }
  CHECK(verify_chain("").problem == "holds no line");
}

TEST_CASE("chain: a wrong digest matches nothing and the right ones in any case and with sha256: do", "[transcript]") {
  Run run;
  auto c = verify_chain(run.text());
  REQUIRE(c.problem == "");
  CHECK(digest_match(c, std::string(64, '0')) == "");
  CHECK(digest_match(c, parse_digest(run.head)) == "the final head of run R1 (line 14)");
  std::string upper = run.hosts.at("b");
  for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  CHECK(digest_match(c, parse_digest("SHA256:" + upper)) == "host b of run R1 (line 13)");
  CHECK(parse_digest(" sha256:" + run.head + "\n") == run.head);
  CHECK(parse_digest(run.head.substr(1)) == "");
  CHECK(parse_digest(run.head + "0") == "");
  CHECK(parse_digest(std::string(63, 'a') + "g") == "");
  CHECK(parse_digest("") == "");
}

TEST_CASE("chain: two runs in one file hold one chain each", "[transcript]") {
  std::string path = ratchet::testing::temp_dir("ratchet-chain") + "/two.jsonl";
  std::string head1, head2;
  {
    Writer w(path);
    write_run(w, "R1");
    head1 = w.head();
  }
  {
    Writer w(path);  // appends, as --transcript does
    write_run(w, "R2", 1);
    head2 = w.head();
  }
  const std::string text = read_file(path);
  auto lines = lines_of(text);
  REQUIRE(lines.size() == 28);
  CHECK_FALSE(json::parse(lines[14]).contains("prev"));  // run 2's run_start begins its own chain
  auto c = verify_chain(text);
  CHECK(c.problem == "");
  REQUIRE(c.runs.size() == 2);
  CHECK(c.runs[1].first_line == 15);
  CHECK(c.runs[0].head == head1);
  CHECK(c.runs[1].head == head2);
  CHECK(head1 != head2);
  CHECK(digest_match(c, head1) == "the final head of run R1 (line 14)");
  CHECK(digest_match(c, head2) == "the final head of run R2 (line 28)");
  CHECK(digest_match(c, c.runs[1].hosts[0].digest) == "host a of run R2 (line 26)");
  SECTION("run 1 cut before run 2 began") {
    lines.erase(lines.begin() + 13);
    auto cut = verify_chain(joined(lines));
    CHECK(cut.problem == "");  // run 2 is checked on its own
    CHECK(cut.cut == std::vector<std::string>{"line 14: run_start, but the run from line 1 has no run_end (it ends after line 13)"});
    REQUIRE(cut.runs.size() == 1);
    CHECK(digest_match(cut, head2) == "the final head of run R2 (line 27)");
    // a run after the cut one is still checked line by line
    auto edited = lines;
    edited[20].insert(edited[20].size() - 1, " ");  // still JSON, other bytes
    CHECK(verify_chain(joined(edited)).problem == "line 22: prev does not match line 21");
  }
  SECTION("a line after run 1's end that begins no run") {
    lines.erase(lines.begin() + 14);
    CHECK(verify_chain(joined(lines)).problem ==
          "line 15: host_library after the run_end of line 14 (a run begins with run_start)");
  }
}

TEST_CASE("chain: the chain hashes the bytes written with secrets masked even in a host name", "[transcript]") {
  std::string path = ratchet::testing::temp_dir("ratchet-chain") + "/masked.jsonl";
  std::map<std::string, std::string> hosts;
  {
    Writer w(path);
    w.add_secret("hunter2");
    w.emit(events::kRunStart, {{"schema", kSchemaVersion}, {"ratchet_version", "v"}, {"targets", {"db-hunter2"}}});
    w.emit(events::kOutput, step(events::kOutput, "db-hunter2", {{"stream", "stdout"}, {"bytes", 9},
                                                                  {"data", "pw hunter2"}}));
    w.emit(events::kHostEnd, {{"host", "db-hunter2"}, {"status", "ok"}, {"counts", json::object()}, {"ms", 1},
                              {"prev", "forged"}});
    w.emit(events::kRunEnd, {{"status", "ok"}, {"exit_code", 0}, {"hosts", {{"ok", 1}}},
                             {"host_digests", {{"x", "forged"}}}});
    hosts = w.host_digests();
  }
  const std::string text = read_file(path);
  CHECK(text.find("hunter2") == std::string::npos);
  CHECK(text.find("forged") == std::string::npos);  // prev and host_digests are the writer's own
  REQUIRE(hosts.count("db-***") == 1);
  auto c = verify_chain(text);
  CHECK(c.problem == "");
  REQUIRE(c.runs.size() == 1);
  REQUIRE(c.runs[0].hosts.size() == 1);
  CHECK(c.runs[0].hosts[0].host == "db-***");
  CHECK(c.runs[0].hosts[0].digest == hosts["db-***"]);
}

TEST_CASE("chain: after a failed write the chain stops where the file does", "[transcript]") {
  Writer w("/dev/full");  // every write fails: ENOSPC
  w.emit(events::kRunStart, {{"schema", kSchemaVersion}, {"ratchet_version", "v"}, {"targets", json::array()}});
  CHECK(w.failed());
  CHECK(w.head() == "");
  w.emit(events::kRunEnd, {{"status", "ok"}, {"exit_code", 0}, {"hosts", json::object()}});
  CHECK(w.head() == "");
  Writer none;  // records nothing: no chain
  none.emit(events::kRunStart, {{"schema", kSchemaVersion}, {"ratchet_version", "v"}, {"targets", json::array()}});
  CHECK(none.head() == "");
}

TEST_CASE("chain: a transcript written before the chain says it has no prev", "[transcript]") {
  const std::string old = R"({"event":"run_start","t":"2026-11-30T00:00:00.000Z","schema":2,"ratchet_version":"v","targets":[]})"
                          "\n" R"({"event":"run_end","t":"2026-11-30T00:00:00.000Z","exit_code":0,"hosts":{},"status":"ok"})"
                          "\n";
  CHECK(verify_chain(old).problem == "line 2: no prev (written before the hash chain, or edited)");
  CHECK(verify_chain("\n").problem == "line 1: empty line");
  CHECK(verify_chain("{\"t\":1}\n").problem == "line 1: no event name");
  CHECK(verify_chain(R"({"event":"run_start","prev":"x"})" "\n").problem ==
        "line 1: run_start carries prev (a chain begins at run_start)");
}

TEST_CASE("chain: a signature event after run_end chains to it names its head and leaves the run's head alone",
          "[transcript]") {
  const std::string path = ratchet::testing::temp_dir("ratchet-chain") + "/t.jsonl";
  std::string head;
  {
    Writer w(path);
    write_run(w, "R1");
    head = w.head();
    w.emit(events::kSignature, {{"head", head}, {"namespace", "ratchet-transcript"}, {"file", path + ".sig"},
                                {"key", "ED25519 SHA256:abc"}});
    CHECK(w.head() == head);  // the run's final head is still run_end's
    write_run(w, "R2");
  }
  auto lines = lines_of(read_file(path));
  REQUIRE(lines.size() == 29);
  auto sig = json::parse(lines[14]);
  CHECK(sig["event"] == "signature");
  CHECK(sig["prev"] == head);
  CHECK(sig["head"] == head);
  auto c = verify_chain(read_file(path));
  CHECK(c.problem == "");
  REQUIRE(c.runs.size() == 2);
  CHECK(c.runs[0].head == head);
  auto s0 = signature_of(read_file(path), c.runs[0]);
  CHECK(s0.line == 15);
  CHECK(s0.key == "ED25519 SHA256:abc");
  CHECK(s0.error == "");
  CHECK(signature_of(read_file(path), c.runs[1]).line == 0);
  CHECK(c.runs[1].first_line == 16);

  SECTION("a signature naming another head is refused") {
    auto j = json::parse(lines[14]);
    j["head"] = std::string(64, '0');
    lines[14] = j.dump() + "\n";
    CHECK(verify_chain(joined(lines)).problem ==
          "line 15: signature names head " + std::string(64, '0') + ", not the final head of line 14");
  }
  SECTION("a signature whose prev is not run_end's digest is refused") {
    auto j = json::parse(lines[14]);
    j["prev"] = std::string(64, '1');
    lines[14] = j.dump() + "\n";
    CHECK(verify_chain(joined(lines)).problem == "line 15: prev does not match line 14");
  }
  SECTION("a line after the signature that begins no run is named") {
    lines.insert(lines.begin() + 15, lines[14]);
    CHECK(verify_chain(joined(lines)).problem ==
          "line 16: signature after the signature of line 15 (a run begins with run_start)");
  }
  SECTION("a signature inside a run, before its run_end, is a line of the run whose prev must fit") {
    std::swap(lines[13], lines[14]);
    CHECK(verify_chain(joined(lines)).problem == "line 14: prev does not match line 13");
  }
}
