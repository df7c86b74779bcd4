// The folder graph of src/ (ARCHITECTURE.md, "Layers"), held by a test until
// the build holds it (issue 28: one library per folder). Every `#include "..."`
// of a file in src/FOLDER/ that names another folder is an edge FOLDER -> OTHER;
// each must be in kEdges below, and kEdges only goes down the floors. An edge
// marked `// debt: issue 28` is one the intended layering does not want: it
// lists the files that take it today, and no other file may. Third-party
// headers have their folders too (kLibraries).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The floors, lowest first: a folder may include from a lower floor only.
// report/ sits beside engine/: it reads transcripts and runs nothing.
// "main" is src/main.cc; "generated" the headers CMake writes (build/generated/ratchet/).
const std::map<std::string, int, std::less<>> kFloor = {
    {"generated", -1}, {"util", 0},   {"transport", 1}, {"transcript", 2}, {"playbook", 3}, {"steps", 4},
    {"plan", 5},       {"engine", 6}, {"report", 6},    {"run", 7},        {"cli", 8},        {"main", 9},
};

struct Edge {
  std::string from, to;
  // The only files (src/-relative) that may take it; empty: any file of `from`.
  std::vector<std::string> only = {};
  // The intended layering does not want it (issue 28): its `only` list never grows.
  bool debt = false;
};
constexpr bool kDebt = true;

// Every folder -> folder edge of src/ today (ARCHITECTURE.md counts the #include lines of each).
const std::vector<Edge> kEdges = {
    {"transport", "util"},
    {"transport", "generated", {"transport/wire.cc"}},  // wire_scripts.inc: the wire's sh, joined by CMake
    {"transcript", "util"},
    {"transcript", "generated", {"transcript/run_events.cc"}},  // version.h: run_start's ratchet_version
    // debt: issue 28 (ExecResult, ConnectInfo: the seam's value types live in transport.h)
    {"transcript", "transport", {"transcript/record.h"}, kDebt},
    {"playbook", "util"},
    {"playbook", "transcript", {"playbook/template.cc"}},  // value_json: a table a template renders is its JSON
    // debt: issue 28 (jump_spec leaves transport/)
    {"playbook", "transport", {"playbook/inventory_loader.cc"}, kDebt},
    {"steps", "util"},
    {"steps", "playbook"},
    // debt: issue 28 (ExecResult in action.h and copy.h, Library in library.h)
    {"steps", "transport", {"steps/action.h", "steps/copy.h", "steps/library.h"}, kDebt},
    {"steps", "generated", {"steps/library.cc"}},  // host_library.inc: src/steps/lib/*.sh, joined by CMake
    {"plan", "util"},
    {"plan", "playbook"},
    {"plan", "steps"},
    {"plan", "transcript"},  // value_json: the one Value <-> JSON mapping, for the plan codec
    {"plan", "transport"},   // wire.h: the sudo argv the plan shows
    {"plan", "generated", {"plan/make.cc", "plan/scope.cc"}},  // version.h: made.ratchet_version, ratchet.version
    {"engine", "util"},
    {"engine", "transport"},
    {"engine", "transcript"},
    {"engine", "playbook"},
    {"engine", "steps"},
    {"engine", "plan"},
    {"report", "util"},
    {"report", "transcript"},
    {"run", "util"},
    {"run", "transport"},   // Endpoint: how a host is reached (request.h)
    {"run", "transcript"},  // the writer and the run's events
    {"run", "playbook"},
    {"run", "steps"},       // library.h: the host_library event
    {"run", "plan"},
    {"run", "engine"},
    {"cli", "util"},
    {"cli", "transport"},  // --transport, keepalive, Endpoint (endpoint_for is run set-up: ARCHITECTURE.md)
    {"cli", "transcript"},
    {"cli", "playbook"},
    {"cli", "plan"},
    {"cli", "report"},
    {"cli", "run"},
    // debt: issue 28 (apply's freshness check is made in cli/; own_vars renders a step)
    {"cli", "steps", {"cli/apply_cmd.cc", "cli/own_vars.cc"}, kDebt},
    // debt: issue 28 (the printing side takes engine types)
    {"cli", "engine",
     {"cli/live_progress.h", "cli/plan_cmd.cc", "cli/printer.h", "cli/probe_cmd.cc", "cli/recap.h"}, kDebt},
    {"cli", "generated",  // version.h
     {"cli/app.cc", "cli/apply_cmd.cc", "cli/own_vars.cc"}},
    {"main", "cli"},
};

