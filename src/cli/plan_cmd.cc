// `ratchet plan` and `ratchet validate`: load, render every step for every
// host, print; nothing connects.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include <iostream>

#include "cli/commands.h"
#include "util/text.h"
#include "cli/exit_codes.h"
#include "cli/make_plan.h"
#include "cli/own_vars.h"
#include "cli/usage.h"
#include "engine/thresholds.h"
#include "plan/build.h"
#include "plan/codec.h"
#include "plan/selection.h"
#include "util/duration.h"
#include "util/shell.h"

namespace ratchet::cli {

/// The timing and failure handling of a step (rung 0) or of rung k, in words:
/// the same facts as plan --json's "rungs", "on_failure" and "become".
static std::string facts_line(const plan::Step& p, size_t k) {
  const auto& r = p.prepared.rungs.at(k);
  const auto& f = p.rung_facts.at(k);
  std::string out = k == 0 ? fmt::format("timeout {}, settle {}, retries {}, delay {}",
                                         util::format_duration(p.timeout), util::format_duration(r.settle),
                                         r.retries, util::format_duration(r.delay))
                           : fmt::format("rung {}: {}, timeout {}, settle {}, retries {}, delay {}", k, name(r.kind),
                                         util::format_duration(f.timeout), util::format_duration(r.settle),
                                         r.retries, util::format_duration(r.delay));
  if (f.wait) out += fmt::format(", wait {}", util::format_duration(*f.wait));
  if (k == 0)
    out += fmt::format("; on_failure {}; become {}", p.on_failure == playbook::OnFailure::cont ? "continue" : "stop",
                       !p.become ? "no (the login user)"
                                 : fmt::format("{} (sudo runs `{}`; with a password `-k -S -p ''` for `-n`)",
                                               p.become_shown, p.sudo_argv));
  return "       " + out + "\n";
}

/// `text` under a left column: `label` on its first line, blanks on the rest
/// (one command of several lines stays one command to the eye).
static std::string labelled(const std::string& text, const std::string& label) {
  std::string first = fmt::format("       {:<14}", label);
  std::string out = util::indent_lines(text, std::string(first.size(), ' '));
  return first + out.substr(first.size());
}

static void print_plan_to(std::ostream& os, const plan::Plan& P) {
  const plan::Source& pb = P.sources.front();
  os << fmt::format("plan: {} ({}, sha256 {}) — a dry run: nothing connects, nothing is sent\n", P.playbook_name,
                    P.playbook_path, pb.sha256.substr(0, 12));
  os << "commands call the host library (ratchet_*; docs/host-library.md); "
        "<name> marks a value known only at run time\n";
  const auto& pol = P.policy;
  auto count = [](const playbook::HostCount& c, const char* unset) {
    return !c.set ? std::string(unset) : c.percent ? fmt::format("{}%", c.value) : std::to_string(c.value);
  };
  os << fmt::format("{} host(s); strategy {}, serial {}, max_fail {} (run --forks sets hosts at once)\n",
                    P.hosts.size(), playbook::name(pol.strategy), count(pol.serial, "all at once"), count(pol.max_fail, "no limit"));
  for (const auto& line : engine::threshold_lines(pol, P.hosts.size())) os << line << "\n";
  os << plan::selection_lines(P);
  for (const auto& hp : P.hosts) {
    const auto& at = hp.endpoint;
    os << fmt::format("\nhost {} (address {}, port {}, user {}{})\n", hp.host.name, at.address, at.port, at.user,
                      at.jump.empty() ? "" : ", jump " + at.jump);
    const auto& g = hp.guards;
    os << fmt::format("  lock: {}; audit line: {}\n",
                      g.lock ? fmt::format("taken before the first step ({}), released at the host's end", g.lock_path)
                             : "none (run --lock takes one)",
                      g.audit_log.empty() ? "none (audit_log = false)" : "appended to " + g.audit_log);
    int n = 0;
    for (const auto& p : hp.steps) {
      std::string as = p.become ? fmt::format("  (as {} via sudo)", p.become_shown) : "";
      os << fmt::format("  {}. {} [{}] {}{}{}\n", ++n, p.id, name(p.kind), p.name, as,
                        p.when_note.empty() ? "" : "  (" + p.when_note + ")");
      if (p.source.find(", included from ") != std::string::npos)
        os << fmt::format("       from {}\n", p.source);
      if (!p.runtime_refs.empty())
        os << fmt::format("       filled in when it runs: {} (shell-quoted in commands; secrets masked)\n",
                          fmt::join(p.runtime_refs, ", "));
      for (size_t k = 0; k < p.prepared.rungs.size(); ++k) {
        const auto& r = p.prepared.rungs[k];
        os << facts_line(p, k);
        std::string label = k == 0 ? "" : fmt::format("rung {} ", k);
        for (const auto& c : r.check) {
          os << labelled(c.text, label + std::string(name(c.role)));
          if (auto re = plan::stdout_matches(c); !re.empty())
            os << fmt::format("       {:<14}stdout_matches {}\n", "", re);
          if (auto g = plan::gpus_judged(c); !g.empty()) os << fmt::format("       {:<14}judged: {}\n", "", g);
        }
        auto action = [&](const steps::Command& a) {
          os << labelled(a.text, label + std::string(name(a.role)));
          if (!a.stdin_data.empty()) {
            os << fmt::format("       {:<14}{} bytes on stdin{}\n", "", a.stdin_data.size(),
                              a.stdin_secret ? " (secret)" : ":");
            if (!a.stdin_secret) os << util::indent_lines(a.stdin_data, "         | ");
          }
          if (a.stdin_file)  // copy: the bytes the sha256 in the command pins, streamed from here
            os << fmt::format("       {:<14}stdin: {} ({} bytes, sha256 {})\n", "", util::shell_quote(a.stdin_file->path),
                              a.stdin_file->size, a.stdin_file->sha256);
        };
        if (r.action) action(*r.action);
        for (const auto& a : r.more_actions) action(a);
        if (r.kind == playbook::Kind::fetch)  // the downloads: one per file the listing names
          os << fmt::format("       {:<14}then for each file listed: ratchet_fetch_cat PATH {}, its stdout into "
                            "ARTIFACTS/HOST/PATH (0600; more than {} bytes is not kept)\n",
                            "", r.max_size + 1, r.max_size);
        if (!r.after.empty())
          os << fmt::format("       {:<14}wait for the host to come back (new boot id), up to {}\n", "",
                            util::format_duration(r.reboot_timeout));
        for (const auto& c : r.after) os << labelled(c.text, "after boot");
      }
    }
  }
}

int cmd_plan(const Options& o) {
  if (o.out_given && o.out.empty())
    return usage_error("plan", "--out is empty: name the file to save the plan to");
  auto L = load_all(o);
  if (!L) return kExitUsage;
  auto P = make_plan(*L, o);
  if (!P) return kExitUsage;
  if (!o.out.empty())
    if (std::string hit = clobbered_source(*P, o.out); !hit.empty())
      return usage_error("plan", fmt::format("--out {} is {}: the plan goes to a file of its own", o.out, hit));
  if (o.json) {
    std::cout << plan::plan_json(*P, false).dump(2) << "\n";
  } else {
    // Built whole, then printed through terminal_text(): a name, host or value
    // holding ESC or CR must not repaint the reviewer's terminal (plan --json
    // keeps every byte).
    std::ostringstream out;
    print_plan_to(out, *P);
    std::cout << util::terminal_text(out.str());
  }
  if (!o.out.empty()) return save_plan(*P, o);
  return kExitOk;
}

int cmd_validate(const Options& o) {
  auto L = load_all(o, /*hosts_optional=*/true);
  if (!L) return kExitUsage;
  if (L->no_hosts) {  // what the playbook's own vars decide is checked; say what needs hosts
    std::vector<std::string> unsure;
    auto refused = check_own_vars(L->pb, L->extra_keys, &unsure);
    if (!refused.empty()) {
      std::string from;
      for (const auto& v : unsure) from += (from.empty() ? "`" : ", `") + v + "`";
      for (const auto& e : refused)
        std::cerr << util::terminal_line(fmt::format("ratchet: error: {} (the playbook's own vars, no inventory)", e))
                  << "\n";
      if (!from.empty())
        std::cerr << util::terminal_line(fmt::format(
                         "ratchet: note: {} from the playbook's vars; an inventory's host or group var of that name "
                         "would replace it: fix the playbook's value, which is what runs without one",
                         from))
                  << "\n";
      if (refused.size() > 1) std::cerr << fmt::format("ratchet: {} errors; nothing was run\n", refused.size());
      return kExitUsage;
    }
    std::string vars;
    for (const auto& v : L->unchecked_vars) vars += (vars.empty() ? "`" : ", `") + v + "`";
    std::cout << util::terminal_line(fmt::format("{}: ok: playbook `{}`, {} steps, no inventory", L->pb.path,
                                                 L->pb.name, L->pb.steps.size()))
              << "\n"
              << util::terminal_line(fmt::format("{}: checked without hosts: every key the playbook's own vars "
                                                 "and -e decide, rendered and read by its rule",
                                                 L->pb.path))
              << "\n"
              << util::terminal_line(fmt::format(
                     "{}: not checked without hosts: the targets{}, keys that use host.*, and host or group vars "
                     "that would replace the playbook's (give -i INVENTORY to check them)",
                     L->pb.path,
                     vars.empty() ? "" : fmt::format(", vars no playbook var defines ({})", vars)))
              << "\n";
    return kExitOk;
  }
  if (!make_plan(*L, o)) return kExitUsage;
  std::cout << util::terminal_line(fmt::format("{}: ok: playbook `{}`, {} steps, {} host(s)", L->pb.path,
                                               L->pb.name, L->pb.steps.size(), L->hosts.size()))
            << "\n";
  return kExitOk;
}

}  // namespace ratchet::cli
