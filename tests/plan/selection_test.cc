// plan::select_steps: --tags, --skip-tags, --start-at, --step, and the
// dependency rule (a kept step may not read a dropped one's results).
#include <catch2/catch.hpp>

#include <fstream>

#include "plan/selection.h"
#include "playbook/loader.h"
#include "support/scratch_dir.h"

using namespace ratchet;

namespace {

const std::string& scratch() {
  static const testing::ScratchDir dir("ratchet-selection");
  return dir.path;
}

const char* kBook = R"(name = "sel"
[[step]]
id = "stop"
kind = "run"
command = "true"
tags = ["service"]

[[step]]
id = "find"
kind = "run"
command = "echo 42"
tags = ["gpu"]

[[step]]
id = "use"
kind = "run"
command = "echo {{ steps.find.stdout }}"
tags = ["gpu", "notes"]

[[step]]
id = "start"
kind = "run"
command = "true"
tags = ["service"]
)";

playbook::Playbook book() {
  std::string path = scratch() + "/sel.toml";
  std::ofstream(path) << kBook;
  std::vector<playbook::LoadError> errors;
  auto pb = playbook::load_playbook(path, {}, &errors);
  for (const auto& e : errors) FAIL_CHECK(playbook::format_error(e));
  REQUIRE(pb);
  return *pb;
}

struct Result {
  bool ok = false;
  std::vector<std::string> kept;
  std::vector<std::string> left;  // "id: reason"
  std::string err;
};

Result select(const plan::Selection& sel) {
  playbook::Playbook pb = book();
  Result r;
  std::vector<bool> keep;
  std::vector<plan::Unselected> out;
  r.ok = plan::select_steps(pb, sel, &keep, &out, &r.err);
  for (size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) r.kept.push_back(pb.steps[i].id);
  for (const auto& u : out) r.left.push_back(u.id + ": " + u.reason);
  return r;
}

}  // namespace

TEST_CASE("selection: none given keeps every step", "[plan][selection]") {
  auto r = select({});
  CHECK(r.ok);
  CHECK(r.kept == std::vector<std::string>{"stop", "find", "use", "start"});
  CHECK(r.left.empty());
}

TEST_CASE("selection: --tags keeps the steps with one of the tags and says why each other is left out", "[plan][selection]") {
  plan::Selection s;
  s.tags = {"service"};
  auto r = select(s);
  REQUIRE(r.ok);
  CHECK(r.kept == std::vector<std::string>{"stop", "start"});
  CHECK(r.left == std::vector<std::string>{"find: its tags (gpu) are not in --tags service",
                                           "use: its tags (gpu, notes) are not in --tags service"});
}

TEST_CASE("selection: --skip-tags drops the tagged steps", "[plan][selection]") {
  plan::Selection s;
  s.skip_tags = {"notes"};
  auto r = select(s);
  REQUIRE(r.ok);
  CHECK(r.kept == std::vector<std::string>{"stop", "find", "start"});
  CHECK(r.left == std::vector<std::string>{"use: tagged `notes` (--skip-tags notes)"});
}

TEST_CASE("selection: --start-at drops the steps before it", "[plan][selection]") {
  plan::Selection s;
  s.start_at = "find";
  auto r = select(s);
  REQUIRE(r.ok);
  CHECK(r.kept == std::vector<std::string>{"find", "use", "start"});
  CHECK(r.left == std::vector<std::string>{"stop: before --start-at find"});
}

TEST_CASE("selection: --step keeps exactly the steps named", "[plan][selection]") {
  plan::Selection s;
  s.steps = {"stop", "start"};
  auto r = select(s);
  REQUIRE(r.ok);
  CHECK(r.kept == std::vector<std::string>{"stop", "start"});
  CHECK(r.left == std::vector<std::string>{"find: not named by --step stop, --step start",
                                           "use: not named by --step stop, --step start"});
}

TEST_CASE("selection: dropping a step whose results a kept step reads is a usage error naming both", "[plan][selection]") {
  plan::Selection s;
  s.steps = {"use"};
  auto r = select(s);
  CHECK_FALSE(r.ok);
  CHECK(r.err == "the selection leaves out step `find` (not named by --step use), but step `use` (" + scratch() +
                     "/sel.toml:14:1) reads its results (`steps.find.stdout`): select `find` too (--step find, or "
                     "a tag it has), or leave `use` out");
  s.steps = {"find", "use"};
  CHECK(select(s).ok);
  plan::Selection skip;
  skip.skip_tags = {"gpu"};  // drops both: nothing reads a dropped step
  CHECK(select(skip).ok);
  // Left out by --start-at: --step cannot bring it back, starting earlier can.
  plan::Selection late;
  late.start_at = "use";
  CHECK(select(late).err == "the selection leaves out step `find` (before --start-at use), but step `use` (" +
                                scratch() + "/sel.toml:14:1) reads its results (`steps.find.stdout`): start at `find` "
                                "or earlier (--start-at find), or leave `use` out");
}

TEST_CASE("selection: one that keeps no step is a usage error", "[plan][selection]") {
  plan::Selection s;
  s.start_at = "start";
  s.steps = {"stop"};
  auto r = select(s);
  CHECK_FALSE(r.ok);
  CHECK(r.err == "the selection keeps no step: all 4 are left out (`stop`: before --start-at start); nothing would run");
}

TEST_CASE("selection: a tag or step that no step has is an error with the nearest", "[plan][selection]") {
  plan::Selection s;
  s.tags = {"gpus"};
  auto r = select(s);
  CHECK_FALSE(r.ok);
  CHECK(r.err == "--tags gpus: no step has the tag `gpus` (the tags are service, gpu, notes); did you mean `gpu`?");
  plan::Selection t;
  t.start_at = "strat";
  CHECK(select(t).err == "--start-at strat: the playbook has no step `strat` (did you mean `start`?)");
  plan::Selection u;
  u.steps = {"fnd"};
  CHECK(select(u).err == "--step fnd: the playbook has no step `fnd` (did you mean `find`?)");
}
