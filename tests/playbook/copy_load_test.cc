// copy's keys as the loader reads them, and its source tree read once at load
// (playbook/local_tree.h): modes, symlinks kept or followed, exclude, odd names.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "playbook/loader.h"
#include "playbook/local_files.h"
#include "playbook/local_tree.h"
#include "support/scratch_dir.h"
#include "util/hash.h"

using namespace ratchet::playbook;

namespace {

const std::string& scratch() {
  static const ratchet::testing::ScratchDir dir("ratchet-copy-load");
  return dir.path;
}

void put(const std::string& path, const std::string& text, mode_t mode = 0644) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  ::chmod(path.c_str(), mode);
}

// Loads `text` as pb.toml in scratch(); the errors, formatted, scratch cut ("" = loaded).
std::string errors_of(const std::string& text, std::optional<Playbook>* out = nullptr) {
  std::string path = scratch() + "/pb.toml";
  std::ofstream(path, std::ios::binary) << text;
  std::vector<LoadError> errors;
  auto pb = load_playbook(path, {}, &errors);
  std::string said;
  for (const auto& e : errors) said += format_error(e);
  for (size_t at; (at = said.find(scratch() + "/")) != std::string::npos;) said.erase(at, scratch().size() + 1);
  if (out) *out = pb;
  return said;
}

const char* kHead = "name = \"t\"\n[[step]]\nid = \"c\"\nkind = \"copy\"\n";

}  // namespace

TEST_CASE("copy reads its source tree at load with modes links and odd names", "[playbook][copy]") {
  const std::string src = scratch() + "/site";
  std::filesystem::remove_all(src);
  put(src + "/run.sh", "#!/bin/sh\necho hi\n", 0755);
  put(src + "/conf/a b\nc.txt", "odd name\n", 0640);
  put(src + "/conf/skip.tmp", "never sent\n");
  std::filesystem::create_symlink("conf/a b\nc.txt", src + "/link");
  std::optional<Playbook> pb;
  REQUIRE(errors_of(std::string(kHead) + "src = \"site\"\ndest = \"/srv/site\"\nexclude = [\"*.tmp\"]\n", &pb) == "");
  REQUIRE(pb);
  const LocalFile* f = local_file_of(*pb, pb->steps[0].body);
  REQUIRE(f);
  CHECK(f->role == "src");
  CHECK(f->path == src);  // absolute: a saved plan streams it from anywhere
  std::vector<std::string> rels;
  for (const auto& e : f->tree) rels.push_back(e.rel);
  CHECK(rels == std::vector<std::string>{"", "conf", "conf/a b\nc.txt", "link", "run.sh"});
  const TreeEntry& odd = f->tree[2];
  CHECK(odd.type == TreeEntry::Type::file);
  CHECK(odd.mode == 0640);
  CHECK(odd.size == 9);
  CHECK(odd.sha256 == ratchet::util::sha256_hex("odd name\n"));
  CHECK(f->tree[3].type == TreeEntry::Type::link);
  CHECK(f->tree[3].link == "conf/a b\nc.txt");
  CHECK(f->tree[4].mode == 0755);

  SECTION("follow = true reads what the link names") {
    std::vector<TreeEntry> t;
    std::string err;
    REQUIRE(read_tree(src, {true, {"*.tmp"}}, &t, &err));
    CHECK(t[3].rel == "link");
    CHECK(t[3].type == TreeEntry::Type::file);
    CHECK(t[3].sha256 == odd.sha256);
  }
  SECTION("a directory loop under follow is an error") {
    std::filesystem::create_directory_symlink("..", src + "/conf/up");
    std::vector<TreeEntry> t;
    std::string err;
    CHECK_FALSE(read_tree(src, {true, {}}, &t, &err));
    CHECK(err.find("contains itself through a symlink") != std::string::npos);
    std::filesystem::remove(src + "/conf/up");
  }
}

TEST_CASE("copy: bad keys are errors at their place", "[playbook][copy]") {
  put(scratch() + "/one.txt", "x\n");
  CHECK(errors_of(std::string(kHead) + "dest = \"/srv/x\"\n").find("pb.toml:2:1: error: step `c`: copy needs `src`") !=
        std::string::npos);
  CHECK(errors_of(std::string(kHead) + "src = \"one.txt\"\n").find("copy needs `dest`") != std::string::npos);
  CHECK(errors_of(std::string(kHead) + "src = \"one.txt\"\ndest = \"srv/x\"\n").find("`dest` must be absolute") !=
        std::string::npos);
  CHECK(errors_of(std::string(kHead) + "src = \"one.txt\"\ndest = \"/srv/x\"\nmode = \"999\"\n").find("pb.toml:7:8") !=
        std::string::npos);
  CHECK(errors_of(std::string(kHead) + "src = \"missing\"\ndest = \"/srv/x\"\n")
            .find("cannot read copy source `missing`: cannot read missing") != std::string::npos);
  CHECK(errors_of(std::string(kHead) + "[vars]\nd = \"x\"\n").find("copy needs") != std::string::npos);
  std::string t = errors_of("name = \"t\"\n[vars]\nd = \"one.txt\"\n[[step]]\nid = \"c\"\nkind = \"copy\"\n"
                            "src = \"{{ d }}\"\ndest = \"/srv/x\"\n");
  CHECK(t.find("pb.toml:7:7: error: `src` must be a literal path: the copy source is read once") != std::string::npos);
  CHECK(errors_of(std::string(kHead) + "src = \"one.txt\"\ndest = \"/srv/x\"\nfollow = \"yes\"\n").find("`follow`") !=
        std::string::npos);
  CHECK(errors_of(std::string(kHead) + "src = \"one.txt\"\ndest = \"/srv/x\"\nexclude = [\"*\"]\n") == "");  // the source itself is never excluded
  CHECK(errors_of(std::string(kHead) + "src = \"one.txt\"\ndest = \"/srv/x\"\nowner = \"root\"\n") == "");
}
