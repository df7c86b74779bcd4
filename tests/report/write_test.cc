// The report file: mode 0600, replaced atomically, never written over a non-regular file.
#include "report/write.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "support/files.h"
#include "support/local_proc.h"

using namespace ratchet;
using namespace ratchet::testing;

namespace {

mode_t mode_of(const std::string& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

/// The names in `dir` but . and .. (a temp file left behind would show here).
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  REQUIRE(d);
  while (dirent* e = ::readdir(d))
    if (std::string n = e->d_name; n != "." && n != "..") out.push_back(n);
  ::closedir(d);
  return out;
}

}  // namespace

TEST_CASE("report write: a new file is 0600, an old one is replaced, no temp file stays",
          "[report]") {
  std::string dir = temp_dir("ratchet-report-write");
  std::string p = dir + "/r.html";
  auto old = ::umask(0);  // the mode does not come from the umask
  CHECK(report::write_private_atomic(p, "one").empty());
  ::umask(old);
  CHECK(mode_of(p) == 0600);
  CHECK(read_file(p) == "one");
  write_file(dir + "/open.html", "x");
  ::chmod((dir + "/open.html").c_str(), 0644);
  CHECK(report::write_private_atomic(dir + "/open.html", "two").empty());
  CHECK(mode_of(dir + "/open.html") == 0600);  // replaced, not rewritten in place
  CHECK(read_file(dir + "/open.html") == "two");
  CHECK(names_in(dir).size() == 2);
}

TEST_CASE("report write: refuses a directory, a symlink and a FIFO", "[report]") {
  std::string dir = temp_dir("ratchet-report-write");
  ::mkdir((dir + "/d").c_str(), 0700);
  write_file(dir + "/target", "keep");
  REQUIRE(::symlink((dir + "/target").c_str(), (dir + "/link").c_str()) == 0);
  REQUIRE(::mkfifo((dir + "/fifo").c_str(), 0600) == 0);
  CHECK(report::write_private_atomic(dir + "/d", "x") ==
        "cannot write report " + dir +
            "/d: it is a directory; a report goes to a regular file of its own");
  CHECK(report::write_private_atomic(dir + "/link", "x").find("it is a symbolic link") !=
        std::string::npos);
  CHECK(read_file(dir + "/target") == "keep");
  CHECK(report::write_private_atomic(dir + "/fifo", "x").find("it is a FIFO") != std::string::npos);
  CHECK(report::write_private_atomic(dir + "/nodir/r.html", "x").find("cannot write report") == 0);
  CHECK(names_in(dir).size() == 4);  // d, target, link, fifo: no temp file
}
