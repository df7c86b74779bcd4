// `ratchet __complete` (complete.h): candidates for the shell, from CLI11's definitions.
#include "cli/complete.h"

#include <algorithm>
#include <set>

#include "playbook/doc.h"
#include "playbook/loader.h"

namespace ratchet::cli {
namespace {

// What an option's value or a positional is.
enum class Want { nothing, files, toml, jsonl, hosts, steps, tags, choices };

std::string long_name(const CLI::Option* o) {
  if (o->get_positional()) return o->get_name();
  return o->get_lnames().empty() ? "" : o->get_lnames().front();
}

Want want_of(const CLI::Option* o) {
  const std::string n = long_name(o);
  if (o->get_positional()) {
    if (n == "playbook") return Want::toml;
    if (n == "transcript") return Want::jsonl;
    if (n == "plan") return Want::files;
    if (n == "host" || n == "targets") return Want::hosts;
  } else {
    for (const char* f : {"inventory", "ssh-config", "known-hosts", "transcript", "report", "out", "become-password-file",
                          "sign-key", "allowed-signers"})
      if (n == f) return Want::files;
    if (n == "limit" || n == "target" || n == "host") return Want::hosts;
    if (n.find("tag") != std::string::npos) return Want::tags;
    if (n.find("step") != std::string::npos || n == "start-at") return Want::steps;
  }
  return Want::choices;  // an IsMember check's words, if it has one
}

// The words of an IsMember check ("{linear,free}"), or none.
std::vector<std::string> choices(CLI::Option* o) {
  std::vector<std::string> out;
  try {
    std::string d = o->get_validator()->get_description();
    if (d.size() < 2 || d.front() != '{' || d.back() != '}') return out;
    d = d.substr(1, d.size() - 2);
    for (size_t from = 0;;) {
      size_t comma = d.find(',', from);
      out.push_back(d.substr(from, comma - from));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
  } catch (const CLI::Error&) {  // no validator
  }
  return out;
}

// A flag expects no value (CLI11 sets expected(0) for it; its type size may still be 1).
bool takes_value(const CLI::Option* o) { return o->get_expected_max() != 0; }

CLI::Option* find_option(CLI::App* sub, const std::string& word) {
  for (CLI::Option* o : sub->get_options()) {
    if (o->get_positional()) continue;
    for (const auto& l : o->get_lnames())
      if (word == "--" + l) return o;
    for (const auto& s : o->get_snames())
      if (word == "-" + s) return o;
  }
  return nullptr;
}

std::optional<playbook::Doc> read_doc(const std::string& path) {
  std::string text, err;
  if (path.empty() || !playbook::read_text_file(path, &text, &err)) return std::nullopt;
  std::vector<playbook::LoadError> errors;
  return playbook::parse_doc(std::move(text), path, &errors);
}

// Host and group names of an inventory table (a file's root or a playbook's [inventory]).
void inventory_names(const playbook::Value& inv, std::vector<std::string>* out) {
  if (!inv.is_table()) return;
  for (const char* k : {"hosts", "groups"})
    if (inv.contains(k) && inv[k].is_table())
      for (const auto& it : inv[k].as_table()) out->push_back(it.first);
}

struct Line {
  std::string inventory;  ///< -i FILE
  std::string playbook;   ///< the `playbook` positional
};

std::vector<std::string> values(Want w, CLI::Option* o, const Line& line) {
  std::vector<std::string> out;
  if (w == Want::choices) return choices(o);
  if (w == Want::hosts) {
    if (!line.inventory.empty()) {  // -i wins, as in a run
      if (auto doc = read_doc(line.inventory)) inventory_names(doc->root, &out);
    } else if (auto pb = read_doc(line.playbook); pb && pb->root.contains("inventory"))
      inventory_names(pb->root["inventory"], &out);
    if (!out.empty()) out.push_back("all");
  }
  if ((w == Want::steps || w == Want::tags) && !line.playbook.empty()) {
    // The loaded steps, includes expanded: what --step and --tags read.
    std::vector<playbook::LoadError> errors;
    playbook::Playbook partial;
    playbook::load_playbook(line.playbook, {}, &errors, &partial);
    for (const auto& s : partial.steps) {
      if (w == Want::tags) {
        out.insert(out.end(), s.tags.begin(), s.tags.end());
        continue;
      }
      if (s.id.empty()) continue;
      out.push_back(s.id);
      // An include's id names all the steps it brought: "free" and "free.inner" for free.inner.x.
      for (size_t dot = s.id.find('.'); dot != std::string::npos; dot = s.id.find('.', dot + 1))
        out.push_back(s.id.substr(0, dot));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void print(std::ostream& out, Want w) {
  if (w == Want::files) out << ":files\n";
  if (w == Want::toml) out << ":files toml\n";
  if (w == Want::jsonl) out << ":files jsonl\n";
}

// Prints each of `cands` that starts with `cur`; `prefix` goes before each (a "--opt=" or "a,b,").
void offer(std::ostream& out, const std::vector<std::string>& cands, const std::string& cur, const std::string& prefix = "") {
  for (const auto& c : cands)
    if (c.rfind(cur, 0) == 0) out << prefix << c << "\n";
}

// The values of `o` that complete `cur` (after `prefix`); names of a list split at commas.
void offer_values(std::ostream& out, CLI::Option* o, const std::string& cur, const Line& line, std::string prefix = "") {
  Want w = want_of(o);
  print(out, w);
  std::string tail = cur;
  if (w == Want::hosts || w == Want::tags || w == Want::steps)
    if (size_t comma = cur.rfind(','); comma != std::string::npos) {
      prefix += cur.substr(0, comma + 1);
      tail = cur.substr(comma + 1);
    }
  offer(out, values(w, o, line), tail, prefix);
}

}  // namespace

int complete(CLI::App& app, const std::vector<std::string>& words, std::ostream& out) {
  const std::string cur = words.empty() ? "" : words.back();
  const size_t n = words.empty() ? 0 : words.size() - 1;  // words before the current one
  CLI::App* sub = nullptr;
  size_t i = 0;
  for (; i < n && !sub; ++i)
    for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; }))
      if (s->get_name() == words[i]) sub = s;
  if (!sub) {
    std::vector<std::string> names;
    if (cur.rfind("-", 0) == 0) {
      names = {"--help", "--version"};
    } else {
      for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(s->get_name());
    }
    offer(out, names, cur);
    return 0;
  }
  std::vector<CLI::Option*> positionals;
  for (CLI::Option* o : sub->get_options())
    if (o->get_positional()) positionals.push_back(o);
  Line line;
  size_t given = 0;  // positionals given
  CLI::Option* pending = nullptr;
  bool dashdash = false;
  auto record = [&](CLI::Option* o, const std::string& v) {
    if (long_name(o) == "inventory") line.inventory = v;
    if (o->get_positional() && long_name(o) == "playbook") line.playbook = v;
  };
  for (; i < n; ++i) {
    const std::string& w = words[i];
    if (pending) {
      record(pending, w);
      pending = nullptr;
    } else if (!dashdash && w == "--") {
      dashdash = true;
    } else if (!dashdash && w.size() > 1 && w[0] == '-') {
      size_t eq = w.find('=');
      CLI::Option* o = find_option(sub, w.substr(0, eq));
      if (o && takes_value(o)) {
        if (eq == std::string::npos) pending = o;
        else record(o, w.substr(eq + 1));
      }
    } else if (given < positionals.size()) {
      record(positionals[given++], w);
    }
  }
  if (pending) {
    offer_values(out, pending, cur, line);
  } else if (!dashdash && cur.rfind("--", 0) == 0 && cur.find('=') != std::string::npos) {
    size_t eq = cur.find('=');
    if (CLI::Option* o = find_option(sub, cur.substr(0, eq)); o && takes_value(o))
      offer_values(out, o, cur.substr(eq + 1), line, cur.substr(0, eq + 1));
  } else if (!dashdash && cur.rfind("-", 0) == 0) {
    std::vector<std::string> names;
    for (CLI::Option* o : sub->get_options()) {
      if (o->get_positional()) continue;
      for (const auto& l : o->get_lnames()) names.push_back("--" + l);
      for (const auto& s : o->get_snames()) names.push_back("-" + s);
    }
    offer(out, names, cur);
  } else if (given < positionals.size()) {
    offer_values(out, positionals[given], cur, line);
  }
  return 0;
}

}  // namespace ratchet::cli
