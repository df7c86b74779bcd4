// `ratchet plan --probe`: build the plan as `plan` does, then connect as
// `run` does and run each step's check once (engine/probe.h): what each step
// would do to each host right now. Read-only (docs/plan.md#probe).
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <random>
#include <sstream>

#include "cli/become_password.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/make_plan.h"
#include "cli/usage.h"
#include "engine/probe.h"
#include "ratchet/version.h"
#include "steps/library.h"
#include "transcript/value_json.h"
#include "util/clock.h"
#include "util/duration.h"
#include "util/text.h"

namespace ratchet::cli {

static std::atomic<bool> g_probe_interrupted{false};
static void on_probe_sigint(int) { g_probe_interrupted.store(true); }

/// "PID 4242 python3 (user svc, started 2026-12-01T10:00:00Z): python3 -m x; holds /dev/nvidia0"
static std::string holder_text(const steps::Holder& h) {
  std::string files;
  for (const auto& f : h.files) files += (files.empty() ? "" : ", ") + f;
  return fmt::format("PID {} {} (user {}{}): {}{}", h.pid, h.comm, h.user.empty() ? "?" : h.user,
                     h.started.empty() ? "" : ", started " + h.started, h.cmdline,
                     files.empty() ? "" : "; holds " + files);
}

static std::string verdict_words(const engine::StepProbe& s) {
  using V = engine::ProbeVerdict;
  switch (s.verdict) {
    case V::ok: return "ok";
    case V::would_act:
      if (s.no_remedy) return "would fail (no action or rung follows)";
      return s.no_check ? "would act (no check: runs every time)" : "would act";
    case V::could_not_check: return "could not check";
    case V::not_probed: return "not probed";
    case V::skipped: return "skipped";
  }
  return "?";
}

static void print_probe(std::ostream& os, const plan::Plan& P, const std::vector<engine::HostProbe>& reps,
                        long long wall_ms) {
  os << fmt::format("probe: {} ({}) on {} host(s), {} — read-only: each step's check sent once, no action or "
                    "rung; a snapshot (no retries, settle or waits)\n",
                    P.playbook_name, P.playbook_path, reps.size(), util::format_duration(util::Millis(wall_ms)));
  for (const auto& r : reps) {
    os << "\n";
    if (r.status == engine::HostStatus::unreachable || r.status == engine::HostStatus::host_key) {
      os << fmt::format("host {}: {}: {}\n", r.host, name(r.status), r.reason);
      continue;
    }
    os << fmt::format("host {} ({}), {}\n", r.host, r.connected, util::format_duration(util::Millis(r.ms)));
    int n = 0;
    for (const auto& s : r.steps) {
      std::string line = fmt::format("  {}. {} [{}] {}", ++n, s.id, playbook::name(s.kind), verdict_words(s));
      if (!s.reason.empty() && !s.no_check) line += ": " + s.reason;
      if (!s.depends_on.empty()) {
        std::string d;
        for (const auto& x : s.depends_on) d += (d.empty() ? "" : ", ") + x;
        line += "  (depends on " + d + ": shows the state now)";
      }
      os << line << "\n";
      for (const auto& h : s.holders) os << "       holder    " << holder_text(h) << "\n";
      if (!s.state.empty()) {
        std::string st;
        for (const auto& [k, v] : s.state) st += (st.empty() ? "" : ", ") + k + " " + (v.empty() ? "\"\"" : v);
        os << "       state     " << st << "\n";
      }
      if (s.would_create) os << "       would create the file\n";
      if (!s.output.empty()) os << util::indent_lines(s.output, "       output  | ");
      if (!s.diff.empty()) os << util::indent_lines(s.diff, "         ");
      if (s.verdict == engine::ProbeVerdict::would_act) {
        // The command under its label, later lines aligned under the first.
        const std::string label = s.action.empty() ? "       then rung 1: " : "       would run: ";
        const std::string& cmd = s.action.empty() ? s.rung : s.action;
        if (!cmd.empty()) os << label << util::indent_lines(cmd, std::string(label.size(), ' ')).substr(label.size());
      }
    }
  }
  os << "\n";
  for (const auto& r : reps) {
    std::map<engine::ProbeVerdict, int> c;
    for (const auto& s : r.steps) c[s.verdict]++;
    os << fmt::format("{}: {}; {} ok, {} would act, {} could not check, {} not probed, {} skipped\n", r.host,
                      name(r.status), c[engine::ProbeVerdict::ok], c[engine::ProbeVerdict::would_act],
                      c[engine::ProbeVerdict::could_not_check], c[engine::ProbeVerdict::not_probed],
                      c[engine::ProbeVerdict::skipped]);
  }
}

static nlohmann::json probe_json(const plan::Plan& P, const std::vector<engine::HostProbe>& reps, int code,
                                 long long wall_ms, const std::string& transcript) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& r : reps) {
    nlohmann::json h = {{"host", r.host}, {"status", name(r.status)}, {"ms", r.ms}};
    if (!r.reason.empty()) h["reason"] = r.reason;
    if (!r.cause.empty()) h["cause"] = r.cause;
    if (!r.connected.empty()) h["connected"] = r.connected;
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : r.steps) {
      nlohmann::json j = {{"id", s.id}, {"kind", playbook::name(s.kind)}, {"name", s.name},
                          {"verdict", name(s.verdict)}, {"ms", s.ms}};
      if (!s.reason.empty()) j["reason"] = s.reason;
      if (s.no_check) j["no_check"] = true;
      if (s.no_remedy) j["no_remedy"] = true;
      if (!s.action.empty()) j["action"] = s.action;
      if (!s.rung.empty()) j["rung"] = s.rung;
      if (!s.depends_on.empty()) j["depends_on"] = s.depends_on;
      if (!s.holders.empty()) j["holders"] = transcript::to_json(steps::to_value(s.holders));
      if (!s.state.empty()) {
        nlohmann::json st = nlohmann::json::object();
        for (const auto& [k, v] : s.state) st[k] = v;
        j["state"] = st;
      }
      if (s.would_create) j["would_create"] = true;
      if (!s.diff.empty()) j["diff"] = s.diff;
      if (!s.output.empty()) j["output"] = s.output;
      steps.push_back(j);
    }
    h["steps"] = steps;
    hosts.push_back(h);
  }
  nlohmann::json doc = {{"mode", "probe"}, {"playbook", P.playbook_name}, {"path", P.playbook_path},
                        {"exit_code", code}, {"ms", wall_ms}, {"hosts", hosts}};
  if (!transcript.empty()) doc["transcript"] = transcript;
  return doc;
}