// Third-party headers (#include <PREFIX...>) and the folders that may include them.
struct Library {
  std::string prefix;
  std::vector<Edge> users;  // `from`: a folder; `to` unused; `only` and `debt` as in kEdges
};

const std::vector<Library> kLibraries = {
    {"libssh/", {{"transport", ""}}},
    {"CLI/", {{"cli", ""}}},
    {"toml++/",
     {{"playbook", ""},
      {"util", "", {"util/value.cc"}, kDebt}}},  // debt: issue 28 (toml++ in playbook/ only; toml_text quotes with it)
    {"nlohmann/",
     {{"transcript", ""},
      {"plan", "", {"plan/codec.h"}},
      {"playbook", "", {"playbook/json_schema.h"}},  // `ratchet schema`
      {"cli", "", {"cli/hosts_cmd.cc"}, kDebt}}},     // debt: issue 28 (no JSON outside transcript/ and the codec)
    {"openssl/", {{"util", ""}, {"transport", ""}}},
};

// One #include line of a file under src/.
struct Include {
  std::string file;    // src/-relative, "steps/gpus.cc"
  int line = 0;
  std::string target;  // as written between the quotes or angle brackets
  bool quoted = true;
};

const fs::path& src_dir() {
  static const fs::path dir = fs::path(RATCHET_SOURCE_DIR) / "src";
  return dir;
}

// "steps/gpus.cc" -> "steps"; "main.cc" -> "main".
std::string folder_of_file(const std::string& rel) {
  auto slash = rel.find('/');
  return slash == std::string::npos ? "main" : rel.substr(0, slash);
}

// "engine/host_run.h" -> "engine"; "ratchet/version.h" -> "generated"; "x.h" -> "".
std::string folder_of_include(const std::string& target) {
  auto slash = target.find('/');
  if (slash == std::string::npos) return "";
  std::string f = target.substr(0, slash);
  return f == "ratchet" ? "generated" : f;
}

std::vector<Include> includes_of_src() {
  std::vector<Include> out;
  for (const auto& e : fs::recursive_directory_iterator(src_dir())) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
    const std::string rel = fs::relative(e.path(), src_dir()).generic_string();
    std::ifstream in(e.path());
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      std::string_view s(line);
      while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
      if (s.empty() || s.front() != '#') continue;
      s.remove_prefix(1);
      while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
      if (s.substr(0, 7) != "include") continue;
      s.remove_prefix(7);
      while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
      if (s.empty() || (s.front() != '"' && s.front() != '<')) continue;
      const char close = s.front() == '"' ? '"' : '>';
      auto end = s.find(close, 1);
      if (end == std::string_view::npos) continue;
      out.push_back({rel, n, std::string(s.substr(1, end - 1)), close == '"'});
    }
  }
  std::sort(out.begin(), out.end(), [](const Include& a, const Include& b) {
    return a.file != b.file ? a.file < b.file : a.line < b.line;
  });
  return out;
}

std::string where(const Include& i) {
  return "src/" + i.file + ":" + std::to_string(i.line) + ": #include " + (i.quoted ? "\"" : "<") + i.target +
         (i.quoted ? "\"" : ">");
}

int floor_of(const std::string& folder) {
  auto it = kFloor.find(folder);
  return it == kFloor.end() ? -2 : it->second;
}

const Edge* find_edge(const std::string& from, const std::string& to) {
  for (const auto& e : kEdges)
    if (e.from == from && e.to == to) return &e;
  return nullptr;
}

bool listed(const std::vector<std::string>& only, const std::string& file) {
  return only.empty() || std::find(only.begin(), only.end(), file) != only.end();
}

