// Reading a plan file (codec.h): strictly, so that what runs is what the file shows.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "plan/codec.h"
#include "transcript/value_json.h"
#include "util/text.h"

namespace ratchet::plan {

using nlohmann::json;

namespace {

// Reads one member of `j` with the type asked; throws a message naming `where.key`.
struct Reader {
  std::string where;
  const json& j;
  const json& at(const char* key) const {
    if (!j.is_object() || !j.contains(key)) throw std::runtime_error(fmt::format("{}: `{}` is missing", where, key));
    return j[key];
  }
  std::string str(const char* key) const {
    const json& v = at(key);
    if (!v.is_string()) throw std::runtime_error(fmt::format("{}: `{}` must be a string", where, key));
    return v.get<std::string>();
  }
  std::string str_or(const char* key, std::string dflt) const { return j.contains(key) ? str(key) : dflt; }
  /// The string at `key` read by `parse` (steps::parse_role, ...); a name that is
  /// none of `all` throws a message that lists theirs.
  template <class E, size_t N>
  E parsed(const char* key, std::optional<E> (*parse)(std::string_view), const std::array<E, N>& all) const {
    std::string s = str(key);
    if (auto v = parse(s)) return *v;
    std::string names;
    for (E e : all) names += fmt::format("{}{}", names.empty() ? "" : ", ", name(e));
    throw std::runtime_error(fmt::format("{}: `{}` is `{}`, not one of {}", where, key, s, names));
  }
  long long num(const char* key) const {
    const json& v = at(key);
    if (!v.is_number_integer()) throw std::runtime_error(fmt::format("{}: `{}` must be an integer", where, key));
    return v.get<long long>();
  }
  long long num_or(const char* key, long long dflt) const { return j.contains(key) ? num(key) : dflt; }
  bool flag(const char* key) const {
    if (!j.contains(key)) return false;
    if (!j[key].is_boolean()) throw std::runtime_error(fmt::format("{}: `{}` must be true or false", where, key));
    return j[key].get<bool>();
  }
  std::string bytes(const char* key) const {
    std::string b64 = std::string(key) + "_b64";
    if (j.contains(b64)) {
      std::string out;
      if (!j[b64].is_string() || !util::unbase64(j[b64].get<std::string>(), &out))
        throw std::runtime_error(fmt::format("{}: `{}` is not base64", where, b64));
      return out;
    }
    return str_or(key, "");
  }
  const json& arr(const char* key) const {
    const json& v = at(key);
    if (!v.is_array()) throw std::runtime_error(fmt::format("{}: `{}` must be an array", where, key));
    return v;
  }
  std::vector<std::string> strs(const char* key) const {
    std::vector<std::string> out;
    if (!j.contains(key)) return out;
    for (const auto& x : arr(key)) {
      if (!x.is_string()) throw std::runtime_error(fmt::format("{}: `{}` must hold strings", where, key));
      out.push_back(x.get<std::string>());
    }
    return out;
  }
};

// The inverse of codec.cc's expect_json; what it cannot read fails the plan's
// check that the file encodes back to itself.
steps::Expect expect_from(const json& e, const std::string& where) {
  steps::Expect x;
  auto bad = [&] { return std::runtime_error(fmt::format("{}: `expect` is not an expectation ratchet writes", where)); };
  if (e.is_array()) {
    for (const auto& c : e) {
      if (!c.is_number_integer()) throw bad();
      x.exit_codes.push_back(c.get<int>());
    }
  } else if (e.is_string()) {
    x.stdout_matches = e.get<std::string>();
  } else if (e.is_object() && e.contains("max_memory_used_mib")) {
    steps::Expect::Gpus g;
    auto strs = [&](const char* k) {
      std::vector<std::string> out;
      if (!e.contains(k)) return out;
      if (!e[k].is_array()) throw bad();
      for (const auto& s : e[k]) {
        if (!s.is_string()) throw bad();
        out.push_back(s.get<std::string>());
      }
      return out;
    };
    if (!e["max_memory_used_mib"].is_number_integer() || !e.contains("gpus")) throw bad();
    g.max_memory_used_mib = e["max_memory_used_mib"].get<long long>();
    g.gpus = e["gpus"] == "all" ? std::vector<std::string>{"all"} : strs("gpus");
    g.user = strs("user");
    g.exclude = strs("exclude");
    x.gpus = std::move(g);
  } else if (e.is_object() && e.contains("type")) {  // copy: one entry
    Reader r{where + " expect", e};
    x.entry = steps::Expect::Entry{r.bytes("path"), r.str("type"), r.str("sha256"), r.str("mode"), r.str("owner"),
                                   r.str("group")};
  } else if (e.is_object() && e.contains("sha256")) {
    auto str = [&](const char* k) {
      if (!e.contains(k) || !e[k].is_string()) throw bad();
      return e[k].get<std::string>();
    };
    x.file = steps::Expect::File{str("sha256"), str("mode"), str("owner"), str("group")};
  } else if (e.is_object()) {
    if (e.contains("state")) {
      if (!e["state"].is_string()) throw bad();
      x.state = e["state"].get<std::string>();
    }
    if (e.contains("enabled")) {
      if (!e["enabled"].is_boolean()) throw bad();
      x.enabled = e["enabled"].get<bool>();
    }
    if (e.contains("file_sha256")) {
      if (!e["file_sha256"].is_string()) throw bad();
      x.file_sha256 = e["file_sha256"].get<std::string>();
    }
  } else {
    throw bad();
  }
  return x;
}

steps::Command command_from(const Reader& r) {
  steps::Command c;
  c.role = r.parsed("role", steps::parse_role, steps::kRoles);
  c.text = r.str("command");
  c.timeout = util::Millis(r.num("timeout_ms"));
  c.judge = r.parsed("judge", steps::parse_judge, steps::kJudges);
  if (r.j.contains("expect")) c.expect = expect_from(r.j["expect"], r.where);
  c.stdin_secret = r.flag("stdin_secret");
  c.stdin_from_action = r.flag("stdin_from_action");
  if (!c.stdin_secret) c.stdin_data = r.bytes("stdin");
  if (r.j.contains("stdin_file")) {
    Reader f{r.where + " stdin_file", r.j["stdin_file"]};
    c.stdin_file = steps::LocalInput{f.bytes("path"), static_cast<unsigned long long>(f.num("size")), f.str("sha256")};
  }
  return c;
}

Step step_from(const json& sj, const std::string& where) {
  Reader r{where, sj};
  Step p;
  p.id = r.str("id");
  r.where = fmt::format("{} (step {})", where, p.id);
  p.kind = r.parsed("kind", playbook::parse_kind, playbook::kKinds);
  p.name = r.str("name");
  p.source = r.str("source");
  p.timeout = util::Millis(r.num("timeout_ms"));
  std::string of = r.str("on_failure");
  if (of != "stop" && of != "continue") throw std::runtime_error(r.where + ": `on_failure` must be stop or continue");
  p.on_failure = of == "continue" ? playbook::OnFailure::cont : playbook::OnFailure::stop;
  p.capture = static_cast<size_t>(r.num("capture_bytes"));
  p.when = r.str_or("when", "");
  p.register_as = r.str_or("register", "");
  const json& b = r.at("become");
  p.become = b.is_string();
  if (p.become) {
    p.become_shown = b.get<std::string>();
    p.become_user = r.str("become_user");
    p.sudo_argv = r.str("sudo_argv");
  } else if (!b.is_boolean() || b.get<bool>()) {
    throw std::runtime_error(r.where + ": `become` must be a user name or false");
  }
  if (sj.contains("runtime")) p.runtime_refs = Reader{r.where + " runtime", sj["runtime"]}.strs("placeholders");
  p.prepared.action_is_result = r.flag("action_is_result");
  p.prepared.expect_exit.clear();
  for (const auto& x : r.arr("expect_exit")) {
    if (!x.is_number_integer()) throw std::runtime_error(r.where + ": `expect_exit` must hold integers");
    p.prepared.expect_exit.push_back(x.get<int>());
  }
  for (const auto& rj : r.arr("rungs")) {
    Reader rr{r.where + " rung", rj};
    steps::Rung rung;
    if (static_cast<size_t>(rr.num("rung")) != p.prepared.rungs.size())
      throw std::runtime_error(r.where + ": rungs are out of order");
    rung.kind = rr.parsed("kind", playbook::parse_kind, playbook::kKinds);
    rung.settle = util::Millis(rr.num("settle_ms"));
    rung.retries = static_cast<int>(rr.num("retries"));
    rung.delay = util::Millis(rr.num("delay_ms"));
    rung.always_act = rr.flag("always_act");
    rung.reboot_timeout = util::Millis(rr.num_or("reboot_timeout_ms", 0));
    rung.max_size = static_cast<unsigned long long>(rr.num_or("max_size", 0));
    RungFacts rf;
    rf.timeout = util::Millis(rr.num("timeout_ms"));
    if (rj.contains("wait_ms")) rf.wait = util::Millis(rr.num("wait_ms"));
    p.prepared.rungs.push_back(std::move(rung));
    p.rung_facts.push_back(rf);
  }
  for (const auto& cj : r.arr("commands")) {
    Reader cr{r.where + " command", cj};
    size_t k = static_cast<size_t>(cr.num("rung"));
    if (k >= p.prepared.rungs.size()) throw std::runtime_error(r.where + ": a command names a rung it lacks");
    steps::Rung& rung = p.prepared.rungs[k];
    steps::Command c = command_from(cr);
    if (cr.flag("after_reboot")) rung.after.push_back(std::move(c));
    else if (c.role == steps::Role::check) rung.check.push_back(std::move(c));
    else if (c.role == steps::Role::action && !rung.action) rung.action = std::move(c);
    else if (c.role == steps::Role::action && rung.kind == playbook::Kind::copy) rung.more_actions.push_back(std::move(c));
    else throw std::runtime_error(fmt::format("{}: unexpected command of role `{}` in rung {}", r.where, name(c.role), k));
  }
  return p;
}

playbook::HostCount count_from(const json& j) {
  playbook::HostCount c;
  if (j.is_null()) return c;
  c.set = true;
  if (j.is_number_integer()) {
    c.value = j.get<long long>();
  } else if (j.is_string() && !j.get<std::string>().empty() && j.get<std::string>().back() == '%') {
    c.percent = true;
    c.value = std::stoll(j.get<std::string>());
  } else {
    throw std::runtime_error("policy: a host count must be N or \"N%\"");
  }
  return c;
}

}  // namespace

namespace {

// Most nesting a plan file has (hosts > steps > commands > expect, vars): 64 is plenty.
constexpr int kMaxDepth = 64;

// Parses `text` refusing duplicate keys (a reviewer's tool may read the first,
// the decoder the last) and nesting deeper than kMaxDepth. Discarded on failure, *why set.
json parse_strict(const std::string& text, std::string* why) {
  std::vector<std::vector<std::string>> keys;  // per open object
  json::parser_callback_t cb = [&](int depth, json::parse_event_t ev, json& parsed) {
    if (depth > kMaxDepth) throw std::runtime_error(fmt::format("it nests deeper than {} levels", kMaxDepth));
    if (ev == json::parse_event_t::object_start) keys.emplace_back();
    else if (ev == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    else if (ev == json::parse_event_t::key && !keys.empty()) {
      const std::string k = parsed.get<std::string>();
      if (std::find(keys.back().begin(), keys.back().end(), k) != keys.back().end())
        throw std::runtime_error(fmt::format("the key `{}` appears twice in one object", k));
      keys.back().push_back(k);
    }
    return true;
  };
  try {
    return json::parse(text, cb, true);
  } catch (const std::runtime_error& e) {
    *why = e.what();
  } catch (const json::exception&) {
    *why = "it is not one JSON object";
  }
  return json(json::value_t::discarded);
}

}  // namespace

std::optional<Plan> decode_file(const std::string& text, std::string* err) {
  std::string why;
  json j = parse_strict(text, &why);
  if (j.is_discarded() && why != "it is not one JSON object") {
    *err = fmt::format("not a plan file `ratchet plan --out` wrote: {}", why);
    return std::nullopt;
  }
  if (j.is_discarded() || !j.is_object()) {
    *err = "not a ratchet plan file: it is not one JSON object (truncated or not made by `ratchet plan --out`)";
    return std::nullopt;
  }
  if (!j.contains("format") || j["format"] != kFormat) {
    *err = "not a ratchet plan file: it has no \"format\": \"ratchet-plan\" (make one with `ratchet plan --out FILE`)";
    return std::nullopt;
  }
  if (!j.contains("version") || j["version"] != kFormatVersion) {
    *err = fmt::format("plan file format version {} is not {}, the one this ratchet reads: make the plan again",
                       j.contains("version") ? j["version"].dump() : "(none)", kFormatVersion);
    return std::nullopt;
  }
  if (!j.contains("digest") || !j["digest"].is_string()) {
    *err = "the plan file has no digest: it was not written by `ratchet plan --out`";
    return std::nullopt;
  }
  const std::string want = j["digest"].get<std::string>(), got = digest_of(j);
  if (want != got) {
    *err = fmt::format("the plan file was edited after it was made: it says digest {} but its content hashes to {}",
                       want, got);
    return std::nullopt;
  }
  try {
    Plan p;
    Reader r{"plan", j};
    p.playbook_name = r.str("playbook");
    p.playbook_path = r.str("path");
    Reader pol{"policy", r.at("policy")};
    p.policy.strategy = pol.parsed("strategy", playbook::parse_strategy, playbook::kStrategies);
    p.policy.serial = count_from(pol.at("serial"));
    p.policy.max_fail = count_from(pol.at("max_fail"));
    Reader m{"made", r.at("made")};
    p.made.at = m.str("at");
    p.made.at_unix = m.num("at_unix");
    p.made.by = m.str("by");
    p.made.ratchet_version = m.str("ratchet_version");
    p.made.host_library_sha256 = m.str("host_library_sha256");
    Reader sel{"selection", r.at("selection")};
    p.selection.inventory = sel.str("inventory");
    p.selection.targets = sel.strs("targets");
    p.selection.limit = sel.strs("limit");
    for (const auto& e : sel.arr("extra_vars")) {
      Reader er{"selection extra_vars", e};
      p.selection.extra_vars.emplace_back(er.str("name"), er.str("value"));
    }
    p.selection.extra_secrets = sel.strs("extra_secrets");
    p.selection.ssh_config = sel.str("ssh_config");
    p.selection.known_hosts = sel.str("known_hosts");
    p.selection.accept_new = sel.flag("accept_new");
    p.selection.strategy = sel.str("strategy");
    p.selection.tags = sel.strs("tags");
    p.selection.skip_tags = sel.strs("skip_tags");
    p.selection.start_at = sel.str_or("start_at", "");
    p.selection.steps = sel.strs("steps");
    if (j.contains("not_selected"))
      for (const auto& u : r.arr("not_selected")) {
        Reader ur{"not_selected", u};
        p.not_selected.push_back({ur.str("step"), ur.str("reason")});
      }
    if (!p.selection.strategy.empty() && !playbook::parse_strategy(p.selection.strategy))
      throw std::runtime_error("selection: `strategy` must be \"linear\", \"free\" or \"\"");
    for (const auto& s : r.arr("sources")) {
      Reader sr{"sources", s};
      Source src;
      src.role = sr.str("role");
      src.name = sr.str_or("name", "");
      src.path = sr.str("path");
      src.sha256 = sr.at("sha256").is_null() ? "" : sr.str("sha256");
      p.sources.push_back(src);
    }
    if (p.sources.empty() || p.sources.front().role != "playbook")
      throw std::runtime_error("sources: the playbook must come first");
    const json& secrets = r.at("secrets");
    if (!secrets.is_object()) throw std::runtime_error("plan: `secrets` must be a table");
    for (auto it = secrets.begin(); it != secrets.end(); ++it) {
      if (!it.value().is_string()) throw std::runtime_error("plan: `secrets` values must be strings");
      p.secrets[it.key()] = it.value().get<std::string>();
    }
    for (const auto& hj : r.arr("hosts")) {
      Reader hr{"host", hj};
      HostPlan hp;
      hp.host.name = hr.str("host");
      hr.where = "host " + hp.host.name;
      hp.endpoint.address = hr.str("address");
      hp.endpoint.port = static_cast<int>(hr.num("port"));
      hp.endpoint.user = hr.str("user");
      hp.endpoint.jump = hr.str_or("jump", "");
      hp.endpoint.identity = hr.str_or("identity", "");
      hp.endpoint.proxy = hr.str_or("proxy_command", "");
      hp.endpoint.identities_only = hr.flag("identities_only");
      hp.endpoint.known_keys = hr.strs("known_keys");
      hp.vars = transcript::from_json(hr.at("vars"));
      for (const char* k : {"lock", "audit_log"})
        if (const json& g = hr.at(k); !g.is_string() && g != json(false))
          throw std::runtime_error(fmt::format("{}: `{}` must be a path or false", hr.where, k));
      hp.guards.lock = hr.at("lock").is_string();
      if (hp.guards.lock) hp.guards.lock_path = hr.str("lock");
      hp.guards.audit_log = hr.at("audit_log").is_string() ? hr.str("audit_log") : "";
      for (const auto& sj : hr.arr("steps")) hp.steps.push_back(step_from(sj, hr.where));
      p.hosts.push_back(std::move(hp));
    }
    if (j.contains("probe")) p.probe = findings_from(j["probe"]);
    // What runs is what the file shows: the plan decoded must write back as
    // exactly this document (no member it does not read, none read two ways,
    // no number cut to fit).
    json again = plan_json(p, true);
    if (again != j) {
      std::string at = "the document";
      for (auto it = j.begin(); it != j.end(); ++it)
        if (it.key() != "digest" && (!again.contains(it.key()) || again[it.key()] != it.value())) {
          at = "`" + it.key() + "`";
          break;
        }
      *err = fmt::format("the plan file holds what this ratchet would not write (at {}: a member it does not "
                         "read, one given two ways, or a value out of range): not a file `ratchet plan --out` wrote",
                         at);
      return std::nullopt;
    }
    return p;
  } catch (const std::exception& e) {
    *err = fmt::format("the plan file is malformed: {}", e.what());
    return std::nullopt;
  }
}

}  // namespace ratchet::plan
