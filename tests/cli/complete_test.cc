// `ratchet __complete`: what the shell completions offer (packaging/completions/).
#include "cli/complete.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "support/local_proc.h"

using namespace ratchet::testing;

namespace {

// The lines `ratchet __complete ARGS` prints (ARGS as shell words, run in `dir`).
std::vector<std::string> lines_of(const std::string& out) {
  std::vector<std::string> v;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

std::vector<std::string> complete_sh(const std::string& dir, const std::string& args) {
  auto r = run_sh("cd '" + dir + "' && " + RATCHET_BINARY + " __complete " + args);
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  return lines_of(r.out);
}

std::string lab() {
  static const std::string dir = [] {
    std::string d = temp_dir("ratchet-complete");
    std::ofstream(d + "/inv.toml") << "[hosts.gpu-box]\naddress = \"10.0.0.1\"\n[hosts.gpu-box-2]\naddress = \"10.0.0.2\"\n"
                                   << "[hosts.web]\naddress = \"10.0.0.3\"\n[groups]\ngpu = [\"gpu-box\", \"gpu-box-2\"]\n";
    std::ofstream(d + "/pb.toml") << "name = \"p\"\n[inventory.hosts.db1]\naddress = \"10.0.0.9\"\n"
                                  << "[[step]]\nname = \"Stop it\"\nkind = \"run\"\ncommand = \"true\"\ntags = [\"stop\", \"gpu\"]\n"
                                  << "[[step]]\nid = \"check\"\nkind = \"run\"\ncommand = \"true\"\ntags = \"verify\"\n";
    return d;
  }();
  return dir;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("complete: subcommands and flags from the app's definitions", "[cli][complete]") {
  std::string d = lab();
  V subs = complete_sh(d, "''");
  for (const char* s : {"run", "plan", "apply", "validate", "hosts", "show", "report", "exec", "schema"})
    CHECK(std::find(subs.begin(), subs.end(), s) != subs.end());
  CHECK(std::find(subs.begin(), subs.end(), "__complete") == subs.end());
  CHECK(complete_sh(d, "va") == V{"validate"});
  CHECK(complete_sh(d, "--v") == V{"--version"});
  CHECK(complete_sh(d, "run --li") == V{"--limit"});
  CHECK(complete_sh(d, "show t.jsonl --fol") == V{"--follow"});
  V flags = complete_sh(d, "run -");
  CHECK(std::find(flags.begin(), flags.end(), "-i") != flags.end());
  CHECK(std::find(flags.begin(), flags.end(), "--inventory") != flags.end());
  CHECK(std::find(flags.begin(), flags.end(), "--forks") != flags.end());
  CHECK(std::find(flags.begin(), flags.end(), "--probe") == flags.end());  // plan's, not run's
}

TEST_CASE("complete: option values and positionals", "[cli][complete]") {
  std::string d = lab();
  CHECK(complete_sh(d, "run ''") == V{":files toml"});
  CHECK(complete_sh(d, "show ''") == V{":files jsonl"});
  CHECK(complete_sh(d, "run pb.toml -i ''") == V{":files"});
  CHECK(complete_sh(d, "run pb.toml --strategy ''") == V{"linear", "free"});
  CHECK(complete_sh(d, "run pb.toml --strategy=f") == V{"--strategy=free"});
  CHECK(complete_sh(d, "schema i") == V{"inventory"});
  // Hosts and groups of -i, anywhere on the line; else the playbook's [inventory].
  CHECK(complete_sh(d, "run pb.toml -i inv.toml --limit gpu-box-") == V{"gpu-box-2"});
  CHECK(complete_sh(d, "run -i inv.toml pb.toml --limit ''") == V{"all", "gpu", "gpu-box", "gpu-box-2", "web"});
  CHECK(complete_sh(d, "run pb.toml -i inv.toml --limit=gpu") == V{"--limit=gpu", "--limit=gpu-box", "--limit=gpu-box-2"});
  CHECK(complete_sh(d, "run pb.toml -i inv.toml --limit web,gpu-") == V{"web,gpu-box", "web,gpu-box-2"});
  CHECK(complete_sh(d, "run pb.toml --limit ''") == V{"all", "db1"});
  CHECK(complete_sh(d, "exec -i inv.toml w") == V{"web"});
  CHECK(complete_sh(d, "exec -i inv.toml web -- ''") == V{});
  CHECK(complete_sh(d, "run pb.toml -i missing.toml --limit ''") == V{});  // -i wins, even unreadable
}

TEST_CASE("complete: step ids and tags of the playbook on the line", "[cli][complete]") {
  // An app of its own: options named as the selection flags are (--tags, --skip-tags, --start-at).
  std::string d = lab();
  CLI::App app;
  std::string pb, tags, start;
  auto* run = app.add_subcommand("run", "");
  run->add_option("playbook", pb);
  run->add_option("--tags", tags);
  run->add_option("--start-at", start);
  auto complete = [&](V words) {
    std::ostringstream out;
    CHECK(ratchet::cli::complete(app, words, out) == 0);
    return lines_of(out.str());
  };
  std::string p = d + "/pb.toml";
  CHECK(complete({"run", p, "--start-at", ""}) == V{"check", "stop_it"});
  CHECK(complete({"run", p, "--tags", ""}) == V{"gpu", "stop", "verify"});
  CHECK(complete({"run", p, "--tags", "stop,v"}) == V{"stop,verify"});
  CHECK(complete({"run", "--tags", ""}) == V{});  // no playbook yet
}

TEST_CASE("complete: a flag takes no value, and included steps bring their tags and include ids",
          "[cli][complete]") {
  std::string d = lab();
  CHECK(complete_sh(d, "plan --probe ''") == V{":files toml"});
  CHECK(complete_sh(d, "plan --probe pb.toml --tags ''") == V{"gpu", "stop", "verify"});
  CHECK(complete_sh(d, "run --accept-new pb.toml --step c") == V{"check"});
  std::string i = temp_dir("ratchet-complete-inc");
  std::ofstream(i + "/piece.toml") << "[[step]]\nid = \"say\"\nkind = \"run\"\ncommand = \"true\"\ntags = [\"talk\"]\n";
  std::ofstream(i + "/pb.toml") << "name = \"p\"\n[[step]]\nid = \"first\"\nkind = \"run\"\ncommand = \"true\"\n"
                                << "tags = [\"a\"]\n[[step]]\nid = \"free\"\ninclude = \"piece.toml\"\n";
  CHECK(complete_sh(i, "run pb.toml --tags ''") == V{"a", "talk"});
  CHECK(complete_sh(i, "run pb.toml --step ''") == V{"first", "free", "free.say"});
}
