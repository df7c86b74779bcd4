// `ratchet apply FILE`: execute a saved plan exactly, or refuse before
// connecting anywhere (docs/plan.md, "What apply refuses").
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/make_plan.h"
#include "cli/probe_run.h"
#include "cli/run_settings.h"
#include "cli/usage.h"
#include "plan/codec.h"
#include "plan/freshness.h"
#include "playbook/doc.h"
#include "playbook/inventory.h"
#include "ratchet/version.h"
#include "steps/library.h"
#include "util/clock.h"
#include "util/path.h"
#include "util/text.h"

namespace ratchet::cli {

namespace {

int refuse(const std::string& file, const std::vector<std::string>& why) {
  for (const auto& w : why) std::cerr << util::terminal_line(fmt::format("ratchet: error: {}: {}", file, w)) << "\n";
  std::cerr << util::terminal_line(fmt::format("ratchet: apply refused {} ({} reason{}); nothing was run",
                                               file, why.size(), why.size() == 1 ? "" : "s"))
            << "\n";
  return kExitUsage;
}

// "SHA256:ABC..." or " abc... " as the hex digest alone, lower case.
std::string bare_digest(std::string d) {
  std::transform(d.begin(), d.end(), d.begin(), [](unsigned char c) { return std::tolower(c); });
  size_t b = d.find_first_not_of(" \t\r\n"), e = d.find_last_not_of(" \t\r\n");
  d = b == std::string::npos ? "" : d.substr(b, e - b + 1);
  if (d.rfind("sha256:", 0) == 0) d = d.substr(7);
  return d;
}

/// A probed plan: probes its hosts again (recorded in `o.transcript`, before
/// the run) and prints, per host, what changed since the saved probe. Returns
/// -1 to go on, or the exit code to stop with: 1 something changed (without
/// --yes), 4 a host key other than the plan's, 130 ^C, 2 a secret unreadable.
int probe_again(const Loaded& L, const plan::Plan& P, const Options& o, const std::vector<std::string>& argv,
                bool yes) {
  std::ostream& human = o.json ? std::cerr : std::cout;
  human << util::terminal_line(fmt::format("probing again: the plan holds a probe of {}; what changed since stops "
                                           "the apply{}", P.probe->at, yes ? " unless --yes (given)" : " (--yes: apply anyway)"))
        << "\n" << std::flush;
  auto R = probe_plan(L, P, o, argv, o.transcript, /*pinned=*/true);
  if (!R) return kExitUsage;
  if (R->code == kExitInterrupted) {
    std::cerr << "ratchet: interrupted while probing again: nothing was applied\n";
    return R->code;
  }
  size_t changed_hosts = 0;
  bool host_key = false;
  nlohmann::json changed = nlohmann::json::object();  // --json: host -> its changes
  for (const auto& rep : R->reps) {
    host_key |= rep.status == engine::HostStatus::host_key;
    auto then = std::find_if(P.probe->hosts.begin(), P.probe->hosts.end(),
                             [&](const plan::HostFindings& h) { return h.host == rep.host; });
    std::vector<std::string> changes =
        then == P.probe->hosts.end() ? std::vector<std::string>{"not in the saved probe"}
                                     : plan::changes_since(*then, engine::findings_of(rep));
    if (changes.empty()) {
      human << util::terminal_line(fmt::format("host {}: as probed, nothing changed", rep.host)) << "\n";
      continue;
    }
    ++changed_hosts;
    for (const auto& c : changes) changed[rep.host].push_back(R->writer->mask(c));
    human << util::terminal_line(fmt::format("host {}: {} change{} since the probe:", rep.host, changes.size(),
                                             changes.size() == 1 ? "" : "s"))
          << "\n";
    for (const auto& c : changes) human << util::terminal_line("  " + R->writer->mask(c)) << "\n";
  }
  human << std::flush;
  // --json: stdout says why nothing ran (docs/plan.md), as run's summary says how it ran.
  auto stopped_json = [&](int code) {
    if (o.json)
      std::cout << nlohmann::json{{"status", "stopped"}, {"exit_code", code}, {"probed_at", P.probe->at},
                                  {"changed", changed}}.dump(2) << "\n";
    return code;
  };
  if (host_key) {
    stopped_json(kExitHostKey);
    std::cerr << "ratchet: apply stopped: a host key is not the one the plan saw (above); nothing was applied\n";
    return kExitHostKey;
  }
  if (changed_hosts == 0 || yes) {
    if (changed_hosts) human << fmt::format("--yes: applying although {} host(s) changed since the probe\n", changed_hosts);
    return -1;
  }
  std::cerr << util::terminal_line(fmt::format(
                   "ratchet: apply stopped: {} host(s) changed since the plan was probed; nothing was applied. "
                   "Review them (ratchet plan --probe) and make the plan again, or pass --yes to apply this plan anyway",
                   changed_hosts))
            << "\n";
  return stopped_json(kExitFailed);
}

/// -e sets secrets only (every other value is in the plan), and each secret
/// the plan names must be there to read: one line per reason not.
std::vector<std::string> secret_refusals(const plan::Plan& P, const Options& ao) {
  std::vector<std::string> why, given;
  for (const auto& kv : ao.extra) {
    auto eq = kv.find('=');
    std::string name = kv.substr(0, eq);
    if (eq == std::string::npos || std::find(ao.secret.begin(), ao.secret.end(), name) == ao.secret.end())
      why.push_back(fmt::format("-e {}: apply sets secrets only (-e NAME=VALUE --secret NAME); a var's value is "
                                "fixed in the plan: make the plan again to change it", name));
    else given.push_back(name);
  }
  for (const auto& name : ao.secret)
    if (P.secrets.contains(name) && P.secrets.at(name) != "-e")
      why.push_back(fmt::format("--secret {}: that secret comes from {} (the playbook's [secrets]), not -e: drop "
                                "-e {}=... --secret {}", name, P.secrets.at(name), name, name));
    else if (!P.secrets.contains(name))
      why.push_back(fmt::format("--secret {}: the plan has no secret of that name (it has: {})", name, [&] {
        std::string list;
        for (const auto& kv : P.secrets) list += (list.empty() ? "" : ", ") + kv.first;
        return list.empty() ? std::string("none") : list;
      }()));
  for (const auto& [name, source] : P.secrets) {
    if (source == "-e" && std::find(given.begin(), given.end(), name) == given.end())
      why.push_back(fmt::format("secret `{}` is not supplied: it came from -e when the plan was made; pass "
                                "-e {}=VALUE --secret {}", name, name, name));
    else if (source.rfind("env:", 0) == 0 && !std::getenv(source.substr(4).c_str()))
      why.push_back(fmt::format("secret `{}` is not supplied: environment variable {} is not set", name,
                                source.substr(4)));
    else if (source.rfind("file:", 0) == 0) {
      std::string v, e;
      if (!playbook::read_text_file(source.substr(5), &v, &e))
        why.push_back(fmt::format("secret `{}` is not supplied: cannot read {} ({})", name, source.substr(5), e));
    }
  }
  return why;
}

/// The saved plan against what was approved and what is here: its digest,
/// --max-age, the files it was made from, its secrets. -1 and the reasons in
/// *why, or the exit code of a usage error (printed).
int saved_plan_refusals(const ApplyOptions& a, const plan::Plan& P, const std::string& digest,
                        std::vector<std::string>* why) {
  const Options& ao = a.base;
  if (!ao.tags.empty() || !ao.skip_tags.empty() || !ao.start_at.empty() || !ao.steps.empty())
    return usage_error("apply", fmt::format("--tags, --skip-tags, --start-at and --step choose steps when a plan is "
                                            "made: {} runs the steps its plan holds{}; make the plan again with "
                                            "the selection (ratchet plan ... --tags T --out FILE)",
                                            a.file, P.not_selected.empty() ? "" : fmt::format(
                                                " (it leaves out {} step(s))", P.not_selected.size())));
  if (a.expect_digest_given && bare_digest(a.expect_digest).empty())
    return usage_error("apply", "--expect-digest is empty: give the digest the reviewer approved "
                                "(`ratchet plan --out` prints it)");
  if (a.expect_digest_given && bare_digest(a.expect_digest) != digest)
    why->push_back(fmt::format("the plan's digest is {}, not the approved {}: this is not the plan that was reviewed",
                               digest, bare_digest(a.expect_digest)));
  std::string dur_err;
  auto max_age = util::parse_duration(a.max_age, &dur_err);
  if (!max_age) return usage_error("apply", fmt::format("--max-age {}: {} (e.g. 24h, 30m)", a.max_age, dur_err));
  plan::Here here;
  here.ratchet_version = RATCHET_VERSION;
  here.host_library_sha256 = steps::host_library_sha256();
  here.now_unix = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::system_clock::now().time_since_epoch()).count();
  here.max_age = *max_age;
  here.max_age_text = a.max_age;
  for (auto& r : plan::stale_reasons(P, here)) why->push_back(std::move(r));
  for (auto& r : secret_refusals(P, ao)) why->push_back(std::move(r));
  return -1;
}

/// The inputs again, as the plan selected them; apply's own options for how it runs.
Options replayed_options(const plan::Plan& P, const Options& ao) {
  Options o = ao;
  o.command = "apply";
  o.playbook = P.sources.front().path;
  o.inventory = P.selection.inventory;
  o.target = P.selection.targets;
  o.limit = P.selection.limit;
  o.extra.clear();
  for (const auto& [k, v] : P.selection.extra_vars) o.extra.push_back(k + "=" + v);
  for (const auto& kv : ao.extra) o.extra.push_back(kv);
  o.secret = ao.secret;
  o.ssh_config = P.selection.ssh_config;
  o.known_hosts = P.selection.known_hosts;
  o.accept_new = P.selection.accept_new;
  o.strategy = P.selection.strategy;
  o.tags = P.selection.tags;
  o.skip_tags = P.selection.skip_tags;
  o.start_at = P.selection.start_at;
  o.steps = P.selection.steps;
  return o;
}

/// --limit only narrows the plan's hosts (names, groups and globs as in run):
/// "" or why it selects none of them.
std::string narrow_to_limit(plan::Plan* P, const Loaded& L, const std::vector<std::string>& limit) {
  if (limit.empty()) return "";
  std::vector<std::string> names;
  for (const auto& hp : P->hosts)
    if (L.inv && L.inv->hosts.contains(hp.host.name)) names.push_back(hp.host.name);
  std::string sel_err;
  std::vector<const playbook::Host*> sel;
  if (!names.empty()) sel = playbook::resolve_targets(*L.inv, names, limit, &sel_err);
  if (sel.empty()) {
    std::string list;
    for (const auto& hp : P->hosts) list += (list.empty() ? "" : ", ") + hp.host.name;
    return fmt::format("--limit selects none of the plan's hosts ({}){}", list, sel_err.empty() ? "" : ": " + sel_err);
  }
  std::vector<plan::HostPlan> kept;
  for (auto& hp : P->hosts)
    if (std::any_of(sel.begin(), sel.end(), [&](const playbook::Host* h) { return h->name == hp.host.name; }))
      kept.push_back(std::move(hp));
  P->hosts = std::move(kept);
  return "";
}

/// Each host as the inventory has it now (its endpoint and vars were checked
/// equal); each step tied to its place in the model, for the steps that render when they run.
void tie_to_model(plan::Plan* P, const Loaded& L, const std::vector<playbook::Host>& hosts) {
  for (size_t i = 0; i < P->hosts.size(); ++i) {
    auto& hp = P->hosts[i];
    hp.host = hosts[i];
    for (auto& st : hp.steps) {
      auto m = std::find_if(L.pb.steps.begin(), L.pb.steps.end(), [&](const playbook::Step& s) { return s.id == st.id; });
      st.index = static_cast<size_t>(m - L.pb.steps.begin());
    }
  }
}

/// The saved plan against the model just loaded and the plan made again from
/// it, for exactly the plan's hosts (a host the inventory gained since is not
/// the plan's): one line per difference; *hosts the plan's hosts as loaded now.
std::vector<std::string> replan_differences(const plan::Plan& P, Loaded& L, const Options& o,
                                            std::vector<playbook::Host>* hosts, bool* unplannable) {
  std::vector<std::string> why;
  for (const auto& hp : P.hosts) {
    auto h = std::find_if(L.hosts.begin(), L.hosts.end(), [&](const playbook::Host& x) { return x.name == hp.host.name; });
    if (h == L.hosts.end())
      why.push_back(fmt::format("host {} of the plan is no longer selected (the inventory changed)", hp.host.name));
    else hosts->push_back(*h);
  }
  if (!why.empty()) return why;
  L.hosts = *hosts;
  auto now = make_plan(L, o);
  *unplannable = !now;
  // The whole plan, guards and policy too, not only the steps (plan/freshness.h).
  return now ? plan::plan_differences(P, *now) : why;
}

/// A probed plan: the transcript and report checked, then the probe again. -1 to go on, else the exit code.
int probe_first(const ApplyOptions& a, const Loaded& L, const plan::Plan& P, Options& o, const std::string& plan_file,
                const std::vector<std::string>& argv) {
  // The probe again goes to the run's own transcript, just before the run.
  if (o.transcript.empty())
    o.transcript = default_transcript(L.pb.name, util::file_stamp(std::chrono::system_clock::now()));
  if (auto why = outputs_problem(o, P, o.transcript, plan_file); !why.empty()) return usage_error("apply", why);
  if (o.lock_wait != "0" && !a.yes)
    return usage_error("apply", "--lock-wait with a probed plan: apply probes before it takes the lock, so the "
                                "hosts could change while it waits and it would not see it. Take the lock "
                                "without waiting (--lock), or pass --yes to apply whatever the wait finds");
  return probe_again(L, P, o, argv, a.yes);
}

}  // namespace

