#include "plan/codec.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "plan/selection.h"
#include "transcript/value_json.h"
#include "util/hash.h"
#include "util/text.h"

namespace ratchet::plan {

using nlohmann::json;

namespace {

bool valid_utf8(const std::string& s) {
  try {
    (void)json(s).dump();
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

// Puts `s` at key (or key_b64 when it is not UTF-8, so every byte survives).
void put_bytes(json& j, const char* key, const std::string& s) {
  if (valid_utf8(s)) j[key] = s;
  else j[std::string(key) + "_b64"] = util::base64(s);
}

// A judge's expectation as the plan writes it: exit codes as an array, a regex
// as a string, a file's or a unit's state as a table; null when there is none.
json expect_json(const steps::Expect& e) {
  if (!e.exit_codes.empty()) return e.exit_codes;
  if (!e.stdout_matches.empty()) return e.stdout_matches;
  if (e.file) return {{"sha256", e.file->sha256}, {"mode", e.file->mode}, {"owner", e.file->owner}, {"group", e.file->group}};
  if (e.entry) {
    json j = {{"type", e.entry->type}, {"mode", e.entry->mode}, {"owner", e.entry->owner}, {"group", e.entry->group},
              {"sha256", e.entry->sha256}};
    put_bytes(j, "path", e.entry->path);
    return j;
  }
  if (e.gpus) {
    const auto& g = *e.gpus;
    json j = {{"gpus", g.gpus == std::vector<std::string>{"all"} ? json("all") : json(g.gpus)},
              {"max_memory_used_mib", g.max_memory_used_mib}};
    if (!g.user.empty()) j["user"] = g.user;
    if (!g.exclude.empty()) j["exclude"] = g.exclude;
    return j;
  }
  json j = json::object();
  if (e.state) j["state"] = *e.state;
  if (e.enabled) j["enabled"] = *e.enabled;
  if (e.file_sha256) j["file_sha256"] = *e.file_sha256;
  return j.empty() ? json() : j;
}

json command_json(const steps::Command& c, size_t rung) {
  json j = {{"rung", rung}, {"role", name(c.role)}, {"command", c.text}, {"timeout_ms", c.timeout.count()},
            {"judge", name(c.judge)}};
  if (json e = expect_json(c.expect); !e.is_null()) j["expect"] = e;
  if (c.judge == steps::Judge::matches && !c.expect.stdout_matches.empty()) j["stdout_matches"] = c.expect.stdout_matches;
  if (!c.stdin_data.empty()) {
    if (c.stdin_secret) j["stdin"] = "***";
    else put_bytes(j, "stdin", c.stdin_data);
  }
  if (c.stdin_file) {
    json f = {{"size", c.stdin_file->size}, {"sha256", c.stdin_file->sha256}};
    put_bytes(f, "path", c.stdin_file->path);
    j["stdin_file"] = f;
  }
  if (c.stdin_secret) j["stdin_secret"] = true;
  if (c.stdin_from_action) j["stdin_from_action"] = true;
  return j;
}

json step_json(const Step& p) {
  json cmds = json::array();
  json rungs = json::array();
  for (size_t k = 0; k < p.prepared.rungs.size(); ++k) {
    const auto& r = p.prepared.rungs[k];
    for (const auto& c : r.check) cmds.push_back(command_json(c, k));
    if (r.action) cmds.push_back(command_json(*r.action, k));
    for (const auto& c : r.more_actions) cmds.push_back(command_json(c, k));  // copy: in order, after the first
    for (const auto& c : r.after) {  // reboot: run on the new session once the host is back
      cmds.push_back(command_json(c, k));
      cmds.back()["after_reboot"] = true;
    }
    const RungFacts rf = k < p.rung_facts.size() ? p.rung_facts[k] : RungFacts{};
    json rj = {{"rung", k},
               {"kind", name(r.kind)},
               {"timeout_ms", rf.timeout.count()},
               {"settle_ms", r.settle.count()},
               {"retries", r.retries},
               {"delay_ms", r.delay.count()}};
    if (rf.wait) rj["wait_ms"] = rf.wait->count();
    if (r.always_act) rj["always_act"] = true;
    if (r.max_size > 0) rj["max_size"] = r.max_size;
    if (r.reboot_timeout.count() > 0) rj["reboot_timeout_ms"] = r.reboot_timeout.count();
    rungs.push_back(rj);
  }
  json s = {{"id", p.id},
            {"kind", name(p.kind)},
            {"name", p.name},
            {"source", p.source},
            {"timeout_ms", p.timeout.count()},
            {"on_failure", p.on_failure == playbook::OnFailure::cont ? "continue" : "stop"},
            {"capture_bytes", p.capture},
            {"rungs", rungs},
            {"commands", cmds},
            {"action_is_result", p.prepared.action_is_result},
            {"expect_exit", p.prepared.expect_exit}};
  if (!p.when.empty()) s["when"] = p.when;
  if (!p.register_as.empty()) s["register"] = p.register_as;
  // The sudo user the step runs as, or false: as the login user.
  s["become"] = p.become ? json(p.become_shown) : json(false);
  if (p.become) {
    s["become_user"] = p.become_user;
    s["sudo_argv"] = p.sudo_argv;
  }
  if (!p.runtime_refs.empty()) s["runtime"] = {{"placeholders", p.runtime_refs}};
  return s;
}

json count_json(const playbook::HostCount& c) {
  if (!c.set) return nullptr;
  if (c.percent) return fmt::format("{}%", c.value);
  return c.value;
}

}  // namespace

json host_json(const HostPlan& hp) {
  json steps = json::array();
  for (const auto& p : hp.steps) steps.push_back(step_json(p));
  json h = {{"host", hp.host.name}, {"address", hp.endpoint.address}, {"port", hp.endpoint.port},
            {"user", hp.endpoint.user}, {"known_keys", hp.endpoint.known_keys}, {"vars", transcript::to_json(hp.vars)},
            {"steps", steps}};
  if (!hp.endpoint.jump.empty()) h["jump"] = hp.endpoint.jump;
  if (!hp.endpoint.identity.empty()) h["identity"] = hp.endpoint.identity;
  if (!hp.endpoint.proxy.empty()) h["proxy_command"] = hp.endpoint.proxy;
  if (hp.endpoint.identities_only) h["identities_only"] = true;
  // The lock's path, or false: none taken (run --lock still takes one at the default path).
  h["lock"] = hp.guards.lock ? json(hp.guards.lock_path) : json(false);
  h["audit_log"] = hp.guards.audit_log.empty() ? json(false) : json(hp.guards.audit_log);
  return h;
}

json plan_json(const Plan& p, bool provenance) {
  json hosts = json::array();
  for (const auto& hp : p.hosts) hosts.push_back(host_json(hp));
  const Source* pb = p.sources.empty() ? nullptr : &p.sources.front();
  json j = {{"playbook", p.playbook_name},
            {"path", pb ? pb->path : p.playbook_path},
            {"sha256", pb ? pb->sha256 : ""},
            {"policy",
             {{"strategy", playbook::name(p.policy.strategy)}, {"serial", count_json(p.policy.serial)},
              {"max_fail", count_json(p.policy.max_fail)}}},
            {"hosts", hosts}};
  if (!p.not_selected.empty()) {  // what --tags, --skip-tags, --start-at, --step left out
    json left = json::array();
    for (const auto& u : p.not_selected) left.push_back({{"step", u.id}, {"reason", u.reason}});
    j["not_selected"] = left;
  }
  if (!provenance) return j;
  j["format"] = kFormat;
  j["version"] = kFormatVersion;
  j["made"] = {{"at", p.made.at}, {"at_unix", p.made.at_unix}, {"by", p.made.by},
               {"ratchet_version", p.made.ratchet_version}, {"host_library_sha256", p.made.host_library_sha256}};
  json extra = json::array();
  for (const auto& [k, v] : p.selection.extra_vars) extra.push_back({{"name", k}, {"value", v}});
  j["selection"] = {{"inventory", p.selection.inventory},   {"targets", p.selection.targets},
                    {"limit", p.selection.limit},           {"extra_vars", extra},
                    {"extra_secrets", p.selection.extra_secrets}, {"ssh_config", p.selection.ssh_config},
                    {"known_hosts", p.selection.known_hosts}, {"accept_new", p.selection.accept_new},
                    {"strategy", p.selection.strategy}};
  if (!p.selection.tags.empty()) j["selection"]["tags"] = p.selection.tags;
  if (!p.selection.skip_tags.empty()) j["selection"]["skip_tags"] = p.selection.skip_tags;
  if (!p.selection.start_at.empty()) j["selection"]["start_at"] = p.selection.start_at;
  if (!p.selection.steps.empty()) j["selection"]["steps"] = p.selection.steps;
  json sources = json::array();
  for (const auto& s : p.sources) {
    json sj = {{"role", s.role}, {"path", s.path}, {"sha256", s.sha256.empty() ? json(nullptr) : json(s.sha256)}};
    if (!s.name.empty()) sj["name"] = s.name;
    sources.push_back(sj);
  }
  j["sources"] = sources;
  j["secrets"] = p.secrets;
  if (p.probe) j["probe"] = findings_json(*p.probe);
  j["digest"] = digest_of(j);
  return j;
}

json step_selection_json(const Plan& p) {
  if (!selects_steps(p.selection)) return nullptr;
  json left = json::array();
  for (const auto& u : p.not_selected) left.push_back({{"step", u.id}, {"reason", u.reason}});
  return {{"tags", p.selection.tags}, {"skip_tags", p.selection.skip_tags}, {"start_at", p.selection.start_at},
          {"steps", p.selection.steps}, {"not_selected", left}};
}

std::string digest_of(const json& doc) {
  json copy = doc;
  if (copy.is_object()) copy.erase("digest");
  return util::sha256_hex(copy.dump(-1, ' ', false, json::error_handler_t::strict));
}

std::string encode_file(const Plan& p) { return plan_json(p, true).dump(2) + "\n"; }

bool looks_like_plan(const std::string& text) {
  size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string::npos || text[b] != '{') return false;
  json j = json::parse(text, nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains("format") && j["format"] == kFormat;
}

}  // namespace ratchet::plan
