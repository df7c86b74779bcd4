// `include` (playbook/include.cc): steps of another file in place, their ids
// prefixed, their references rewritten, errors at both places.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "playbook/loader.h"
#include "playbook/local_files.h"
#include "playbook/schema.h"
#include "support/scratch_dir.h"

using namespace ratchet::playbook;
namespace fs = std::filesystem;

namespace {

const std::string& scratch() {
  static const ratchet::testing::ScratchDir dir("ratchet-include");
  return dir.path;
}

// Writes `text` at scratch()/name (directories made); returns the path.
std::string put(const std::string& name, const std::string& text) {
  fs::path p = fs::path(scratch()) / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

// Every error of loading scratch()/pb.toml, formatted, the scratch dir cut.
std::string errors_of(const std::string& pb, const LoadOptions& opt = {}) {
  std::vector<LoadError> errors;
  auto loaded = load_playbook(put("pb.toml", pb), opt, &errors);
  std::string out;
  for (const auto& e : errors) out += format_error(e);
  for (size_t at; (at = out.find(scratch() + "/")) != std::string::npos;) out.erase(at, scratch().size() + 1);
  return loaded ? "(loaded)" : out;
}

Playbook load_ok(const std::string& pb, const LoadOptions& opt = {}) {
  std::vector<LoadError> errors;
  auto loaded = load_playbook(put("pb.toml", pb), opt, &errors);
  for (const auto& e : errors) FAIL_CHECK(format_error(e));
  REQUIRE(loaded);
  return *loaded;
}

const char* kPiece = R"(# a reviewed piece
[vars]
devices = ["/dev/nvidia*"]
keep = ["nvidia-persistenced"]

[[step]]
id = "gpus_free"
kind = "verify"
no_holders = "{{ devices }}"
exclude = "{{ keep }}"
tags = ["gpu"]

[[step]]
id = "report"
kind = "run"
register = "said"
command = "printf '%s\n' {{ steps.gpus_free.holders }} {{ steps.gpus_free.status }}"
)";

std::string written(const Action& a, const char* key) {
  std::string out;
  each_key(a, [&](const FieldSpec& f, const FieldBase& b) {
    if (f.name == key && b.written) out = b.written->as_string();
  });
  return out;
}

}  // namespace

TEST_CASE("include: the piece's steps in place with prefixed ids and rewritten references", "[playbook][include]") {
  put("common/free.toml", kPiece);
  Playbook pb = load_ok(R"(name = "x"
[[step]]
id = "stop"
kind = "run"
command = "true"

[[step]]
id = "free"
include = "common/free.toml"
tags = ["handover"]

[[step]]
id = "notes"
kind = "run"
command = "echo {{ steps.free.gpus_free.status }} {{ steps.free.said.stdout }}"
)");
  REQUIRE(pb.steps.size() == 4);
  CHECK(pb.steps[0].id == "stop");
  CHECK(pb.steps[1].id == "free.gpus_free");
  CHECK(pb.steps[2].id == "free.report");
  CHECK(pb.steps[2].register_as == "free.said");
  CHECK(pb.steps[3].id == "notes");
  // The piece's own references name its steps under the include's id.
  CHECK(written(pb.steps[2].body, "command") ==
        "printf '%s\n' {{ steps.free.gpus_free.holders }} {{ steps.free.gpus_free.status }}");
  // Tags: the step's own, then the include entry's.
  CHECK(pb.steps[1].tags == std::vector<std::string>{"gpu", "handover"});
  CHECK(pb.steps[2].tags == std::vector<std::string>{"handover"});
  // Where each step came from: the piece's line, then the include site.
  CHECK(pb.steps[1].where.file == scratch() + "/common/free.toml");
  CHECK(pb.steps[1].where.line == 6);
  REQUIRE(pb.steps[1].included_from.size() == 1);
  CHECK(pb.steps[1].included_from[0].str() == scratch() + "/pb.toml:7:1");
  CHECK(origin(pb.steps[1]) == scratch() + "/common/free.toml:6:1, included from " + scratch() + "/pb.toml:7:1");
  REQUIRE(pb.includes.size() == 1);
  CHECK(pb.includes[0].path == scratch() + "/common/free.toml");
  CHECK(pb.includes[0].sha256.size() == 64);
  // The piece's [vars] are the playbook's defaults.
  CHECK(pb.vars["devices"].as_array().at(0).as_string() == "/dev/nvidia*");
  // References check out: later steps read steps.free.ID.*.
  std::vector<LoadError> errors;
  check_references(pb, nullptr, &errors);
  for (const auto& e : errors) FAIL_CHECK(format_error(e));
}

