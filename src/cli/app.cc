#include "cli/app.h"

#include <csignal>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "cli/complete.h"
#include "cli/exit_codes.h"
#include "cli/usage.h"
#include "playbook/kind.h"
#include "ratchet/version.h"
#include "util/rules.h"
#include "util/spell.h"
#include "util/text.h"

namespace ratchet::cli {

/// `text` with the value of every -e NAME=VALUE whose NAME follows a --secret
/// in argv replaced by "***" (for a usage error, printed before any secret is known).
static std::string mask_secret_args(std::string text, int argc, char** argv) {
  std::set<std::string> names;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--secret" && i + 1 < argc) names.insert(argv[i + 1]);
    else if (a.rfind("--secret=", 0) == 0) names.insert(a.substr(9));
  }
  if (names.empty()) return text;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    for (const char* prefix : {"--extra-var=", "-e"})
      if (a.rfind(prefix, 0) == 0 && a.size() > std::strlen(prefix) && a.find('=') != 2) {
        a = a.substr(std::strlen(prefix));
        break;
      }
    auto eq = a.find('=');
    if (eq == std::string::npos || !names.contains(a.substr(0, eq)) || eq + 1 == a.size()) continue;
    std::string value = a.substr(eq + 1);
    for (size_t at; (at = text.find(value)) != std::string::npos;) text.replace(at, value.size(), "***");
  }
  return text;
}

/// --connect-timeout, parsed at once: a bad value is a usage error (exit 2).
static void add_connect_timeout(CLI::App* sub, Options& o) {
  sub->add_option_function<std::string>(
      "--connect-timeout",
      [&o](const std::string& text) {
        std::string err;
        auto d = util::parse_duration(text, &err);
        if (d && d->count() <= 0) err = "must be more than 0";
        if (!d || d->count() <= 0)
          throw CLI::ValidationError("--connect-timeout", text + ": " + err + " (e.g. 10s, 1m)");
        o.connect_timeout = *d;
      },
      "give up on a host whose connection (TCP, key exchange, login) takes longer, e.g. 5s "
      "(default 10s; per jump hop too)");
  // --keepalive INTERVAL[:COUNT], parsed at once: a bad value is a usage error (exit 2).
  sub->add_option_function<std::string>(
      "--keepalive",
      [&o](const std::string& text) {
        const auto colon = text.find(':');
        std::string err;
        auto d = util::parse_duration(text.substr(0, colon), &err);
        int count = 3;
        if (colon != std::string::npos) {
          const std::string n = text.substr(colon + 1);
          count = n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos ? 0 : std::stoi(n);
          if (count < 1) err = "COUNT must be a number from 1";
        }
        if (d && d->count() <= 0) err = "INTERVAL must be more than 0";
        if (!d || !err.empty())
          throw CLI::ValidationError("--keepalive", text + ": " + err + " (e.g. 15s, or 15s:3)");
        o.keepalive = transport::Keepalive{*d, count};
      },
      "send a keepalive after INTERVAL with nothing from a host; COUNT unanswered in a row (default 3) "
      "lose the connection, e.g. 15s:3 (default: the ssh config's ServerAliveInterval, ServerAliveCountMax)");
}

/// --transport channel|session (transport.h ExecMode); anything else is a usage error.
/// o.exec_mode, as it is when this is called, is the subcommand's default.
static void add_transport(CLI::App* sub, Options& o) {
  const bool session = o.exec_mode == transport::ExecMode::session;
  sub->add_option_function<std::string>(
      "--transport",
      [&o](const std::string& text) {
        if (text == "channel") o.exec_mode = transport::ExecMode::channel;
        else if (text == "session") o.exec_mode = transport::ExecMode::session;
        else throw CLI::ValidationError("--transport", text + ": must be channel or session");
      },
      fmt::format("session{}: one shell per host runs every command, one round trip each, falling back to "
                  "channel where it cannot start; channel{}: one SSH channel per command (docs/transport.md)",
                  session ? " (default)" : "", session ? "" : " (default)"));
}

