// copy's builder and judge (steps/copy.cc): a tree read at load in, one exact
// check and one action per entry out; each upload pins its file's sha256.
#include <catch2/catch.hpp>

#include "steps/copy.h"
#include "steps/kinds.h"
#include "support/exec_result.h"
#include "util/hash.h"

using namespace ratchet::steps;
using ratchet::playbook::TreeEntry;

namespace {

template <class T>
ratchet::playbook::Field<T> given(T v) {
  ratchet::playbook::Field<T> f;
  f.given = true;
  f.value = std::move(v);
  return f;
}

TreeEntry entry(TreeEntry::Type t, std::string rel, unsigned mode, std::string sha = "", std::string link = "") {
  TreeEntry e;
  e.type = t;
  e.rel = std::move(rel);
  e.path = "/local/site" + (e.rel.empty() ? "" : "/" + e.rel);
  e.mode = mode;
  e.size = 5;
  e.sha256 = std::move(sha);
  e.link = std::move(link);
  return e;
}

ratchet::transport::ExecResult result(int code, std::string out, std::string err = "") {
  ratchet::transport::ExecResult r;
  r.exit_code = code;
  r.out.data = std::move(out);
  r.err.data = std::move(err);
  return r;
}

}  // namespace

TEST_CASE("copy builds one check and one action per entry with the exact commands", "[steps][copy]") {
  const std::string sha(64, 'a');
  std::vector<TreeEntry> tree = {entry(TreeEntry::Type::dir, "", 0755), entry(TreeEntry::Type::file, "a b\nc", 0750, sha),
                                 entry(TreeEntry::Type::link, "l", 0777, "", "../x y")};
  ratchet::playbook::CopyAction a;
  a.src = given<std::string>("site");
  a.dest = given<std::string>("/srv/site/");
  a.owner = given<std::string>("www");
  BuildContext ctx;
  ctx.tree = &tree;
  Rung r;
  build_rung(a, ctx, &r);
  CHECK(r.kind == ratchet::playbook::Kind::copy);
  REQUIRE(r.check.size() == 3);
  CHECK(r.check[0].text == "ratchet_copy_stat /srv/site ''");
  CHECK(r.check[1].text == "ratchet_copy_stat /srv/site 'a b\nc'");
  CHECK(r.check[1].judge == Judge::copy);
  CHECK(*r.check[1].expect.entry == Expect::Entry{"/srv/site/a b\nc", "file", sha, "750", "www", ""});
  CHECK(*r.check[2].expect.entry == Expect::Entry{"/srv/site/l", "link", ratchet::util::sha256_hex("../x y\n"), "", "", ""});
  REQUIRE(r.action);
  CHECK(r.action->text == "ratchet_copy_dir /srv/site '' 0755 www ''");
  REQUIRE(r.more_actions.size() == 2);
  CHECK(r.more_actions[0].text == "ratchet_copy_file /srv/site 'a b\nc' " + sha + " 0750 www ''");
  REQUIRE(r.more_actions[0].stdin_file);
  CHECK(*r.more_actions[0].stdin_file == LocalInput{"/local/site/a b\nc", 5, sha});
  CHECK(r.more_actions[1].text == "ratchet_copy_link /srv/site l '../x y'");
  CHECK_FALSE(r.more_actions[1].stdin_file);

  SECTION("mode applies to files and a lone file lands at dest") {
    std::vector<TreeEntry> one = {entry(TreeEntry::Type::file, "", 0755, sha)};
    a.mode = given(ratchet::playbook::FileMode{"0600"});
    ctx.tree = &one;
    Rung r1;
    build_rung(a, ctx, &r1);
    CHECK(r1.check[0].text == "ratchet_copy_stat /srv site");
    CHECK(r1.action->text == "ratchet_copy_file /srv site " + sha + " 0600 www ''");
    CHECK(r1.check[0].expect.entry->mode == "600");
  }
}

TEST_CASE("copy's judge reads each state the host prints", "[steps][copy]") {
  Command c;
  c.judge = Judge::copy;
  c.expect.entry = Expect::Entry{"/srv/a", "file", std::string(64, 'b'), "644", "root", ""};
  const std::string b(64, 'b');
  CHECK(judge_check(c, result(0, "file " + b + " 644 root root\n")).holds);
  auto v = judge_check(c, result(0, "file " + std::string(64, 'c') + " 600 www root\n"));
  CHECK_FALSE(v.holds);
  CHECK(v.reason == "/srv/a: content differs; mode is 600, not 644; owner is www, not root");
  CHECK(judge_check(c, result(0, "absent\n")).reason == "/srv/a: absent");
  CHECK(judge_check(c, result(0, "dir 755 root root\n")).reason == "/srv/a: is a dir, not a file");
  v = judge_check(c, result(0, "escape\n", "ratchet: /srv/x is a symlink on the host: copy never writes through one\n"));
  CHECK_FALSE(v.holds);
  CHECK_FALSE(v.unknown);
  CHECK(v.reason == "/srv/a: /srv/x is a symlink on the host: copy never writes through one");
  v = judge_check(c, result(5, "", "ratchet: could not check: needs stat -c\n"));
  CHECK(v.unknown);
  CHECK(v.reason == "could not check: /srv/a: needs stat -c");
  c.expect.entry = std::nullopt;
  CHECK(judge_check(c, result(0, "absent\n")).unknown);
}
