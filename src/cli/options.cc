#include "cli/options.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "playbook/inventory.h"
#include "playbook/loader.h"
#include "util/text.h"

namespace ratchet::cli {

std::optional<playbook::Host> parse_target(const std::string& spec, std::string* err) {
  playbook::Host h;
  std::string rest = spec;
  auto at = rest.rfind('@');
  if (at != std::string::npos) {
    h.user = rest.substr(0, at);
    rest = rest.substr(at + 1);
  }
  auto colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(':') == colon) {
    std::string port = rest.substr(colon + 1);
    char* end = nullptr;
    long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end || p < 1 || p > 65535) {
      *err = fmt::format("--target {}: port must be 1..65535", spec);
      return std::nullopt;
    }
    h.port = static_cast<int>(p);
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) {
    *err = fmt::format("--target {}: no host name", spec);
    return std::nullopt;
  }
  // The address stays empty so ~/.ssh/config's HostName for `rest` applies;
  // endpoint_for() matches the config on the name without its port.
  h.name = h.port ? fmt::format("{}:{}", rest, h.port) : rest;
  return h;
}

transport::Endpoint endpoint_for(const playbook::Host& h, const Options& o) {
  transport::Endpoint e;
  // An ad hoc "host:port" target: the ssh config is matched on "host".
  e.name = h.address.empty() ? playbook::connect_name(h) : h.name;
  e.address = h.address;
  e.port = h.port;
  e.user = h.user;
  e.identity = h.identity;
  e.known_hosts = !h.known_hosts.empty() ? h.known_hosts : o.known_hosts;
  e.ssh_config = o.ssh_config;
  e.accept_new = o.accept_new;
  e.jump = h.jump;  // wins over the ssh config's ProxyJump
  e.connect_timeout = o.connect_timeout;
  return e;
}

static void print_errors(const std::vector<playbook::LoadError>& errors) {
  for (const auto& e : errors) std::cerr << playbook::format_error(e) << "\n";
  if (errors.size() > 1) std::cerr << fmt::format("ratchet: {} errors; nothing was run\n", errors.size());
}

std::optional<Loaded> load_all(const Options& o) {
  Loaded L;
  playbook::LoadOptions lo;
  for (const auto& kv : o.extra) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << util::terminal_line(fmt::format("ratchet: error: -e {}: write -e key=value", kv)) << "\n";
      return std::nullopt;
    }
    lo.extra_vars.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    L.extra_keys.push_back(kv.substr(0, eq));
  }
  lo.secret_vars = o.secret;
  std::vector<playbook::LoadError> errors;
  auto pb = playbook::load_playbook(o.playbook, lo, &errors);
  if (!pb) {
    print_errors(errors);
    return std::nullopt;
  }
  L.pb = std::move(*pb);
  if (!o.inventory.empty()) {
    auto inv = playbook::load_inventory(o.inventory, &errors);
    if (!inv) {
      print_errors(errors);
      return std::nullopt;
    }
    L.inv = std::move(*inv);
  } else if (L.pb.inventory) {
    L.inv = L.pb.inventory;
  }
  if (!o.target.empty()) {
    // Ad hoc hosts: added to (or making) the inventory and selected alone.
    if (!L.inv) L.inv = playbook::Inventory{};
    for (const auto& spec : o.target) {
      std::string err;
      auto h = parse_target(spec, &err);
      if (!h) {
        std::cerr << "ratchet: error: " << util::terminal_line(err) << "\n";
        return std::nullopt;
      }
      L.inv->hosts[h->name] = *h;
      L.hosts.push_back(*h);
    }
  } else if (L.inv) {
    std::string err;
    std::vector<std::string> targets = L.pb.targets.empty() ? std::vector<std::string>{"all"} : L.pb.targets;
    auto sel = playbook::resolve_targets(*L.inv, targets, o.limit, &err);
    if (sel.empty()) {
      std::cerr << "ratchet: error: " << util::terminal_line(err) << "\n";
      return std::nullopt;
    }
    for (const auto* h : sel) L.hosts.push_back(*h);
  } else {
    std::cerr << fmt::format(
        "ratchet: error: {}: no inventory: give -i INVENTORY, an [inventory] table in the playbook, "
        "or --target user@host:port\n", o.playbook);
    return std::nullopt;
  }
  playbook::check_references(L.pb, L.inv ? &*L.inv : nullptr, &errors);
  if (!errors.empty()) {
    print_errors(errors);
    return std::nullopt;
  }
  return L;
}

std::optional<nlohmann::json> resolve_secrets(const playbook::Playbook& pb, bool dry_run) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, source] : pb.secrets) {
    if (dry_run) {
      out[name] = "***";
      continue;
    }
    if (source == "-e") {
      out[name] = pb.extra_secrets.at(name);
      continue;
    }
    if (source.rfind("env:", 0) == 0) {
      const char* v = std::getenv(source.substr(4).c_str());
      if (!v) {
        std::cerr << fmt::format("ratchet: error: secret `{}`: environment variable {} is not set\n",
                                 name, source.substr(4));
        return std::nullopt;
      }
      out[name] = std::string(v);
    } else if (source.rfind("file:", 0) == 0) {
      std::ifstream in(source.substr(5), std::ios::binary);
      if (!in) {
        std::cerr << fmt::format("ratchet: error: secret `{}`: cannot read {}\n", name, source.substr(5));
        return std::nullopt;
      }
      std::ostringstream ss;
      ss << in.rdbuf();
      std::string v = ss.str();
      while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
      out[name] = v;
    }
  }
  return out;
}

}  // namespace ratchet::cli
