// Inventory files and [inventory] tables -> Inventory (docs/playbook.md, "Inventory").
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

#include "playbook/loader_internal.h"
#include "playbook/schema.h"
#include "transport/jump_spec.h"
#include "util/rules.h"
#include "util/spell.h"

namespace ratchet::playbook {
namespace {

using T = FieldType;

std::string hint_for(const std::string& word, const std::vector<std::string>& cands) {
  std::string n = util::nearest(word, cands);
  return n.empty() ? "" : fmt::format("did you mean `{}`?", n);
}

std::vector<std::string> key_names() {
  std::vector<std::string> out;
  for (const auto& f : host_fields()) out.push_back(f.name);
  return out;
}

// Why `a` cannot be a host address ("" = it can): a DNS name, IPv4 or IPv6
// (with an optional %zone), as ssh(1) takes after `-l user`; never empty, a
// blank, a shell or option character ("-oProxyCommand=..." would be an option).
std::string address_problem(const std::string& a) {
  if (a.empty()) return "is empty";
  if (a[0] == '-') return "starts with `-`";
  if (std::count(a.begin(), a.end(), ':') == 1) return "holds a port";
  for (unsigned char c : a) {
    if (c == ' ') return "holds a space";
    if (!std::isalnum(c) && c != '.' && c != '-' && c != '_' && c != ':' && c != '%')
      return fmt::format("holds `{}`", c < 0x20 || c == 0x7f ? fmt::format("\\x{:02x}", c) : std::string(1, char(c)));
  }
  return "";
}

void read_host(const Diag& d, const DocPath& p, const std::string& name, const Value& t, Host* h) {
  h->name = name;
  h->where = d.doc.key_at(p);
  for (const auto& it : t.as_table()) {
    const std::string& k = it.first;
    auto spec = std::find_if(host_fields().begin(), host_fields().end(),
                             [&](const FieldSpec& f) { return f.name == k; });
    if (spec == host_fields().end()) {
      d.error(d.doc.key_at(p / k), fmt::format("unknown key `{}` in host `{}`", k, name),
              hint_for(k, key_names()));
      continue;
    }
    const Value& v = it.second;
    if (is_guard_key(k)) {  // typed by their own rule (a path or false)
      if (std::string err = read_guard_key(k, v, &h->guards); !err.empty()) d.error(d.doc.at(p / k), err);
      continue;
    }
    if (std::string err = type_error(k, it.second, spec->type, false); !err.empty()) {
      d.error(d.doc.at(p / k), err);
      continue;
    }
    if (k == "address") {
      h->address = v.as_string();
      if (std::string why = address_problem(h->address); !why.empty())
        d.error(d.doc.at(p / k), fmt::format("host `{}`: address `{}` {}", name, h->address, why),
                "write a host name, an IPv4 address or an IPv6 address (no port: use `port`)");
    }
    if (k == "port") {
      if (std::string why = util::range_problem(k, v.as_int()); !why.empty())
        d.error(d.doc.at(p / k), why);
      else
        h->port = v.as_int();
    }
    if (k == "user") h->user = v.as_string();
    if (k == "identity") h->identity = v.as_string();
    if (k == "known_hosts") h->known_hosts = v.as_string();
    if (k == "jump") {  // checked here so the error points at the value
      h->jump = v.as_string();
      std::vector<transport::JumpHop> hops;
      std::string err;
      if (!transport::parse_jump_spec(h->jump, &hops, &err))
        d.error(d.doc.at(p / k), fmt::format("host `{}`: jump {}", name, err),
                "write jump = \"user@host:port\", or \"user@a:22,user@b:22\" for a chain");
    }
    if (k == "become") h->become = v.as_bool();
    if (k == "become_user") h->become_user = v.as_string();
    if (k == "vars") h->vars = v;
  }
}

// Groups: members must exist; no group may contain itself.
void check_groups(const Diag& d, const DocPath& at, Inventory* inv) {
  std::vector<std::string> names;
  for (const auto& [h, _] : inv->hosts) names.push_back(h);
  for (const auto& [g, _] : inv->groups) names.push_back(g);
  for (const auto& [g, members] : inv->groups) {
    for (size_t i = 0; i < members.size(); ++i) {
      const std::string& m = members[i];
      if (inv->hosts.contains(m) || inv->groups.contains(m)) continue;
      d.error(d.doc.at(at / "groups" / g / i),
              fmt::format("unknown host or group `{}` in group `{}`", m, g), hint_for(m, names));
    }
  }
  // Depth-first search; a group met again on the current path closes a cycle.
  std::set<std::string> done;
  std::vector<std::string> stack;
  std::function<bool(const std::string&)> visit = [&](const std::string& g) {
    auto on = std::find(stack.begin(), stack.end(), g);
    if (on != stack.end()) {
      std::string path;
      for (auto it = on; it != stack.end(); ++it) path += *it + " -> ";
      d.error(d.doc.key_at(at / "groups" / g),
              fmt::format("group `{}` contains itself ({}{})", g, path, g));
      return false;
    }
    if (done.contains(g)) return true;
    stack.push_back(g);
    for (const auto& m : inv->groups[g])
      if (inv->groups.contains(m) && !visit(m)) return false;
    stack.pop_back();
    done.insert(g);
    return true;
  };
  for (const auto& [g, _] : inv->groups) {
    stack.clear();
    if (!visit(g)) break;  // one report per inventory is enough
  }
}

}  // namespace

std::optional<Inventory> read_inventory(const Doc& doc, const DocPath& at,
                                        std::vector<LoadError>* errors) {
  Diag d{doc, errors};
  size_t before = errors->size();
  Inventory inv;
  inv.path = doc.file;
  const Value& root = doc.get(at);
  std::vector<std::string> top;
  for (const auto& f : inventory_fields()) top.push_back(f.name);
  for (const auto& it : root.as_table())
    if (std::find(top.begin(), top.end(), it.first) == top.end())
      d.error(doc.key_at(at / it.first), fmt::format("unknown inventory key `{}`", it.first),
              hint_for(it.first, top));
  auto table = [&](const char* key) -> const Value* {
    if (!root.contains(key)) return nullptr;
    std::string err = type_error(key, root[key], T::table, false);
    if (err.empty()) return &root[key];
    d.error(doc.at(at / key), err);
    return nullptr;
  };
  if (auto hosts = table("hosts")) {
    std::vector<std::pair<std::pair<int, int>, std::string>> order;
    for (const auto& it : hosts->as_table()) {
      DocPath p = at / "hosts" / it.first;
      if (it.first == "all") {
        d.error(doc.key_at(p), "`all` names every host; a host cannot be called that");
        continue;
      }
      // A name is printed in progress, recap and plan: no byte may drive the terminal.
      if (std::any_of(it.first.begin(), it.first.end(),
                      [](unsigned char c) { return c < 0x20 || c == 0x7f; }) ||
          it.first.empty()) {
        d.error(doc.key_at(p), "a host name must not be empty or hold control characters",
                "name the host with letters, digits, `-`, `_` and `.`");
        continue;
      }
      if (std::string err = type_error(it.first, it.second, T::table, false); !err.empty()) {
        d.error(doc.at(p), fmt::format("host `{}` must be a table, not {}", it.first,
                                       value_type_name(it.second)));
        continue;
      }
      Host& h = inv.hosts[it.first];
      read_host(d, p, it.first, it.second, &h);
      order.push_back({{h.where.line, h.where.col}, it.first});
    }
    std::sort(order.begin(), order.end());
    for (const auto& [_, name] : order) inv.order.push_back(name);
  }
  if (auto groups = table("groups")) {
    for (const auto& it : groups->as_table()) {
      DocPath p = at / "groups" / it.first;
      if (std::string err = type_error(it.first, it.second, T::strings, false); !err.empty()) {
        d.error(doc.at(p),
                fmt::format("group `{}` must be an array of host or group names", it.first));
        continue;
      }
      if (it.first == "all")
        d.error(doc.key_at(p), "`all` names every host already; pick another group name");
      if (inv.hosts.contains(it.first))
        d.error(doc.key_at(p), fmt::format("`{}` is both a host and a group", it.first));
      auto& members = inv.groups[it.first];
      if (it.second.is_string())
        members.push_back(it.second.as_string());
      else
        for (const auto& m : it.second.as_array()) members.push_back(m.as_string());
    }
    check_groups(d, at, &inv);
  }
  if (auto gv = table("group_vars")) {
    std::vector<std::string> names = {"all"};
    for (const auto& [g, _] : inv.groups) names.push_back(g);
    for (const auto& it : gv->as_table()) {
      DocPath p = at / "group_vars" / it.first;
      if (it.first != "all" && !inv.groups.contains(it.first)) {
        d.error(doc.key_at(p), fmt::format("group_vars for unknown group `{}`", it.first),
                hint_for(it.first, names));
        continue;
      }
      if (!it.second.is_table()) {
        d.error(doc.at(p), fmt::format("group_vars.{} must be a table, not {}", it.first,
                                       value_type_name(it.second)));
        continue;
      }
      inv.group_vars[it.first] = it.second;
    }
  }
  if (auto def = table("defaults")) {  // run defaults: `sign`
    std::vector<std::string> names;
    for (const auto& f : inventory_defaults_fields()) names.push_back(f.name);
    for (const auto& it : def->as_table()) {
      DocPath p = at / "defaults" / it.first;
      if (std::find(names.begin(), names.end(), it.first) == names.end())
        d.error(doc.key_at(p), fmt::format("unknown key `{}` in the inventory's [defaults]", it.first),
                hint_for(it.first, names));
      else if (std::string err = type_error(it.first, it.second, T::boolean, false); !err.empty())
        d.error(doc.at(p), err, "write sign = true or sign = false");
      else
        inv.sign = it.second.as_bool();
    }
  }
  if (errors->size() != before) return std::nullopt;
  return inv;
}

std::optional<Inventory> load_inventory(const std::string& path, std::vector<LoadError>* errors) {
  std::string text, err;
  if (!read_text_file(path, &text, &err)) {
    errors->push_back({{path, 0, 0}, "cannot read the inventory: " + err, "", ""});
    return std::nullopt;
  }
  auto doc = parse_doc(std::move(text), path, errors);
  if (!doc) return std::nullopt;
  size_t before = errors->size();
  auto inv = read_inventory(*doc, DocPath(), errors);
  sort_errors(errors, before, path);
  return inv;
}

}  // namespace ratchet::playbook