int cmd_probe(const Options& o, const std::vector<std::string>& argv) {
  const auto wall0 = std::chrono::steady_clock::now();
  if (o.out_given)
    return usage_error("plan", "--probe with --out: saving a probe's findings in the plan file is not built yet; "
                               "save the plan with `plan --out` and probe with `plan --probe` on its own");
  auto L = load_all(o);
  if (!L) return kExitUsage;
  auto P = make_plan(*L, o);
  if (!P) return kExitUsage;
  auto secrets = resolve_secrets(L->pb, false);
  if (!secrets) return kExitUsage;
  std::string pw_err;
  std::optional<std::string> become_password = read_become_password(o, &pw_err);
  if (!pw_err.empty()) {
    std::cerr << "ratchet: error: " << pw_err << "\n";
    return kExitUsage;
  }
  if (!o.transcript.empty())
    if (std::string hit = clobbered_source(*P, o.transcript); !hit.empty())
      return usage_error("plan", fmt::format("--transcript {} is {}: a transcript goes to a file of its own",
                                             o.transcript, hit));
  // No --transcript: a writer that records nothing (a probe leaves nothing behind).
  std::unique_ptr<transcript::Writer> wp =
      o.transcript.empty() ? std::make_unique<transcript::Writer>() : std::make_unique<transcript::Writer>(o.transcript);
  transcript::Writer& w = *wp;
  for (const auto& it : secrets->as_table()) w.add_secret(it.second.as_string());
  for (const auto& kv : o.extra)
    if (auto eq = kv.find('='); eq != std::string::npos &&
                                std::find(o.secret.begin(), o.secret.end(), kv.substr(0, eq)) != o.secret.end())
      w.add_secret(kv.substr(eq + 1));

  auto now = std::chrono::system_clock::now();
  std::random_device rd;
  const std::string run_id = fmt::format("{}-{:04x}", util::file_stamp(now), rd() & 0xffff);
  nlohmann::json vars = transcript::to_json(L->pb.vars);
  for (const auto& it : secrets->as_table()) vars[it.first] = "***";
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& hp : P->hosts) targets.push_back(hp.host.name);
  w.emit(transcript::events::kRunStart,
         {{"schema", transcript::kSchemaVersion}, {"ratchet_version", RATCHET_VERSION}, {"run_id", run_id},
          {"mode", "probe"}, {"argv", argv}, {"playbook", L->pb.name}, {"playbook_path", L->pb.path},
          {"playbook_sha256", L->pb.sha256}, {"vars", vars}, {"targets", targets},
          {"policy", {{"forks", o.forks}}}, {"become_password", become_password.has_value()}});
  w.emit(transcript::events::kHostLibrary, {{"sha256", steps::host_library_sha256()}, {"text", steps::host_library()}});

  std::vector<engine::HostJob> jobs;
  for (const auto& hp : P->hosts) {
    engine::HostJob j;
    j.pb = &L->pb;
    j.plan = &hp;
    j.host = hp.host;
    j.endpoint = endpoint_for(hp.host, o);
    // Real secrets, no run info: run.* and steps.* stay placeholders.
    j.scope = engine::host_scope(L->pb, L->inv ? &*L->inv : nullptr, hp.host, L->extra_keys, *secrets, nullptr);
    jobs.push_back(std::move(j));
  }
  engine::ProbeShared shared;
  shared.w = &w;
  shared.interrupted = &g_probe_interrupted;
  shared.become_password = become_password ? &*become_password : nullptr;
  auto old = std::signal(SIGINT, on_probe_sigint);
  auto old_term = std::signal(SIGTERM, on_probe_sigint);
  auto reps = engine::probe_fleet(
      jobs, o.forks, [](const transport::Endpoint& e) { return transport::make_ssh_transport(e); }, shared);
  std::signal(SIGINT, old);
  std::signal(SIGTERM, old_term);
  for (auto& r : reps) r.reason = w.mask(r.reason);

  std::vector<engine::HostStatus> statuses;
  for (const auto& r : reps) statuses.push_back(r.status);
  int code = exit_code_for(statuses, g_probe_interrupted.load());
  if (w.failed() && (code == kExitOk || code == kExitUnreachable)) code = kExitFailed;
  const long long wall_ms = util::ms_since(wall0);
  std::map<std::string, int> host_status;
  for (const auto& r : reps) host_status[std::string(name(r.status))]++;
  w.emit(transcript::events::kRunEnd,
         {{"status", exit_name(code)}, {"exit_code", code}, {"hosts", host_status}, {"ms", wall_ms}});
  if (o.json) {
    auto doc = probe_json(*P, reps, code, wall_ms, o.transcript);
    w.mask_tree(doc);
    std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::ostringstream out;
    print_probe(out, *P, reps, wall_ms);
    std::cout << util::terminal_text(w.mask(out.str()));
    std::cout << fmt::format("{} (exit {}){}\n", exit_name(code), code,
                             o.transcript.empty() ? "" : "; transcript " + o.transcript);
  }
  if (w.failed()) std::cerr << "ratchet: error: " << w.failure() << "\n";
  return code;
}

}  // namespace ratchet::cli