static void add_selectors(CLI::App* sub, Options& o) {
  sub->add_option("-i,--inventory", o.inventory, "inventory file (TOML)");
  // One value per occurrence (repeat the option for more), so an option before
  // the playbook never swallows it.
  sub->add_option("--limit", o.limit, "narrow to these hosts, groups or globs (comma-separated)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("-e,--extra-var", o.extra, "set a var: key=value (value read as TOML, else text)")
      ->allow_extra_args(false);
  sub->add_option("--secret", o.secret,
                  "the -e value of this name is a secret: masked as *** everywhere, allowed only in "
                  "stdin and file content (repeat for more)")
      ->allow_extra_args(false);
  sub->add_option("--target", o.target, "ad hoc host [user@]host[:port] instead of an inventory")
      ->allow_extra_args(false);
  sub->add_option("-F,--ssh-config", o.ssh_config, "ssh config file (default ~/.ssh/config)");
  sub->add_option("--known-hosts", o.known_hosts, "known_hosts file (default ~/.ssh/known_hosts)");
}

/// --tags, --skip-tags, --start-at, --step: which steps run (plan/selection.h).
static void add_step_selection(CLI::App* sub, Options& o) {
  sub->add_option("--tags", o.tags, "run only the steps with one of these tags (comma-separated)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--skip-tags", o.skip_tags, "leave out the steps with one of these tags (comma-separated)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--start-at", o.start_at, "leave out the steps before this one (a step id)");
  sub->add_option("--step", o.steps, "run only this step (an id, or an include's id for its steps; repeat for more)")
      ->allow_extra_args(false);
}

/// --forks N: an integer in util::int_range("forks"); anything else is a usage error.
static void add_forks(CLI::App* sub, Options& o) {
  sub->add_option_function<std::string>(
      "--forks",
      [&o](const std::string& text) {
        const util::IntRange& r = *util::int_range("forks");
        char* end = nullptr;
        errno = 0;
        long long n = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end || errno == ERANGE || !util::range_problem("forks", n).empty())
          throw CLI::ValidationError(
              fmt::format("--forks {}: must be a whole number from {} to {}", text, r.min, r.max));
        o.forks = static_cast<int>(n);
      },
      "hosts at once (default 10, at most 1000)");
}

/// What `run` and `apply` share: how a run goes, not what runs (--transcript,
/// --json, the become password, connect and reconnect timeouts).
static void add_run_options(CLI::App* sub, Options& o) {
  sub->add_option("--transcript", o.transcript,
                  "transcript file (default transcripts/<playbook>-<UTC time>.jsonl)");
  sub->add_option("--artifacts", o.artifacts,
                  "where fetch steps put the files they download, as DIR/HOST/PATH (default: the transcript's path "
                  "without .jsonl; transcripts/<run id> for /dev/null)");
  sub->add_flag("--json", o.json, "print a JSON summary on stdout (progress and recap go to stderr)");
  sub->add_flag("-K,--ask-become-pass", o.ask_become_pass,
                "ask once for the sudo password (used only where `sudo -n` says one is needed)");
  sub->add_option("--become-password-file", o.become_password_file, "read the sudo password from FILE");
  sub->add_option("--become-password-env", o.become_password_env,
                  "read the sudo password from environment variable NAME");
  sub->add_option("--report", o.report,
                  "also write the run's HTML report to FILE at the end (mode 0600; docs/report.md)");
  add_connect_timeout(sub, o);
  add_transport(sub, o);
  sub->add_option("--reconnect-timeout", o.reconnect_timeout,
                  "how long to try to reconnect a host whose session dropped mid-run, e.g. 30s (default); 0 = never");
  sub->add_flag("--lock", o.lock, "take the lock on every host, as `lock = true` does (docs/playbook.md)");
  sub->add_option("--lock-wait", o.lock_wait, "wait up to DURATION for a held lock, e.g. 5m (default: fail at once)");
  sub->add_flag("--break-lock", o.break_lock, "take a stale lock (its holder's session is gone); recorded");
  sub->add_flag("--sign", o.sign,
                "at the end, sign the run's final head with your SSH key (ssh-keygen -Y sign) into TRANSCRIPT.sig "
                "(default: the agent's first key; `sign = true` in the inventory's [defaults] does the same)");
  sub->add_option("--sign-key", o.sign_key,
                  "sign with this key FILE: a private key, or a .pub whose private half is in the agent "
                  "(implies --sign)");
}