int cmd_apply(const ApplyOptions& a, const std::vector<std::string>& argv) {
  const auto wall0 = std::chrono::steady_clock::now();
  std::string text, err;
  if (!playbook::read_text_file(a.file, &text, &err))
    return refuse(a.file, {fmt::format("cannot read the plan file: {}", err)});
  auto P = plan::decode_file(text, &err);
  if (!P) return refuse(a.file, {err});
  const std::string digest = plan::digest_of(nlohmann::json::parse(text));
  std::vector<std::string> why;
  if (int rc = saved_plan_refusals(a, *P, digest, &why); rc >= 0) return rc;
  if (!why.empty()) return refuse(a.file, why);
  Options o = replayed_options(*P, a.base);
  auto L = load_all(o);
  if (!L) return refuse(a.file, {"the files it was made from no longer load (errors above)"});
  // What executes is the model just loaded: its own bytes must be the plan's.
  if (why = plan::load_differences(*P, L->pb); !why.empty()) return refuse(a.file, why);
  if (auto no = narrow_to_limit(&*P, *L, a.base.limit); !no.empty()) return refuse(a.file, {no});
  std::vector<playbook::Host> hosts;
  bool unplannable = false;
  why = replan_differences(*P, *L, o, &hosts, &unplannable);
  if (unplannable) return refuse(a.file, {"it can no longer be planned here (errors above)"});
  if (!why.empty()) return refuse(a.file, why);
  tie_to_model(&*P, *L, hosts);
  AppliedPlan applied{util::absolute_path(a.file), digest};
  if (P->probe)
    if (int rc = probe_first(a, *L, *P, o, applied.path, argv); rc >= 0) return rc;
  return execute_plan(*L, *P, o, argv, &applied, wall0);
}

}  // namespace ratchet::cli
