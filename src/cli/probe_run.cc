#include "cli/probe_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>
#include <random>

#include "cli/become_password.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "plan/codec.h"
#include "ratchet/version.h"
#include "steps/library.h"
#include "transcript/value_json.h"
#include "util/clock.h"

namespace ratchet::cli {

namespace {

std::atomic<bool> g_probe_interrupted{false};
void on_probe_sigint(int) { g_probe_interrupted.store(true); }

}  // namespace

std::optional<ProbeRun> probe_plan(const Loaded& L, const plan::Plan& P, const Options& o,
                                   const std::vector<std::string>& argv, const std::string& transcript, bool pinned) {
  const auto wall0 = std::chrono::steady_clock::now();
  auto secrets = resolve_secrets(L.pb, false);
  if (!secrets) return std::nullopt;
  std::string pw_err;
  std::optional<std::string> become_password = read_become_password(o, &pw_err);
  if (!pw_err.empty()) {
    std::cerr << "ratchet: error: " << pw_err << "\n";
    return std::nullopt;
  }
  // No transcript: a writer that records nothing (a probe leaves nothing behind).
  auto w = transcript.empty() ? std::make_shared<transcript::Writer>() : std::make_shared<transcript::Writer>(transcript);
  for (const auto& it : secrets->as_table()) w->add_secret(it.second.as_string());
  for (const auto& kv : o.extra)
    if (auto eq = kv.find('='); eq != std::string::npos &&
                                std::find(o.secret.begin(), o.secret.end(), kv.substr(0, eq)) != o.secret.end())
      w->add_secret(kv.substr(eq + 1));

  ProbeRun out;
  auto now = std::chrono::system_clock::now();
  out.at = util::rfc3339(now);
  std::random_device rd;
  const std::string run_id = fmt::format("{}-{:04x}", util::file_stamp(now), rd() & 0xffff);
  nlohmann::json vars = transcript::to_json(L.pb.vars);
  for (const auto& it : secrets->as_table()) vars[it.first] = "***";
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& hp : P.hosts) targets.push_back(hp.host.name);
  nlohmann::json start = {{"schema", transcript::kSchemaVersion}, {"ratchet_version", RATCHET_VERSION},
                          {"run_id", run_id}, {"mode", "probe"}, {"argv", argv}, {"playbook", L.pb.name},
                          {"playbook_path", L.pb.path}, {"playbook_sha256", L.pb.sha256}, {"vars", vars},
                          {"targets", targets}, {"policy", {{"forks", o.forks}}},
                          {"become_password", become_password.has_value()}};
  if (auto sel = plan::step_selection_json(P); !sel.is_null()) start["selection"] = sel;
  w->emit(transcript::events::kRunStart, start);
  w->emit(transcript::events::kHostLibrary,
          {{"sha256", steps::host_library_sha256()}, {"text", steps::host_library()}});

  std::vector<engine::HostJob> jobs;
  for (const auto& hp : P.hosts) {
    engine::HostJob j;
    j.pb = &L.pb;
    j.plan = &hp;
    j.host = hp.host;
    j.endpoint = endpoint_for(hp.host, o);
    if (pinned) j.endpoint.pinned_keys = hp.endpoint.known_keys;  // the keys the reviewed plan saw
    // Real secrets, no run info: run.* and steps.* stay placeholders.
    j.scope = engine::host_scope(L.pb, L.inv ? &*L.inv : nullptr, hp.host, L.extra_keys, *secrets, nullptr);
    jobs.push_back(std::move(j));
  }
  engine::ProbeShared shared;
  shared.w = w.get();
  shared.interrupted = &g_probe_interrupted;
  shared.become_password = become_password ? &*become_password : nullptr;
  g_probe_interrupted.store(false);
  auto old = std::signal(SIGINT, on_probe_sigint);
  auto old_term = std::signal(SIGTERM, on_probe_sigint);
  out.reps = engine::probe_fleet(
      jobs, o.forks, [](const transport::Endpoint& e) { return transport::make_ssh_transport(e); }, shared);
  std::signal(SIGINT, old);
  std::signal(SIGTERM, old_term);
  for (auto& r : out.reps) r.reason = w->mask(r.reason);

  std::vector<engine::HostStatus> statuses;
  for (const auto& r : out.reps) statuses.push_back(r.status);
  out.code = exit_code_for(statuses, g_probe_interrupted.load());
  if (w->failed() && (out.code == kExitOk || out.code == kExitUnreachable)) out.code = kExitFailed;
  out.ms = util::ms_since(wall0);
  std::map<std::string, int> host_status;
  for (const auto& r : out.reps) host_status[std::string(name(r.status))]++;
  w->emit(transcript::events::kRunEnd,
          {{"status", exit_name(out.code)}, {"exit_code", out.code}, {"hosts", host_status}, {"ms", out.ms}});
  if (w->failed()) out.transcript_failure = w->failure();
  out.writer = w;
  return out;
}

plan::Findings findings_of(const ProbeRun& r) {
  plan::Findings f;
  f.at = r.at;
  for (const auto& h : r.reps) f.hosts.push_back(engine::findings_of(h));
  return f;
}

}  // namespace ratchet::cli
