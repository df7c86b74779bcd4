// `ratchet plan --probe`: build the plan as `plan` does, then connect as
// `run` does and run each step's check once (engine/probe.h): what each step
// would do to each host right now. Read-only (docs/plan.md#probe).
#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/make_plan.h"
#include "cli/probe_run.h"
#include "cli/usage.h"
#include "engine/probe.h"
#include "plan/codec.h"
#include "util/duration.h"
#include "util/path.h"
#include "util/text.h"

namespace ratchet::cli {

/// "PID 4242 python3 (user svc, started 2026-12-01T10:00:00Z): python3 -m x; holds /dev/nvidia0"
static std::string holder_text(const steps::Holder& h) {
  std::string files;
  for (const auto& f : h.files) files += (files.empty() ? "" : ", ") + f;
  const std::string owner = h.owner ? steps::describe(*h.owner) : "";
  std::string nodes;  // a device held through another node: "; PID 4242 holds /dev/nvidia0 of mount namespace ..."
  for (const auto& n : h.nodes) nodes += "; " + steps::node_text(h.pid, n);
  for (const auto& t : h.threads) nodes += "; " + steps::thread_text(h.pid, t);
  return fmt::format("PID {} {} (user {}{}{}): {}{}{}", h.pid, h.comm, h.user.empty() ? "?" : h.user,
                     h.started.empty() ? "" : ", started " + h.started, owner.empty() ? "" : ", " + owner,
                     h.cmdline, files.empty() ? "" : "; holds " + files, nodes);
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
    for (const auto& s : r.steps) steps.push_back(plan::finding_json(s));
    h["steps"] = steps;
    hosts.push_back(h);
  }
  nlohmann::json doc = {{"mode", "probe"}, {"playbook", P.playbook_name}, {"path", P.playbook_path},
                        {"exit_code", code}, {"ms", wall_ms}, {"hosts", hosts}};
  if (!transcript.empty()) doc["transcript"] = transcript;
  return doc;
}

int cmd_probe(const Options& o, const std::vector<std::string>& argv) {
  if (o.out_given && o.out.empty())
    return usage_error("plan", "--out is empty: name the file to save the probed plan to");
  auto L = load_all(o);
  if (!L) return kExitUsage;
  auto P = make_plan(*L, o);
  if (!P) return kExitUsage;
  if (!o.transcript.empty())
    if (std::string hit = clobbered_source(*P, o.transcript); !hit.empty())
      return usage_error("plan", fmt::format("--transcript {} is {}: a transcript goes to a file of its own",
                                             o.transcript, hit));
  if (!o.out.empty()) {
    if (std::string hit = clobbered_source(*P, o.out); !hit.empty())
      return usage_error("plan", fmt::format("--out {} is {}: the plan goes to a file of its own", o.out, hit));
    if (util::absolute_path(o.out) == util::absolute_path(o.transcript))
      return usage_error("plan", fmt::format("--out and --transcript are both {}: give each its own file", o.out));
  }
  auto R = probe_plan(*L, *P, o, argv, o.transcript, false);
  if (!R) return kExitUsage;
  const transcript::Writer& w = *R->writer;
  if (o.json) {
    auto doc = probe_json(*P, R->reps, R->code, R->ms, o.transcript);
    w.mask_tree(doc);
    std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::ostringstream out;
    print_probe(out, *P, R->reps, R->ms);
    std::cout << util::terminal_text(w.mask(out.str()));
    std::cout << fmt::format("{} (exit {}){}\n", exit_name(R->code), R->code,
                             o.transcript.empty() ? "" : "; transcript " + o.transcript);
  }
  if (!R->transcript_failure.empty()) std::cerr << "ratchet: error: " << R->transcript_failure << "\n";
  if (!o.out.empty()) {
    if (R->code == kExitInterrupted) {
      std::cerr << "ratchet: the probe was interrupted: no plan saved (its findings would be partial)\n";
      return R->code;
    }
    P->probe = findings_of(*R);
    if (int rc = save_plan(*P, o); rc != kExitOk) return rc;
  }
  return R->code;
}

}  // namespace ratchet::cli
