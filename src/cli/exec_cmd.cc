// `ratchet exec HOST -- COMMAND`: one ad hoc command over the same transport
// (host keys, deadline wrapper); the remote exit status is passed through.
#include <fmt/format.h>

#include <csignal>
#include <cstring>
#include <atomic>
#include <unistd.h>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "playbook/inventory.h"
#include "playbook/loader.h"
#include "transcript/writer.h"
#include "transport/wire.h"
#include "util/spell.h"

namespace ratchet::cli {

static std::atomic<bool> g_exec_interrupted{false};

static void on_exec_signal(int) {
  if (g_exec_interrupted.exchange(true)) {  // second ^C: leave now, and say what that means
    static const char msg[] = "ratchet: second interrupt: leaving now; the remote command may run on until its deadline\n";
    (void)!::write(2, msg, sizeof msg - 1);
    std::_Exit(kExitInterrupted);
  }
}


static int signal_number(const std::string& name) {
  for (int s = 1; s < 32; ++s) {
    const char* abbrev = sigabbrev_np(s);
    if (abbrev && name == abbrev) return s;
  }
  return 0;
}

int cmd_exec(const ExecOptions& o) {
  playbook::Host host;
  bool found = false;
  if (!o.base.inventory.empty()) {
    std::vector<playbook::LoadError> errors;
    auto inv = playbook::load_inventory(o.base.inventory, &errors);
    if (!inv) {
      for (const auto& e : errors) std::cerr << playbook::format_error(e) << "\n";
      return kExitUsage;
    }
    auto it = inv->hosts.find(o.host);
    if (it != inv->hosts.end()) {
      host = it->second;
      found = true;
    } else if (o.host.find_first_of("@:.") == std::string::npos) {
      // A bare name with -i must be one of its hosts (a group runs nothing here).
      std::vector<std::string> names;
      for (const auto& [n, h] : inv->hosts) names.push_back(n);
      std::string near = util::nearest(o.host, names);
      std::cerr << fmt::format("ratchet: error: {} is not a host in {}{}\n", o.host, o.base.inventory,
                               near.empty() ? "" : fmt::format(" (did you mean `{}`?)", near));
      return kExitUsage;
    }
  }
  if (!found) {
    std::string err;
    auto h = parse_target(o.host, &err);
    if (!h) {
      std::cerr << "ratchet: error: " << err << "\n";
      return kExitUsage;
    }
    host = *h;
  }
  std::string why;
  auto timeout = util::parse_duration(o.timeout, &why);
  if (timeout && timeout->count() <= 0) {  // as a step's timeout: a deadline must be ahead
    timeout.reset();
    why = "must be more than 0";
  }
  if (!timeout) {
    std::cerr << fmt::format("ratchet: error: --timeout {}: {}\n", o.timeout, why);
    return kExitUsage;
  }
  std::string command;
  for (const auto& w : o.command) command += (command.empty() ? "" : " ") + w;

  auto t = transport::make_ssh_transport(endpoint_for(host, o.base));
  transport::ConnectInfo info;
  if (auto err = t->connect(&info)) {
    std::cerr << "ratchet: " << err->message << "\n";
    bool key = err->kind == transport::FailureKind::host_key_unknown ||
               err->kind == transport::FailureKind::host_key_changed;
    return key ? kExitHostKey : kExitUnreachable;
  }
  transport::ExecRequest req;
  req.command = transport::wire_command(command, *timeout, {});
  req.timeout = transport::client_deadline(*timeout);
  req.host_timeout = *timeout;
  // ^C / SIGTERM: the remote command's process group is stopped (ssh_exec.cc).
  g_exec_interrupted = false;
  req.cancel = &g_exec_interrupted;
  auto old_int = std::signal(SIGINT, on_exec_signal);
  auto old_term = std::signal(SIGTERM, on_exec_signal);
  auto r = t->exec(req);
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  t->close();
  if (!o.base.transcript.empty()) {
    transcript::Writer w(o.base.transcript);
    w.emit("command", {{"host", host.name}, {"role", "action"}, {"command", command}, {"sent", req.command}});
    w.emit("exit", {{"host", host.name}, {"code", r.exit_code}, {"ms", r.ms}, {"timed_out", r.timed_out}});
  }
  std::cout << r.out.data << std::flush;
  std::cerr << r.err.data << std::flush;
  if (r.error == "interrupted") {
    std::cerr << "ratchet: " << host.name << ": interrupted; the remote command was stopped\n";
    return kExitInterrupted;
  }
  if (!r.error.empty()) {
    std::cerr << "ratchet: " << host.name << ": " << r.error << "\n";
    return kExitUnreachable;
  }
  if (r.timed_out) std::cerr << fmt::format("ratchet: {}: timed out after {}\n", host.name, o.timeout);
  if (!r.signal.empty()) {
    std::cerr << fmt::format("ratchet: {}: killed by SIG{}\n", host.name, r.signal);
    int n = signal_number(r.signal);
    return 128 + (n ? n : 0);
  }
  return r.exit_code;
}

}  // namespace ratchet::cli