TEST_CASE("include: vars are the piece's defaults and the include's vars win and -e wins over both", "[playbook][include]") {
  put("common/free.toml", kPiece);
  const std::string pb = R"(name = "x"
[[step]]
id = "free"
include = "common/free.toml"
vars = { keep = ["a", "b"] }
)";
  Playbook plain = load_ok(pb);
  CHECK(ratchet::util::toml_text(plain.vars["keep"]) == R"(["a", "b"])");
  CHECK(ratchet::util::toml_text(plain.vars["devices"]) == R"(["/dev/nvidia*"])");
  LoadOptions opt;
  opt.extra_vars = {{"keep", R"(["c"])"}, {"devices", R"(["/tmp/x*"])"}};
  Playbook e = load_ok(pb, opt);
  CHECK(ratchet::util::toml_text(e.vars["keep"]) == R"(["c"])");
  CHECK(ratchet::util::toml_text(e.vars["devices"]) == R"(["/tmp/x*"])");
  // The playbook's own [vars] win over a piece's default ...
  Playbook own = load_ok(R"(name = "x"
[vars]
devices = ["/dev/own*"]
[[step]]
id = "free"
include = "common/free.toml"
)");
  CHECK(ratchet::util::toml_text(own.vars["devices"]) == R"(["/dev/own*"])");
  // ... and an include's `vars` that disagree with them is refused, not picked.
  CHECK(errors_of(R"(name = "x"
[vars]
keep = ["z"]
[[step]]
id = "free"
include = "common/free.toml"
vars = { keep = ["a"] }
)") == "pb.toml:7:17: error: var `keep` is [\"a\"] here but [\"z\"] at pb.toml:3:8: a playbook's vars have one "
       "value each, shared by every step (give the piece's var another name, or set it in one place)\n"
       "    vars = { keep = [\"a\"] }\n"
       "                    ^\n");
}

TEST_CASE("include: an error in the piece names its line and the include site", "[playbook][include]") {
  put("common/bad.toml", R"([[step]]
id = "k"
kind = "kill"
pidfile = "/run/x.pid"
)");
  CHECK(errors_of(R"(name = "x"

[[step]]
id = "bad"
include = "common/bad.toml"
)") == "common/bad.toml:4:1: error: unknown key `pidfile` in step `k` (included from pb.toml:3:1) "
       "(did you mean `pid_file`?)\n"
       "    pidfile = \"/run/x.pid\"\n"
       "    ^\n"
       "common/bad.toml:1:1: error: step `k`: kill needs one selector: `pid`, `pid_file`, `pattern` or `holders_of` "
       "(included from pb.toml:3:1)\n"
       "    [[step]]\n"
       "    ^\n");
  // Only [vars] and [[step]] in a piece.
  put("common/top.toml", "name = \"piece\"\n[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = \"true\"\n");
  CHECK(errors_of("name = \"x\"\n[[step]]\nid = \"t\"\ninclude = \"common/top.toml\"\n") ==
        "common/top.toml:1:1: error: an included file holds only [vars] and [[step]] tables, not `name` (included "
        "from pb.toml:2:1) (top-level keys belong in the playbook that includes it)\n"
        "    name = \"piece\"\n"
        "    ^\n");
  // The entry itself: only id, include, vars, tags.
  CHECK(errors_of("name = \"x\"\n[[step]]\nid = \"t\"\ninclude = \"common/top.toml\"\nkind = \"run\"\n") ==
        "pb.toml:5:1: error: an include entry takes `id`, `include`, `vars` and `tags` only, not `kind` (keys of the "
        "included steps go in the included file's [[step]] tables)\n"
        "    kind = \"run\"\n"
        "    ^\n");
  CHECK(errors_of("name = \"x\"\n[[step]]\nid = \"t\"\ninclude = \"common/none.toml\"\n") ==
        "pb.toml:4:11: error: cannot read included file `common/none.toml`: No such file or directory\n"
        "    include = \"common/none.toml\"\n"
        "              ^\n");
}

