// `ratchet plan` and `ratchet validate`: load, render every step for every
// host, print; nothing connects.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <sstream>

#include <iostream>

#include "cli/commands.h"
#include "util/text.h"
#include "cli/exit_codes.h"
#include "engine/planner.h"
#include "engine/scope.h"
#include "transport/transport.h"
#include "util/duration.h"

namespace ratchet::cli {

/// Builds every host's plan; prints errors and returns false when any step fails to render.
bool build_plans(const Loaded& L, const nlohmann::json& secrets, std::vector<engine::HostPlan>* out) {
  std::vector<std::string> errors;
  for (const auto& h : L.hosts) {
    auto scope = engine::host_scope(L.pb, L.inv ? &*L.inv : nullptr, h, L.extra_keys, secrets, nullptr);
    engine::HostPlan hp;
    engine::plan_host(L.pb, h, scope, &hp, &errors);
    out->push_back(std::move(hp));
  }
  // The same problem on every host is printed once, with the hosts it hit.
  std::vector<std::pair<std::string, std::vector<std::string>>> unique;
  for (const auto& e : errors) {
    auto colon = e.find(": ");  // "host NAME: rest"
    std::string host = e.substr(5, colon - 5), rest = e.substr(colon + 2);
    auto it = std::find_if(unique.begin(), unique.end(), [&](const auto& u) { return u.first == rest; });
    if (it == unique.end()) unique.push_back({rest, {host}});
    else it->second.push_back(host);
  }
  for (const auto& [msg, hosts] : unique) {
    std::string on = hosts.size() == L.hosts.size() && hosts.size() > 1 ? "every host" : "host " + hosts[0];
    if (hosts.size() > 1 && hosts.size() < L.hosts.size()) on = fmt::format("hosts {}", fmt::join(hosts, ", "));
    std::cerr << util::terminal_line(fmt::format("ratchet: error: {} ({})", msg, on)) << "\n";
  }
  return errors.empty();
}

/// Where each host connects, as `run` would (ssh config applied); nothing connects.
static bool resolve_all(const Loaded& L, const Options& o, std::vector<transport::ResolvedEndpoint>* out) {
  for (const auto& h : L.hosts) {
    transport::ResolvedEndpoint r;
    if (auto err = transport::resolve_endpoint(endpoint_for(h, o), &r)) {
      std::cerr << "ratchet: error: " << util::terminal_line(err->message) << "\n";
      return false;
    }
    out->push_back(r);
  }
  return true;
}

/// The timing and failure handling of a step (rung 0) or of rung k, in words:
/// the same facts as plan --json's "rungs", "on_failure" and "become".
static std::string facts_line(const engine::StepFacts& f, size_t k) {
  const auto& r = f.rungs.at(k);
  std::string out = k == 0 ? fmt::format("timeout {}, settle {}, retries {}, delay {}",
                                         util::format_duration(f.timeout), util::format_duration(r.settle),
                                         r.retries, util::format_duration(r.delay))
                           : fmt::format("rung {}: {}, timeout {}, settle {}, retries {}, delay {}", k, r.kind,
                                         util::format_duration(r.timeout), util::format_duration(r.settle),
                                         r.retries, util::format_duration(r.delay));
  if (r.wait) out += fmt::format(", wait {}", util::format_duration(*r.wait));
  else if (!r.wait_text.empty()) out += fmt::format(", wait {}", r.wait_text);
  if (k == 0)
    out += fmt::format("; on_failure {}; become {}", f.on_failure,
                       f.become.empty() ? "no (the login user)"
                                        : fmt::format("{} (sudo runs `{}`; with a password `-k -S -p ''` for `-n`)",
                                                      f.become, f.sudo_argv));
  return "       " + out + "\n";
}

/// `text` under a left column: `label` on its first line, blanks on the rest
/// (one command of several lines stays one command to the eye).
static std::string labelled(const std::string& text, const std::string& label) {
  std::string first = fmt::format("       {:<14}", label);
  std::string out = util::indent_lines(text, std::string(first.size(), ' '));
  return first + out.substr(first.size());
}

static void print_plan_to(std::ostream& os, const Loaded& L, const std::vector<engine::HostPlan>& plans,
                          const std::vector<transport::ResolvedEndpoint>& where);

static void print_plan_text(const Loaded& L, const std::vector<engine::HostPlan>& plans,
                            const std::vector<transport::ResolvedEndpoint>& where) {
  // Built whole, then printed through terminal_text(): a name, host or value
  // holding ESC or CR must not repaint the reviewer's terminal (plan --json
  // keeps every byte).
  std::ostringstream out;
  print_plan_to(out, L, plans, where);
  std::cout << util::terminal_text(out.str());
}

static void print_plan_to(std::ostream& os, const Loaded& L, const std::vector<engine::HostPlan>& plans,
                          const std::vector<transport::ResolvedEndpoint>& where) {
  os << fmt::format("plan: {} ({}, sha256 {}) — a dry run: nothing connects, nothing is sent\n",
                           L.pb.name, L.pb.path, L.pb.sha256.substr(0, 12));
  os << "commands call the host library (ratchet_*; docs/host-library.md); "
               "<name> marks a value known only at run time\n";
  const auto& pol = L.pb.policy;
  auto count = [](const playbook::HostCount& c, const char* unset) {
    return !c.set ? std::string(unset) : c.percent ? fmt::format("{}%", c.value) : std::to_string(c.value);
  };
  os << fmt::format("{} host(s); strategy {}, serial {}, max_fail {} (run --forks sets hosts at once)\n",
                           plans.size(), pol.strategy, count(pol.serial, "all at once"),
                           count(pol.max_fail, "no limit"));
  for (size_t hi = 0; hi < plans.size(); ++hi) {
    const auto& hp = plans[hi];
    const auto& at = where.at(hi);
    os << fmt::format("\nhost {} (address {}, port {}, user {}{})\n", hp.host.name, at.address, at.port, at.user,
                      at.jump.empty() ? "" : ", jump " + at.jump);
    int n = 0;
    for (const auto& p : hp.steps) {
      const auto& s = *p.step;
      std::string as;
      if (playbook::becomes(s, hp.host))
        as = fmt::format("  (as {} via sudo)", playbook::become_user_for(s, hp.host));
      os << fmt::format("  {}. {} [{}] {}{}{}\n", ++n, s.id, s.kind, s.name, as,
                               p.when_note.empty() ? "" : "  (" + p.when_note + ")");
      const auto facts = engine::step_facts(p, hp.host);
      for (size_t k = 0; k < p.prepared.rungs.size(); ++k) {
        const auto& r = p.prepared.rungs[k];
        os << facts_line(facts, k);
        std::string label = k == 0 ? "" : fmt::format("rung {} ", k);
        for (const auto& c : r.check) {
          os << labelled(c.text, label + "check");
          if (auto re = engine::stdout_matches(c); !re.empty())
            os << fmt::format("       {:<14}stdout_matches {}\n", "", re);
        }
        if (r.action) {
          os << labelled(r.action->text, label + "action");
          if (!r.action->stdin_data.empty()) {
            os << fmt::format("       {:<14}{} bytes on stdin{}\n", "", r.action->stdin_data.size(),
                                     r.action->stdin_secret ? " (secret)" : ":");
            if (!r.action->stdin_secret) os << util::indent_lines(r.action->stdin_data, "         | ");
          }
        }
        if (!r.after.empty())
          os << fmt::format("       {:<14}wait for the host to come back (new boot id), up to {}\n", "",
                                   util::format_duration(r.reboot_timeout));
        for (const auto& c : r.after)
          os << labelled(c.text, "after boot");
      }
    }
  }
}

int cmd_plan(const Options& o) {
  auto L = load_all(o);
  if (!L) return kExitUsage;
  auto secrets = resolve_secrets(L->pb, true);
  std::vector<engine::HostPlan> plans;
  if (!build_plans(*L, *secrets, &plans)) return kExitUsage;
  std::vector<transport::ResolvedEndpoint> where;
  if (!resolve_all(*L, o, &where)) return kExitUsage;
  if (o.json) {
    nlohmann::json hosts = nlohmann::json::array();
    for (size_t i = 0; i < plans.size(); ++i) {
      nlohmann::json h = engine::plan_json(plans[i]);
      h["address"] = where[i].address;  // as run connects (ssh config applied)
      h["port"] = where[i].port;
      h["user"] = where[i].user;
      if (!where[i].jump.empty()) h["jump"] = where[i].jump;
      hosts.push_back(h);
    }
    nlohmann::json j = {{"playbook", L->pb.name}, {"path", L->pb.path}, {"sha256", L->pb.sha256},
                        {"hosts", hosts}};
    std::cout << j.dump(2) << "\n";
  } else {
    print_plan_text(*L, plans, where);
  }
  return kExitOk;
}

int cmd_validate(const Options& o) {
  auto L = load_all(o, /*hosts_optional=*/true);
  if (!L) return kExitUsage;
  if (L->no_hosts) {  // the playbook alone is valid; say what needs hosts to check
    std::string vars;
    for (const auto& v : L->unchecked_vars) vars += (vars.empty() ? "`" : ", `") + v + "`";
    std::cout << util::terminal_line(fmt::format("{}: ok: playbook `{}`, {} steps, no inventory", L->pb.path,
                                                 L->pb.name, L->pb.steps.size()))
              << "\n"
              << util::terminal_line(fmt::format(
                     "{}: not checked without hosts: the targets{}, and each step rendered per host "
                     "(give -i INVENTORY to check them)",
                     L->pb.path,
                     vars.empty() ? "" : fmt::format(", vars no playbook var defines ({})", vars)))
              << "\n";
    return kExitOk;
  }
  auto secrets = resolve_secrets(L->pb, true);
  std::vector<engine::HostPlan> plans;
  if (!build_plans(*L, *secrets, &plans)) return kExitUsage;
  std::cout << util::terminal_line(fmt::format("{}: ok: playbook `{}`, {} steps, {} host(s)", L->pb.path,
                                               L->pb.name, L->pb.steps.size(), L->hosts.size()))
            << "\n";
  return kExitOk;
}

}  // namespace ratchet::cli
