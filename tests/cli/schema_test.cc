// `ratchet schema` checked by taplo (the validator Even Better TOML runs): every
// shipped playbook and inventory passes it, and every case of the bad-input
// corpus fails it, but those tests/corpus/schema-cannot-express.txt lists.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "support/local_proc.h"

using namespace ratchet::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kRoot = RATCHET_SOURCE_DIR;
// @taplo/cli, pinned in tests/report/browser/package-lock.json (scripts/setup.sh test runs npm ci there).
const fs::path kTaplo = kRoot / "tests/report/browser/node_modules/.bin/taplo";

// The schema file `ratchet schema which` writes, in a temp dir.
std::string schema_file(const std::string& dir, const std::string& which) {
  std::string path = dir + "/" + which + ".json";
  auto r = run_sh(std::string(RATCHET_BINARY) + " schema " + which + " > " + path);
  REQUIRE(r.code == 0);
  return path;
}

// The files of `files` that taplo finds invalid against `schema` (a syntax error counts).
std::set<std::string> invalid(const std::string& schema, const std::vector<std::string>& files) {
  std::string cmd = "'" + kTaplo.string() + "' lint --no-auto-config --colors never --schema 'file://" + schema + "'";
  for (const auto& f : files) cmd += " '" + f + "'";
  auto r = run_sh(cmd + " 2>&1");
  std::set<std::string> out;
  std::regex line("invalid file error=.* path=\"([^\"]+)\"");
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);)
    if (std::smatch m; std::regex_search(l, m, line)) out.insert(m[1]);
  CHECK((r.code == 0) == out.empty());  // taplo's exit code and its report agree
  return out;
}

}  // namespace

TEST_CASE("schema: shipped playbooks and inventories pass taplo", "[cli][schema]") {
  REQUIRE(fs::exists(kTaplo));  // scripts/setup.sh test installs it
  std::string dir = temp_dir("ratchet-schema");
  std::vector<std::string> playbooks, inventories, pieces;
  for (const char* d : {"playbooks", "examples"})
    for (const auto& e : fs::recursive_directory_iterator(kRoot / d))
      if (e.path().extension() == ".toml") {
        const std::string p = e.path().string();
        if (e.path().filename().string().find("inventory") != std::string::npos) inventories.push_back(p);
        else if (p.find("/common/") != std::string::npos) pieces.push_back(p);  // included by others
        else playbooks.push_back(p);
      }
  CHECK(playbooks.size() >= 2);
  CHECK(inventories.size() >= 1);
  CHECK(pieces.size() >= 1);
  CHECK(invalid(schema_file(dir, "playbook"), playbooks).empty());
  CHECK(invalid(schema_file(dir, "inventory"), inventories).empty());
  CHECK(invalid(schema_file(dir, "piece"), pieces).empty());
  // A piece is no playbook (no `name`), and a playbook no piece (top-level keys).
  CHECK(invalid(schema_file(dir, "playbook"), pieces).size() == pieces.size());
  CHECK(invalid(schema_file(dir, "piece"), playbooks).size() == playbooks.size());
}

TEST_CASE("schema: the bad-input corpus fails taplo where a schema can say so", "[cli][schema][corpus]") {
  REQUIRE(fs::exists(kTaplo));
  std::string dir = temp_dir("ratchet-schema");
  std::set<std::string> cannot;  // case names listed in schema-cannot-express.txt
  std::ifstream list(kRoot / "tests/corpus/schema-cannot-express.txt");
  for (std::string l; std::getline(list, l);)
    if (!l.empty() && l[0] != '#') cannot.insert(l.substr(0, l.find(' ')));
  CHECK(cannot.size() >= 5);
  std::vector<std::string> playbooks, inventories;
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(kRoot / "tests/corpus"))
    if (e.is_directory()) cases.push_back(e.path());
  for (const auto& c : cases) {
    playbooks.push_back((c / "playbook.toml").string());
    if (fs::exists(c / "inventory.toml")) inventories.push_back((c / "inventory.toml").string());
  }
  std::set<std::string> bad = invalid(schema_file(dir, "playbook"), playbooks);
  for (const auto& f : invalid(schema_file(dir, "inventory"), inventories)) bad.insert(f);
  for (const auto& c : cases) {
    std::string name = c.filename().string();
    INFO(name);
    bool failed = bad.contains((c / "playbook.toml").string()) || bad.contains((c / "inventory.toml").string());
    CHECK(failed == !cannot.contains(name));
  }
  for (const auto& n : cannot) {
    INFO(n);
    CHECK(fs::exists(kRoot / "tests/corpus" / n));  // no stale entry
  }
}
