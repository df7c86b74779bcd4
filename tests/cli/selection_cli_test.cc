// The binary's step selection (--tags, --skip-tags, --start-at, --step) and
// includes, where nothing connects: plan's output, usage errors, the saved
// plan carrying its selection, apply refusing a changed piece or new flags.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/local_proc.h"

using namespace ratchet::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct Dir {
  std::string dir = temp_dir("ratchet-select");
  std::string inv = dir + "/inventory.toml";
  Dir() {
    // Port 1 on loopback: nothing here connects to it.
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = 1\nuser = \"root\"\n";
  }
  std::string put(const std::string& name, const std::string& text) {
    fs::path p = fs::path(dir) / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  ShellResult ratchet(const std::string& args) { return bare(args + " -F none"); }
  ShellResult bare(const std::string& args) {  // apply takes no -F: the plan holds it
    return run_sh("cd '" + dir + "' && " + RATCHET_BINARY + " " + args);
  }
};

const char* kPiece = R"([vars]
what = "piece"

[[step]]
id = "check"
kind = "run"
command = "echo {{ what }}"
tags = ["gpus"]

[[step]]
id = "tell"
kind = "run"
command = "echo {{ steps.check.rc }}"
tags = ["gpus"]
)";

const char* kBook = R"(name = "sel"
[[step]]
id = "stop"
kind = "run"
command = "echo stop"
tags = ["service"]

[[step]]
id = "free"
include = "common/piece.toml"

[[step]]
id = "notes"
kind = "run"
command = "echo {{ steps.free.check.rc }}"
tags = ["gpus", "notes"]

[[step]]
id = "start"
kind = "run"
command = "echo start"
tags = ["service"]
)";

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

}  // namespace

TEST_CASE("plan --tags prints the selection and each step it left out with why", "[cli][selection]") {
  Dir d;
  d.put("common/piece.toml", kPiece);
  d.put("pb.toml", kBook);
  auto r = d.ratchet("plan pb.toml -i inventory.toml --tags gpus");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("selection: --tags gpus; 2 step(s) left out:\n"
                   "  not selected: stop: its tags (service) are not in --tags gpus\n"
                   "  not selected: start: its tags (service) are not in --tags gpus\n") != std::string::npos);
  CHECK(r.out.find("1. free.check [run]") != std::string::npos);
  CHECK(r.out.find("2. free.tell [run]") != std::string::npos);
  CHECK(r.out.find("3. notes [run]") != std::string::npos);
  CHECK(r.out.find("stop [run]") == std::string::npos);
  // Where the included steps came from.
  CHECK(r.out.find("       from common/piece.toml:4:1, included from pb.toml:8:1\n") != std::string::npos);
  // The rewritten reference inside the piece.
  CHECK(r.out.find("echo <steps.free.check.rc>") != std::string::npos);
  auto j = d.ratchet("plan pb.toml -i inventory.toml --tags gpus --json");
  REQUIRE(j.code == 0);
  json doc = json::parse(j.out);
  CHECK(doc["not_selected"] == json::parse(R"([{"step": "stop", "reason": "its tags (service) are not in --tags gpus"},
                                               {"step": "start", "reason": "its tags (service) are not in --tags gpus"}])"));
  CHECK(doc["hosts"][0]["steps"].size() == 3);
  CHECK(doc["hosts"][0]["steps"][0]["source"] == "common/piece.toml:4:1, included from pb.toml:8:1");
}

TEST_CASE("a selection that drops a step a kept step reads is a usage error naming both", "[cli][selection]") {
  Dir d;
  d.put("common/piece.toml", kPiece);
  d.put("pb.toml", kBook);
  auto r = d.ratchet("plan pb.toml -i inventory.toml --step notes");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "ratchet: error: the selection leaves out step `free.check` (not named by --step notes), but step `notes` "
        "(pb.toml:12:1) reads its results (`steps.free.check.rc`): select `free.check` too (--step free.check, or a "
        "tag it has), or leave `notes` out\nsee 'ratchet plan --help'\n");
  // Naming the include selects all its steps.
  auto ok = d.ratchet("plan pb.toml -i inventory.toml --step free --step notes");
  INFO(ok.err);
  CHECK(ok.code == 0);
  // run refuses the same before connecting (port 1 would fail as unreachable, 3).
  auto run = d.ratchet("run pb.toml -i inventory.toml --step notes --transcript t.jsonl");
  CHECK(run.code == 2);
  CHECK_FALSE(fs::exists(d.dir + "/t.jsonl"));
  auto bad = d.ratchet("plan pb.toml -i inventory.toml --skip-tags note");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--skip-tags note: no step has the tag `note` (the tags are service, gpus, notes); did you mean "
                     "`notes`?") != std::string::npos);
  auto start = d.ratchet("plan pb.toml -i inventory.toml --start-at notes --skip-tags service");
  CHECK(start.code == 2);  // notes reads free.check, before --start-at
  CHECK(start.err.find("leaves out step `free.check` (before --start-at notes)") != std::string::npos);
}

TEST_CASE("a saved plan carries its selection and apply runs it and refuses selection flags", "[cli][selection]") {
  Dir d;
  d.put("common/piece.toml", kPiece);
  d.put("pb.toml", kBook);
  auto r = d.ratchet("plan pb.toml -i inventory.toml --skip-tags service --out p.json");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  json file = json::parse(slurp(d.dir + "/p.json"));
  CHECK(file["selection"]["skip_tags"] == json::array({"service"}));
  CHECK(file["not_selected"].size() == 2);
  CHECK(file["hosts"][0]["steps"].size() == 3);
  bool piece = false;
  for (const auto& s : file["sources"])
    piece |= s["role"] == "include" && s["path"] == fs::canonical(d.dir).string() + "/common/piece.toml";
  CHECK(piece);
  auto a = d.bare("apply p.json --tags gpus");
  CHECK(a.code == 2);
  CHECK(a.err.find("ratchet: error: --tags, --skip-tags, --start-at and --step choose steps when a plan is made: "
                   "p.json runs the steps its plan holds (it leaves out 2 step(s)); make the plan again") == 0);
  // The piece changed after the plan was made: refused like the playbook.
  d.put("common/piece.toml", std::string(kPiece) + "# edited\n");
  auto stale = d.bare("apply p.json");
  CHECK(stale.code == 2);
  CHECK(stale.err.find("included file " + fs::canonical(d.dir).string() +
                       "/common/piece.toml changed since the plan was made") != std::string::npos);
  CHECK(stale.err.find("nothing was run") != std::string::npos);
}