// Why include `i` breaks the layering, or "" when it does not.
std::string problem(const Include& i) {
  const std::string from = folder_of_file(i.file);
  const std::string to = folder_of_include(i.target);
  if (to.empty() || i.target.find("..") != std::string::npos)
    return where(i) + ": write a header of src/ as FOLDER/FILE from src/ (the layout check reads the folder from it)";
  if (to == from) return "";
  if (floor_of(from) == -2) return where(i) + ": folder " + from + " is not in the test's table (tests/layout_test.cc)";
  const std::string edge = from + " -> " + to;
  if (floor_of(to) == -2)
    return where(i) + ": " + edge + ": no folder src/" + to + " in the test's table (tests/layout_test.cc)";
  const Edge* e = find_edge(from, to);
  if (e == nullptr) {
    const char* way = floor_of(to) > floor_of(from)    ? "an upward include"
                      : floor_of(to) == floor_of(from) ? "a sideways include"
                                                        : "a new downward edge";
    return where(i) + ": " + edge + " is " + way + ", which the layering does not allow (ARCHITECTURE.md, Layers)";
  }
  if (!listed(e->only, i.file))
    return where(i) + ": " + edge + " may be taken only by the " + std::to_string(e->only.size()) +
           " file(s) the table names" +
           (e->debt ? ": a debt (issue 28) whose list never grows (ARCHITECTURE.md, Known debts)" : "");
  return "";
}

}  // namespace

TEST_CASE("layout: every include between folders of src/ is an edge the layering allows", "[layout]") {
  const auto incs = includes_of_src();
  REQUIRE(incs.size() > 300);  // the scan found src/
  std::vector<std::string> problems;
  for (const auto& i : incs)
    if (i.quoted)
      if (auto p = problem(i); !p.empty()) problems.push_back(p);
  INFO("each line: the file, the line, the include and the edge it adds");
  CHECK(problems == std::vector<std::string>{});
}

TEST_CASE("layout: the allowed folder edges only go down the floors", "[layout]") {
  std::vector<std::string> wrong;
  for (const auto& e : kEdges) {
    if (!kFloor.count(e.from) || !kFloor.count(e.to)) {
      wrong.push_back(e.from + " -> " + e.to + ": a folder without a floor");
      continue;
    }
    if (floor_of(e.to) >= floor_of(e.from)) wrong.push_back(e.from + " -> " + e.to + ": not downward");
  }
  CHECK(wrong == std::vector<std::string>{});
}

TEST_CASE("layout: every allowed edge and every debt file is still taken", "[layout]") {
  // So the table stays today's graph: a debt paid leaves it.
  std::set<std::pair<std::string, std::string>> taken;
  std::set<std::string> files_taken;
  for (const auto& i : includes_of_src()) {
    if (!i.quoted) continue;
    const std::string from = folder_of_file(i.file), to = folder_of_include(i.target);
    taken.insert({from, to});
    files_taken.insert(from + " -> " + to + " " + i.file);
  }
  std::vector<std::string> stale;
  for (const auto& e : kEdges) {
    if (!taken.count({e.from, e.to})) stale.push_back(e.from + " -> " + e.to + ": no include takes it now");
    for (const auto& f : e.only)
      if (!files_taken.count(e.from + " -> " + e.to + " " + f))
        stale.push_back(e.from + " -> " + e.to + ": " + f + " no longer takes it");
  }
  CHECK(stale == std::vector<std::string>{});
}

TEST_CASE("layout: third-party headers are included only in their folders", "[layout]") {
  std::vector<std::string> problems;
  for (const auto& i : includes_of_src()) {
    if (i.quoted) continue;
    for (const auto& lib : kLibraries) {
      if (i.target.rfind(lib.prefix, 0) != 0) continue;
      const std::string from = folder_of_file(i.file);
      bool ok = false;
      for (const auto& u : lib.users) ok |= u.from == from && listed(u.only, i.file);
      if (!ok)
        problems.push_back(where(i) + ": " + lib.prefix + " is not for this file of " + from +
                           "/ (tests/layout_test.cc)");
    }
  }
  CHECK(problems == std::vector<std::string>{});
}