TEST_CASE("include: a template error found after loading names the piece and the site", "[playbook][include]") {
  put("common/tmpl.toml", "[[step]]\nid = \"a\"\nkind = \"run\"\ncommand = \"echo '{{ x }}'\"\n");
  CHECK(errors_of("name = \"x\"\n[vars]\nx = 1\n[[step]]\nid = \"t\"\ninclude = \"common/tmpl.toml\"\n") ==
        "common/tmpl.toml:4:18: error: `{{ x }}` inside quotes at col 7: values are quoted for you; remove the "
        "quotes (included from pb.toml:4:1)\n"
        "    command = \"echo '{{ x }}'\"\n"
        "                     ^\n");
}

TEST_CASE("include: a cycle is refused naming the chain", "[playbook][include]") {
  put("cyc/a.toml", "[[step]]\nid = \"to_b\"\ninclude = \"b.toml\"\n");
  put("cyc/b.toml", "[[step]]\nid = \"to_a\"\ninclude = \"a.toml\"\n");
  std::string out = errors_of("name = \"x\"\n[[step]]\nid = \"a\"\ninclude = \"cyc/a.toml\"\n");
  CHECK(out == "cyc/b.toml:3:11: error: include cycle: cyc/a.toml -> cyc/b.toml -> cyc/a.toml (included from "
               "cyc/a.toml:1:1, from pb.toml:2:1) (a piece cannot include itself)\n"
               "    include = \"a.toml\"\n"
               "              ^\n");
  // Itself, directly.
  CHECK(errors_of("name = \"x\"\n[[step]]\nid = \"me\"\ninclude = \"pb.toml\"\n").find("include cycle: pb.toml -> pb.toml") !=
        std::string::npos);
}

TEST_CASE("include: pieces nest with ids and references at each level", "[playbook][include]") {
  put("nest/inner.toml", "[[step]]\nid = \"probe\"\nkind = \"run\"\ncommand = \"true\"\n");
  put("nest/outer.toml", R"([[step]]
id = "in"
include = "inner.toml"

[[step]]
id = "use"
kind = "run"
command = "echo {{ steps.in.probe.rc }}"
)");
  Playbook pb = load_ok(R"(name = "x"
[[step]]
id = "out"
include = "nest/outer.toml"

[[step]]
id = "last"
kind = "run"
command = "echo {{ steps.out.in.probe.rc }} {{ steps.out.use.rc }}"
)");
  REQUIRE(pb.steps.size() == 3);
  CHECK(pb.steps[0].id == "out.in.probe");
  CHECK(pb.steps[1].id == "out.use");
  CHECK(written(pb.steps[1].body, "command") == "echo {{ steps.out.in.probe.rc }}");
  REQUIRE(pb.steps[0].included_from.size() == 2);
  CHECK(origin(pb.steps[0]) == scratch() + "/nest/inner.toml:1:1, included from " + scratch() +
                                   "/nest/outer.toml:1:1, included from " + scratch() + "/pb.toml:2:1");
  CHECK(pb.includes.size() == 2);
  std::vector<LoadError> errors;
  check_references(pb, nullptr, &errors);
  for (const auto& e : errors) FAIL_CHECK(format_error(e));
  // Deeper than 8: refused.
  for (int i = 0; i < 9; ++i)
    put(fmt::format("deep/{}.toml", i), fmt::format("[[step]]\nid = \"d\"\ninclude = \"{}.toml\"\n", i + 1));
  put("deep/9.toml", "[[step]]\nid = \"z\"\nkind = \"run\"\ncommand = \"true\"\n");
  CHECK(errors_of("name = \"x\"\n[[step]]\nid = \"d\"\ninclude = \"deep/0.toml\"\n").find("includes nest deeper than 8") !=
        std::string::npos);
}

