// `write` of a file that has a POSIX ACL, extended attributes or more than one
// hard link (R26 in ../shared/cases/real-hosts.md), against a real sshd on
// 127.0.0.1, as root: what the file had before, it has after (getfacl,
// getfattr -d -m -), or the step's reason names what it could not keep.
// security.selinux is set as root without SELinux loaded (ext4 and tmpfs
// take it); the file lives under the scratch directory (ext4 here).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/files.h"
#include "support/local_proc.h"
#include "support/sshd_fixture.h"
#include "transcript/reader.h"

using namespace ratchet::testing;
using nlohmann::json;

namespace {

bool have_acl_tools() {
  return run_local("for t in setfacl getfacl setfattr getfattr; do command -v $t; done | wc -l") == "4\n";
}

json step_end(const std::string& t) {
  for (const auto& e : ratchet::transcript::read_transcript(t).events)
    if (e["event"] == "step_end" && e.value("step", "") == "w") return e;
  return json();
}

struct WriteLab {
  std::string dir = temp_dir("ratchet-write-attrs");
  SshdHost sshd;
  std::string inv = dir + "/inventory.toml";
  std::string file = dir + "/app.conf";

  explicit WriteLab(const std::string& path = "")
      : sshd(path.empty() ? "" : "EXTRA_SSHD_CONFIG='SetEnv PATH=" + path + "'") {
    std::ofstream(inv) << "[hosts.box]\naddress = \"127.0.0.1\"\nport = " << sshd.port()
                       << "\nuser = \"root\"\nidentity = \"" << sshd.client_key() << "\"\nknown_hosts = \""
                       << sshd.known_hosts() << "\"\n";
  }
  ShellResult write(const std::string& content, const std::string& t) {
    std::string pb = dir + "/pb.toml";
    write_file(pb, "name = \"w\"\ntargets = [\"box\"]\n[[step]]\nid = \"w\"\nkind = \"write\"\npath = \"" + file +
                       "\"\ncontent = \"" + content + "\"\n");
    return run_sh(std::string(RATCHET_BINARY) + " run " + pb + " -i " + inv + " -F none --transcript " + t);
  }
  /// Writes "new" (transcript t.jsonl): it must end `changed`; returns the step's reason.
  std::string write_new() {
    std::string t = dir + "/t.jsonl";
    auto r = write("new", t);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(step_end(t)["status"] == "changed");
    return step_end(t).value("reason", "");
  }
  /// The file as R26 has it: "old\n", an ACL entry for nobody, user.tag and security.selinux.
  void old_file_with_attrs() const {
    write_file(file, "old\n");
    REQUIRE(run_local("setfacl -m u:nobody:r " + file + " && setfattr -n user.tag -v x " + file +
                      " && setfattr -n security.selinux -v test " + file + " && echo ok") == "ok\n");
  }
  /// The file's ACL and every extended attribute, as getfacl and getfattr print them.
  std::string attrs() const {
    return run_local("getfacl -p " + file + " 2>&1; getfattr -d -m - " + file + " 2>&1");
  }
};

}  // namespace

TEST_CASE("write keeps the file's POSIX ACL, user.* and security.* attributes", "[ssh][write]") {
  if (!have_acl_tools()) FAIL("needs acl and attr (scripts/setup.sh test installs them)");
  WriteLab lab;
  lab.old_file_with_attrs();
  const std::string before = lab.attrs();
  REQUIRE(before.find("user:nobody:r--") != std::string::npos);
  REQUIRE(before.find("user.tag=\"x\"") != std::string::npos);
  REQUIRE(before.find("security.selinux=\"test\"") != std::string::npos);
  struct stat st0 {};
  REQUIRE(stat(lab.file.c_str(), &st0) == 0);
  CHECK(lab.write_new() == "");
  CHECK(run_local("cat " + lab.file) == "new");
  struct stat st1 {};
  REQUIRE(stat(lab.file.c_str(), &st1) == 0);
  CHECK(st1.st_ino != st0.st_ino);  // replaced by a rename, as always
  CHECK(lab.attrs() == before);
}

TEST_CASE("write of a file with two hard links warns that the other name keeps the old content", "[ssh][write]") {
  WriteLab lab;
  write_file(lab.file, "old\n");
  const std::string other = lab.dir + "/other-name.conf";
  REQUIRE(link(lab.file.c_str(), other.c_str()) == 0);
  CHECK(lab.write_new() == "warning: " + lab.file +
                               ": it had 2 hard links: only this name gets the new content, the other 1 keep the old");
  CHECK(run_local("cat " + lab.file) == "new");
  CHECK(run_local("cat " + other) == "old\n");
  // Run again: one link now, nothing to say.
  std::string t = lab.dir + "/t2.jsonl";
  lab.write("new", t);
  CHECK(step_end(t)["status"] == "ok");
}

TEST_CASE("write on a host without setfacl and setfattr names each attribute it could not keep", "[ssh][write]") {
  if (!have_acl_tools()) FAIL("needs acl and attr (scripts/setup.sh test installs them)");
  // A PATH of links to every tool of /usr/bin but setfacl and setfattr.
  std::string bin = temp_dir("ratchet-write-bin");
  REQUIRE(run_local("cd " + bin + " && for f in /usr/bin/* /usr/sbin/*; do case ${f##*/} in setfacl|setfattr) ;; "
                    "*) [ -e \"${f##*/}\" ] || ln -s \"$f\" .;; esac; done && echo ok") == "ok\n");
  WriteLab lab(bin);
  lab.old_file_with_attrs();
  CHECK(lab.write_new() == "warning: " + lab.file +
                               ": not kept: its POSIX ACL (no setfacl on the host), security.selinux (no setfattr on "
                               "the host), user.tag (no setfattr on the host)");
  CHECK(run_local("cat " + lab.file) == "new");
  CHECK(run_local("getfattr -d -m - " + lab.file) == "");
}