/// The subcommand argv names ("" = none): the first argument that is one.
static std::string command_of(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) break;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      if (sub->get_name() == argv[i]) return argv[i];
  }
  return "";
}

/// What bare `ratchet` prints: one line per command, then where help is.
static std::string short_usage(const CLI::App& app) {
  std::string out = "usage: ratchet COMMAND [ARGS]...\n";
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    out += fmt::format("  {:<9} {}\n", sub->get_name(), sub->get_description());
  return out + "see 'ratchet --help', or 'ratchet COMMAND --help' for one command\n";
}

/// A CLI11 message as the first line of a usage error: one line, and the
/// sentence-case CLI11 uses ("The following argument...") lowered.
static std::string cli11_message(const CLI::ParseError& e) {
  std::string m = e.what();
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  for (auto& c : m)
    if (c == '\n') c = ' ';
  if (m.size() > 1 && std::isupper(static_cast<unsigned char>(m[0])) &&
      std::islower(static_cast<unsigned char>(m[1])))
    m[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(m[0])));
  return m;
}

int main(int argc, char** argv) {
  // A reader that goes away (`ratchet run ... | head`) must not kill a run half
  // way: writes to it fail instead (EPIPE), and the run ends and records run_end.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"ratchet: runbooks over SSH: check, act gently, verify, escalate, record"};
  app.set_version_flag("--version", RATCHET_VERSION);
  app.require_subcommand(1, 1);
  // The kinds from the kind table: ratchet(1) shows this footer, so its list cannot drift.
  std::string kinds;
  for (auto k : playbook::kKinds) kinds += (kinds.empty() ? "" : ", ") + std::string(playbook::name(k));
  app.footer("Step kinds: " + kinds + " (docs/playbook.md).\nDocs: README.md, docs/.");

  Options o;
  auto* run = app.add_subcommand("run", "run a playbook against its hosts");
  run->footer("Exit codes: 0 ok, 1 a step failed, 2 usage or playbook error, 3 a host unreachable,\n"
      "4 host key verification failed, 130 interrupted. Docs: README.md, docs/.");
  run->add_option("playbook", o.playbook, "playbook file (TOML)")->required();
  add_selectors(run, o);
  add_step_selection(run, o);
  add_forks(run, o);
  run->add_flag("--accept-new", o.accept_new, "trust and record a host key seen for the first time");
  run->add_option("--strategy", o.strategy, "linear (each step on every host first) or free (default: the playbook's, else linear)")
      ->check(CLI::IsMember({"linear", "free"}));
  add_run_options(run, o);

  auto* plan = app.add_subcommand("plan", "dry run: print every command; connects to nothing");
  plan->footer("Exit codes: 0 planned, 2 usage or playbook error; with --probe: 0 every host probed (whatever\n"
      "would act), 1 a check could not run, 3 a host unreachable, 4 host key. Docs: README.md, docs/plan.md.");
  plan->add_option("playbook", o.playbook, "playbook file (TOML)")->required();
  add_selectors(plan, o);
  add_step_selection(plan, o);
  plan->add_flag("--json", o.json, "print the plan as JSON");
  plan->add_option("--out", o.out, "also save the plan to FILE (mode 0600) for `ratchet apply`; prints its digest "
                                   "(with --probe: the probe's findings too, which apply compares with a new probe)");
  plan->add_option("--strategy", o.strategy, "linear or free, saved in the plan (default: the playbook's)")
      ->check(CLI::IsMember({"linear", "free"}));
  plan->add_flag("--accept-new", o.accept_new, "saved in the plan: apply trusts and records a first-seen host key");
  plan->add_flag("--probe", o.probe,
                 "connect as run does and run each step's check once (read-only): what each step would do now");
  add_forks(plan, o);
  plan->add_option("--transcript", o.transcript, "with --probe: record the probe's transcript here (default: none)");
  plan->add_flag("-K,--ask-become-pass", o.ask_become_pass, "with --probe: ask once for the sudo password");
  plan->add_option("--become-password-file", o.become_password_file, "with --probe: read the sudo password from FILE");
  plan->add_option("--become-password-env", o.become_password_env,
                   "with --probe: read the sudo password from environment variable NAME");
  add_connect_timeout(plan, o);
  add_transport(plan, o);

  ApplyOptions ap;
  auto* apply = app.add_subcommand("apply", "run a saved plan (ratchet plan --out) exactly, or refuse");
  apply->footer("Exit codes: as run; 2 also when the plan file was edited, is stale (a file it was made from\n"
      "changed, another ratchet, older than --max-age), or a host's endpoint or vars changed; 1 also when a\n"
      "probed plan's hosts changed since its probe (without --yes). Docs: docs/plan.md.");
  apply->add_option("plan", ap.file, "plan file written by `ratchet plan --out`")->required();
  apply->add_option("--expect-digest", ap.expect_digest, "refuse unless the plan's digest is this (the one a reviewer approved)");
  apply->add_option("--max-age", ap.max_age, "refuse a plan older than this (default 24h)");
  apply->add_flag("--yes", ap.yes,
                  "a probed plan (plan --probe --out): apply even when the new probe finds the hosts changed");
  apply->add_option("--limit", ap.base.limit, "run only these of the plan's hosts, groups or globs (comma-separated)")
      ->delimiter(',')
      ->allow_extra_args(false);
  apply->add_option("-e,--extra-var", ap.base.extra, "a secret's value: NAME=VALUE with --secret NAME (vars are fixed in the plan)")
      ->allow_extra_args(false);
  apply->add_option("--secret", ap.base.secret, "the -e value of this name is a secret (repeat for more)")
      ->allow_extra_args(false);
  add_forks(apply, ap.base);
  add_run_options(apply, ap.base);
  // Only to refuse them with the reason: a saved plan runs its own selection.
  add_step_selection(apply, ap.base);

  auto* validate = app.add_subcommand("validate", "load and validate a playbook; connects to nothing");
  validate->footer("Exit codes: 0 valid, 2 usage or playbook error (every error is listed). Docs: docs/playbook.md.");
  validate->add_option("playbook", o.playbook, "playbook file (TOML)")->required();
  add_selectors(validate, o);

  bool hosts_json = false;
  auto* hosts = app.add_subcommand("hosts", "list the hosts a selection resolves to; connects to nothing");
  hosts->footer("Exit codes: 0 listed, 2 usage, playbook or inventory error. Docs: README.md.");
  hosts->add_option("playbook", o.playbook, "playbook whose targets to list (else -i or --target)");
  add_selectors(hosts, o);
  hosts->add_flag("--json", hosts_json, "print as JSON");

  ShowOptions so;
  auto* show = app.add_subcommand("show", "render a transcript for a person");
  show->footer("Exit codes: 0 shown, 1 the file holds no complete event, 2 not a transcript or a usage error;\n"
      "--verify: 0 intact, 1 not; --follow: the run's exit code, 130 on ^C. Docs: docs/transcript.md.");
  show->add_option("transcript", so.path, "transcript file (.jsonl)")->required();
  show->add_option("--host", so.host, "only this host");
  show->add_option("--step", so.step, "only this step id");
  show->add_flag("--json", so.json, "print the matching events as JSON Lines");
  show->add_flag("--follow", so.follow,
                 "render the file's last run as it is written (waits for the file and for each line); "
                 "ends at its run_end with the run's exit code, or on ^C (130)");
  auto* verify = show->add_flag("--verify", so.verify,
                                "check the transcript's hash chain: exit 0 when every run's is intact, 1 naming "
                                "the first line that does not fit");
  show->add_option("--digest", so.digest,
                   "with --verify: also require this digest (a run's final head or a host's digest, as `run` "
                   "printed it; `sha256:` optional)")
      ->needs(verify);
  auto* allowed = show->add_option("--allowed-signers", so.allowed_signers,
                                   "with --verify: also check TRANSCRIPT.sig against this allowed_signers FILE "
                                   "(ssh-keygen -Y verify) and say who signed")
                      ->needs(verify);
  show->add_option("--signer", so.signer,
                   "with --allowed-signers: require this principal (default: the one the file names for the key)")
      ->needs(allowed);

  ReportOptions ro;
  auto* report = app.add_subcommand("report", "write a transcript's run as one self-contained HTML file");
  report->footer("Exit codes: 0 written (a cut run too), 1 the file holds no complete event, 2 not a transcript,\n"
      "no such run, or the report cannot be written. Docs: docs/report.md.");
  report->add_option("transcript", ro.path, "transcript file (.jsonl)")->required();
  report->add_option("-o,--out", ro.out, "the HTML file to write (mode 0600, replaced atomically)")->required();
  report->add_option("--run", ro.run_id, "the run of this id (default: the file's last run)");
  auto* report_allowed = report->add_option(
      "--allowed-signers", ro.allowed_signers,
      "check the run's signature (TRANSCRIPT.sig) against this allowed_signers FILE and show who signed "
      "(default: the signer's key as recorded, not checked)");
  report->add_option("--signer", ro.signer, "with --allowed-signers: require this principal")->needs(report_allowed);

  ExecOptions eo;
  auto* exec = app.add_subcommand("exec", "run one ad hoc command on hosts");
  exec->footer("Exit codes, one host: the command's own exit status, 124 its --timeout ended it, 128+N killed by\n"
      "signal N, 3 host unreachable, 4 host key verification failed, 130 interrupted. Several hosts: 0 every\n"
      "command exited 0, 1 one did not, 3 a host unreachable, 4 host key, 130 interrupted. Docs: README.md.");
  exec->add_option("targets", eo.targets,
                   "inventory hosts and groups with -i (comma-separated), or [user@]host[:port]");
  exec->add_option("command", eo.command, "the command (after --)");
  exec->add_option("-i,--inventory", eo.base.inventory, "inventory file (TOML)");
  exec->add_option("--limit", eo.base.limit, "narrow to these hosts, groups or globs (comma-separated)")
      ->delimiter(',')
      ->allow_extra_args(false);
  exec->add_option("--target", eo.base.target, "ad hoc host [user@]host[:port] (repeat for more)")
      ->allow_extra_args(false);
  exec->add_option("--user", eo.defaults.user, "ad hoc hosts: log in as USER (unless the target says user@)");
  exec->add_option("--port", eo.defaults.port, "ad hoc hosts: connect to PORT (unless the target says :port)")
      ->check(CLI::Range(1, 65535));
  exec->add_option("--identity", eo.defaults.identity, "ad hoc hosts: authenticate with this private key FILE");
  exec->add_option("-F,--ssh-config", eo.base.ssh_config, "ssh config file");
  exec->add_option("--known-hosts", eo.base.known_hosts, "known_hosts file");
  exec->add_flag("--accept-new", eo.base.accept_new, "trust and record a first-seen host key");
  exec->add_option("--timeout", eo.timeout, "deadline for the command (default 60s)");
  add_forks(exec, eo.base);
  exec->add_flag("--json", eo.base.json, "print a JSON summary on stdout (each host's output in it)");
  add_connect_timeout(exec, eo.base);
  exec->add_option("--transcript", eo.base.transcript, "also record a transcript here");
  exec->add_flag("--lock", eo.base.lock, "take each host's lock around the command (docs/playbook.md)");
  exec->add_option("--lock-wait", eo.base.lock_wait, "with --lock: wait up to DURATION for a held lock");
  exec->add_flag("--break-lock", eo.base.break_lock, "with --lock: take a stale lock (its holder's session is gone)");
  // One command per host: a channel costs fewer round trips than starting a session shell for it.
  eo.base.exec_mode = transport::ExecMode::channel;
  add_transport(exec, eo.base);

  std::string schema_of = "playbook";
  auto* schema = app.add_subcommand(
      "schema", "print the JSON Schema of playbooks, included pieces or inventories (docs/editors.md)");
  schema->add_option("file", schema_of, "playbook (default), piece (a file others include) or inventory")
      ->check(CLI::IsMember({"playbook", "piece", "inventory"}));

  // The shells' completion scripts ask here (complete.h); no subcommand, so no help lists it.
  if (argc >= 2 && std::strcmp(argv[1], "__complete") == 0)
    return complete(app, std::vector<std::string>(argv + 2, argv + argc), std::cout);

  if (argc < 2) {  // bare `ratchet`: what there is, briefly
    std::cerr << short_usage(app);
    return kExitUsage;
  }
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  if (argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    std::string near = util::nearest(argv[1], names);
    return usage_error("", fmt::format("unknown command `{}`{}", argv[1],
                                       near.empty() ? "" : fmt::format(" (did you mean `{}`?)", near)));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help, --version: on stdout, exit 0
      std::ostringstream err;
      app.exit(e, std::cout, err);
      return kExitOk;
    }
    // CLI11 may echo any argument: a --secret value among them.
    return usage_error(command_of(app, argc, argv), mask_secret_args(cli11_message(e), argc, argv));
  }
  o.command = command_of(app, argc, argv);
  o.out_given = plan->count("--out") > 0;
  ap.expect_digest_given = apply->count("--expect-digest") > 0;
  so.digest_given = show->count("--digest") > 0;
  eo.base.command = o.command;
  if (*exec && !eo.base.target.empty() && !eo.targets.empty()) {
    // With --target, TARGETS took the command's first word unless a word came before `--`.
    int dashes = -1;
    for (int i = 1; i < argc && dashes < 0; ++i)
      if (std::strcmp(argv[i], "--") == 0) dashes = argc - i - 1;
    if (dashes < 0 || static_cast<size_t>(dashes) == eo.command.size() + 1) {
      eo.command.insert(eo.command.begin(), eo.targets);
      eo.targets.clear();
    }
  }
  ap.base.command = o.command;
  try {
    if (*run) return cmd_run(o, std::vector<std::string>(argv, argv + argc));
    if (*plan && o.probe) return cmd_probe(o, std::vector<std::string>(argv, argv + argc));
    if (*plan) {
      if (!o.transcript.empty() || o.ask_become_pass || !o.become_password_file.empty() ||
          !o.become_password_env.empty())
        return usage_error("plan", "--transcript and the become password options need --probe "
                                   "(plain `plan` connects to nothing)");
      return cmd_plan(o);
    }
    if (*apply) return cmd_apply(ap, std::vector<std::string>(argv, argv + argc));
    if (*validate) return cmd_validate(o);
    if (*hosts) return cmd_hosts(o, hosts_json);
    if (*show) return cmd_show(so);
    if (*report) return cmd_report(ro);
    if (*exec) return cmd_exec(eo);
    if (*schema) return cmd_schema(schema_of);
  } catch (const std::exception& e) {
    std::cerr << "ratchet: error: " << e.what() << "\n";
    return kExitUsage;
  }
  return kExitUsage;
}

}  // namespace ratchet::cli