TEST_CASE("include: a piece's local files are relative to the piece", "[playbook][include]") {
  put("lib/notes.tmpl", "holders: {{ steps.gpus_free.holders }}\n");
  put("lib/w.toml", "[[step]]\nid = \"w\"\nkind = \"write\"\npath = \"/tmp/n\"\ntemplate = \"notes.tmpl\"\n");
  Playbook pb = load_ok("name = \"x\"\n[[step]]\nid = \"lib\"\ninclude = \"lib/w.toml\"\n");
  REQUIRE(pb.steps.size() == 1);
  const LocalFile* f = local_file_of(pb, pb.steps[0].body);
  REQUIRE(f);
  CHECK(f->path == scratch() + "/lib/notes.tmpl");
  CHECK(f->bytes == "holders: {{ steps.gpus_free.holders }}\n");
}

TEST_CASE("include: the include's id is a step id: unique and [a-z0-9_]+", "[playbook][include]") {
  put("common/free.toml", kPiece);
  CHECK(errors_of("name = \"x\"\n[[step]]\nid = \"free\"\nkind = \"run\"\ncommand = \"true\"\n"
                  "[[step]]\nid = \"free\"\ninclude = \"common/free.toml\"\n") ==
        "pb.toml:7:6: error: duplicate step id `free` (first at pb.toml:3:6)\n"
        "    id = \"free\"\n"
        "         ^\n");
  CHECK(errors_of("name = \"x\"\n[[step]]\nid = \"Free.x\"\ninclude = \"common/free.toml\"\n") ==
        "pb.toml:3:6: error: step id `Free.x` must match [a-z0-9_]+ (try `free_x`)\n"
        "    id = \"Free.x\"\n"
        "         ^\n");
  // A step id of the playbook's own may not have a dot.
  CHECK(errors_of("name = \"x\"\n[[step]]\nid = \"a.b\"\nkind = \"run\"\ncommand = \"true\"\n").find(
            "step id `a.b` must match [a-z0-9_]+") != std::string::npos);
}

TEST_CASE("include: the shipped piece as examples/include/handover.toml uses it", "[playbook][include]") {
  const std::string root = RATCHET_SOURCE_DIR;
  std::vector<LoadError> errors;
  auto pb = load_playbook(root + "/examples/include/handover.toml", {}, &errors);
  for (const auto& e : errors) FAIL_CHECK(format_error(e));
  REQUIRE(pb);
  std::vector<std::string> ids;
  for (const auto& s : pb->steps) ids.push_back(s.id);
  CHECK(ids == std::vector<std::string>{"stop", "free.gpus_free", "free.holders_gone", "notes", "start"});
  CHECK(written(pb->steps[2].body, "command") ==
        "echo gpus_free: {{ steps.free.gpus_free.status }}, rung {{ steps.free.gpus_free.rung }}");
  CHECK(pb->steps[1].escalate.size() == 2);  // TERM, then KILL
  // The include's vars win over the piece's default; the piece's other default stays.
  CHECK(ratchet::util::toml_text(pb->vars["keep"]) == R"(["nvidia-persistenced"])");
  CHECK(ratchet::util::toml_text(pb->vars["devices"]) == R"(["/dev/nvidia*"])");
  REQUIRE(pb->includes.size() == 1);
  CHECK(pb->includes[0].path == root + "/playbooks/common/free-gpus.toml");
  check_references(*pb, nullptr, &errors);
  for (const auto& e : errors) FAIL_CHECK(format_error(e));
}
