// `ratchet run`: plan every host first (nothing connects unless all render),
// then run the hosts in parallel and record the transcript.
#include <fmt/format.h>

#include <csignal>
#include <iostream>
#include <random>
#include <thread>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/printer.h"
#include "engine/host_run.h"
#include "engine/planner.h"
#include "ratchet/version.h"
#include "steps/library.h"
#include "transcript/writer.h"
#include "util/clock.h"

namespace ratchet::cli {

bool build_plans(const Loaded& L, const nlohmann::json& secrets, std::vector<engine::HostPlan>* out);

static std::atomic<bool> g_interrupted{false};

/// The playbook name as a file name: letters, digits, '-', '_' and '.' (never
/// a leading '.'), so a name like "../x" cannot leave transcripts/.
static std::string file_safe(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  while (!out.empty() && out[0] == '.') out[0] = '_';
  return out.empty() ? "playbook" : out;
}

static void on_sigint(int) {
  if (g_interrupted.exchange(true)) std::_Exit(kExitInterrupted);  // second ^C: leave now
}

/// 130, 4, 1, 3 in that order of precedence (design.md §4).
static int exit_code_for(const std::vector<engine::HostReport>& reps, bool interrupted) {
  bool key = false, failed = false, unreachable = false;
  for (const auto& r : reps) {
    key |= r.status == "host_key";
    failed |= r.status == "failed";
    unreachable |= r.status == "unreachable";
    interrupted |= r.status == "interrupted";
  }
  if (interrupted) return kExitInterrupted;
  if (key) return kExitHostKey;
  if (failed) return kExitFailed;
  if (unreachable) return kExitUnreachable;
  return kExitOk;
}

int cmd_run(const Options& o, const std::vector<std::string>& argv) {
  auto L = load_all(o);
  if (!L) return kExitUsage;
  auto dry_secrets = resolve_secrets(L->pb, true);
  std::vector<engine::HostPlan> plans;
  if (!build_plans(*L, *dry_secrets, &plans)) return kExitUsage;
  auto secrets = resolve_secrets(L->pb, false);
  if (!secrets) return kExitUsage;

  auto now = std::chrono::system_clock::now();
  std::random_device rd;
  engine::RunInfo info{fmt::format("{}-{:04x}", util::file_stamp(now), rd() & 0xffff), util::rfc3339(now)};
  std::string path = !o.transcript.empty()
                         ? o.transcript
                         : fmt::format("transcripts/{}-{}.jsonl", file_safe(L->pb.name), util::file_stamp(now));
  transcript::Writer w(path);
  for (auto it = secrets->begin(); it != secrets->end(); ++it) w.add_secret(it.value().get<std::string>());

  nlohmann::json vars = L->pb.vars;
  for (auto it = secrets->begin(); it != secrets->end(); ++it) vars[it.key()] = "***";
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& h : L->hosts) targets.push_back(h.name);
  w.emit("run_start", {{"schema", transcript::kSchemaVersion},
                       {"ratchet_version", RATCHET_VERSION},
                       {"run_id", info.id},
                       {"argv", argv},
                       {"playbook", L->pb.name},
                       {"playbook_path", L->pb.path},
                       {"playbook_sha256", L->pb.sha256},
                       {"playbook_source", L->pb.source},
                       {"vars", vars},
                       {"host_library", {{"sha256", steps::host_library_sha256()}, {"text", steps::host_library()}}},
                       {"targets", targets}});
  std::cout << fmt::format("run {}: {} on {} host(s); transcript {}\n", info.id, L->pb.name,
                           L->hosts.size(), path);

  std::vector<engine::HostJob> jobs;
  for (const auto& h : L->hosts) {
    engine::HostJob j;
    j.pb = &L->pb;
    j.host = h;
    j.endpoint = endpoint_for(h, o);
    j.scope = engine::host_scope(L->pb, L->inv ? &*L->inv : nullptr, h, L->extra_keys, *secrets, &info);
    jobs.push_back(std::move(j));
  }
  auto old = std::signal(SIGINT, on_sigint);
  LinePrinter printer(&w);
  auto reps = engine::run_hosts(
      jobs, o.forks, [](const transport::Endpoint& e) { return transport::make_ssh_transport(e); }, w,
      printer, &g_interrupted, [](util::Millis d) { std::this_thread::sleep_for(d); });
  std::signal(SIGINT, old);

  int code = exit_code_for(reps, g_interrupted.load());
  std::map<std::string, int> totals;
  std::map<std::string, int> host_status;
  for (const auto& r : reps) {
    host_status[r.status]++;
    for (const auto& [k, v] : r.counts) totals[k] += v;
  }
  static const std::map<int, std::string> names = {{kExitOk, "ok"},
                                                   {kExitFailed, "failed"},
                                                   {kExitUnreachable, "unreachable"},
                                                   {kExitHostKey, "host_key"},
                                                   {kExitInterrupted, "interrupted"}};
  w.emit("run_end", {{"status", names.at(code)}, {"exit_code", code}, {"counts", totals}, {"hosts", host_status}});

  std::cout << "\nrecap\n";
  for (const auto& r : reps) {
    std::string counts;
    for (const auto& [k, v] : r.counts)
      if (v) counts += fmt::format("{}{}={}", counts.empty() ? "" : " ", k, v);
    std::cout << fmt::format("  {:<24} {:<12} {}\n", r.host, r.status, counts);
  }
  std::cout << fmt::format("{} (exit {}); transcript {}\n", names.at(code), code, path);
  return code;
}

}  // namespace ratchet::cli
