// The report page from real transcripts (the writer's own): every host and
// step is there, hostile names and output are text, a cut run says so.
#include "report/page.h"

#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>

#include "report/sample_run.h"
#include "report/source.h"
#include "support/files.h"
#include "support/local_proc.h"

using namespace ratchet;
using namespace ratchet::testing;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

report::Source load(const std::string& path, const std::string& run = "") {
  report::Source src;
  std::string err;
  REQUIRE(report::load_source(path, run, &src, &err) == report::LoadError::none);
  return src;
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report page: host output, step ids and host names with markup are text", "[report]") {
  std::string path = temp_dir("ratchet-report") + "/t.jsonl";
  write_sample_run(
      path, {"web<1>&\"x\"", "db'2"},
      {{"s<b>", "name \"quoted\" & <i>", "ok",
        "<script>alert(1)</script>\n<img src=x onerror=alert(2)>"},
       {"plain", "Plain step", "changed", "</script><script>window.pwned=1</script>"}});
  auto page = report::render_page(load(path));
  // No markup from the transcript: the page's own has no script and no img at all.
  CHECK(lower(page).find("<script") == std::string::npos);
  CHECK(lower(page).find("<img") == std::string::npos);
  CHECK(page.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(page.find("&lt;img src=x onerror=alert(2)&gt;") != std::string::npos);
  CHECK(page.find("web&lt;1&gt;&amp;&quot;x&quot;") != std::string::npos);
  CHECK(page.find("db&#39;2") != std::string::npos);
  CHECK(page.find("s&lt;b&gt;") != std::string::npos);
  CHECK(page.find("name &quot;quoted&quot; &amp; &lt;i&gt;") != std::string::npos);
  CHECK(page.find("u&lt;1&gt;") != std::string::npos);  // evidence holders too
  CHECK(page.find("c&amp;d") != std::string::npos);
  // attribute values: a quote in a name cannot end the attribute
  CHECK(page.find(R"(data-host="web&lt;1&gt;&amp;&quot;x&quot;")") != std::string::npos);
  CHECK(page.find("Content-Security-Policy") != std::string::npos);
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
}

TEST_CASE("report page: every host of a multi-host run has its row, recap line and steps",
          "[report]") {
  std::string path = temp_dir("ratchet-report") + "/t.jsonl";
  std::vector<std::string> hosts;
  for (int i = 0; i < 12; ++i) hosts.push_back(fmt::format("n{:02d}", i));
  write_sample_run(path, hosts, {{"a", "A"}, {"b", "B", "failed", "bad\n", 1}});
  auto src = load(path);
  REQUIRE(src.run.hosts.size() == 12);
  CHECK(src.chain == report::ChainState::intact);
  CHECK(src.host_digests.size() == 12);
  auto page = report::render_page(src);
  for (const auto& h : hosts)
    CHECK(count(page, "data-host=\"" + h + "\"") == 3);  // recap, timeline, details
  CHECK(count(page, "class=\"bar st-ok\"") == 12);
  CHECK(count(page, "class=\"bar st-failed\"") == 12);
  CHECK(count(page, "data-step=\"b\" data-status=\"failed\" open") == 12);  // failed steps open
  CHECK(page.find(R"(id="chain" data-chain="intact")") != std::string::npos);
  CHECK(page.find("tester@box") != std::string::npos);
  CHECK(page.find(R"(id="cut")") == std::string::npos);
}

TEST_CASE("report page: a cut transcript reports what it holds and says it is cut", "[report]") {
  std::string path = temp_dir("ratchet-report") + "/t.jsonl";
  write_sample_run(path, {"box"}, {{"a", "A"}, {"b", "B"}}, "r1", /*cut=*/true);
  {
    std::string text = read_file(path);
    write_file(path, text + R"({"event":"step_start","t":"2026-)");  // a half-written last line
  }
  auto src = load(path);
  CHECK_FALSE(src.run.ended);
  CHECK(src.chain == report::ChainState::cut);
  CHECK(src.chain_text.find("without run_end") != std::string::npos);
  CHECK(src.cut_note.find("mid-line") != std::string::npos);
  auto page = report::render_page(src);
  CHECK(page.find(R"(id="cut")") != std::string::npos);
  CHECK(page.find(R"(data-chain="cut")") != std::string::npos);
  CHECK(page.find("no run_end") != std::string::npos);
  CHECK(count(page, "data-step=\"a\"") == 1);
  CHECK(count(page, "data-step=\"b\"") == 1);
}

TEST_CASE(
    "report source: the last run by default, --run picks another, an unknown id is a usage error",
    "[report]") {
  std::string path = temp_dir("ratchet-report") + "/t.jsonl";
  write_sample_run(path, {"first"}, {{"a", "A"}}, "run-1");
  write_sample_run(path, {"second"}, {{"a", "A"}}, "run-2");
  auto last = load(path);
  CHECK(last.run.run_id == "run-2");
  CHECK(last.run_index == 2);
  CHECK(last.runs == 2);
  CHECK(last.chain == report::ChainState::intact);
  REQUIRE(last.run.hosts.size() == 1);
  CHECK(last.run.hosts[0].name == "second");
  auto first = load(path, "run-1");
  CHECK(first.run.hosts[0].name == "first");
  CHECK(first.chain == report::ChainState::intact);
  report::Source src;
  std::string err;
  CHECK(report::load_source(path, "run-9", &src, &err) == report::LoadError::usage);
  CHECK(err == "--run run-9: no run of that id in " + path + " (it has: run-1, run-2)");
}

TEST_CASE("report source: an edited line breaks the chain, a foreign file is no transcript",
          "[report]") {
  std::string dir = temp_dir("ratchet-report");
  std::string path = dir + "/t.jsonl";
  write_sample_run(path, {"box"}, {{"a", "A"}});
  std::string text = read_file(path);
  auto at = text.find("note of a");
  REQUIRE(at != std::string::npos);
  text.replace(at, 9, "note of b");
  write_file(path, text);
  auto src = load(path);
  CHECK(src.chain == report::ChainState::broken);
  CHECK(src.chain_text.find("prev does not match") != std::string::npos);
  CHECK(report::render_page(src).find(R"(id="chain-broken")") != std::string::npos);

  write_file(dir + "/x.jsonl", "{\"hello\": 1}\n");
  std::string err;
  CHECK(report::load_source(dir + "/x.jsonl", "", &src, &err) == report::LoadError::usage);
  CHECK(err.find(dir + "/x.jsonl is not a ratchet transcript") == 0);
  write_file(dir + "/empty.jsonl", "");
  CHECK(report::load_source(dir + "/empty.jsonl", "", &src, &err) == report::LoadError::no_event);
  CHECK(report::load_source(dir + "/missing.jsonl", "", &src, &err) == report::LoadError::usage);
  CHECK(err.find(dir + "/missing.jsonl") != std::string::npos);
}

TEST_CASE("report page: a holder's nodes (a container's own node of the device) and threads are shown, as text",
          "[report]") {
  using nlohmann::json;
  std::string path = temp_dir("ratchet-report") + "/t.jsonl";
  SampleStep s{"gpu", "GPU free", "failed", "", 1};
  s.holder_nodes = json::array({{{"target", "/dev/nvidia0"},
                                 {"node", "/x/<b>nvidia0</b>\n"},
                                 {"device", "195:0"},
                                 {"mount_ns", "4026532711"},
                                 {"deleted", true}},
                                {{"target", "/dev/nvidia1"}, {"node", "/dev/nv&1"}, {"device", "195:1"}}});
  s.holder_threads = json::array({{{"tid", 4250}, {"target", "/dev/nvidia2"}}});
  write_sample_run(path, {"box"}, {s});
  auto src = load(path);
  REQUIRE(src.run.hosts.size() == 1);
  REQUIRE(src.run.hosts[0].steps.size() == 1);
  REQUIRE(src.run.hosts[0].steps[0].evidence.size() == 1);
  const auto& h = src.run.hosts[0].steps[0].evidence[0].holders.at(0);
  REQUIRE(h.nodes.size() == 2);
  CHECK(h.nodes[0].node == "/x/<b>nvidia0</b>\n");
  CHECK(h.nodes[0].mount_ns == "4026532711");
  CHECK(h.nodes[0].deleted);
  CHECK(h.nodes[1].mount_ns.empty());
  CHECK_FALSE(h.nodes[1].deleted);
  REQUIRE(h.threads.size() == 1);
  CHECK(h.threads[0].tid == "4250");
  auto page = report::render_page(src);
  // The words of `ratchet show`, escaped: no markup, the newline as \n.
  CHECK(page.find(R"(<div class="node">holds the deleted node &quot;/x/&lt;b&gt;nvidia0&lt;/b&gt;\n&quot; of mount )"
                  R"(namespace 4026532711: same device 195:0 as /dev/nvidia0</div>)") != std::string::npos);
  CHECK(page.find(R"(<div class="node">holds /dev/nv&amp;1: same device 195:1 as /dev/nvidia1</div>)") !=
        std::string::npos);
  CHECK(page.find(R"(<div class="node">holds /dev/nvidia2 through its thread 4250 (a descriptor table of its own)</div>)") !=
        std::string::npos);
  CHECK(page.find("/x/<b>") == std::string::npos);
  // A holder without nodes has none shown.
  write_sample_run(path, {"box"}, {{"a", "A"}}, "r2");
  CHECK(report::render_page(load(path)).find(R"(class="node")") == std::string::npos);
}
