// A probe's findings as JSON (codec.h): `plan --probe --json` and the plan
// file's "probe" member, written and read back by this one mapping.
#include <fmt/format.h>

#include <stdexcept>

#include "plan/codec.h"
#include "transcript/value_json.h"

namespace ratchet::plan {

using nlohmann::json;

namespace {

const json& member(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw std::runtime_error(fmt::format("{}: `{}` is missing", where, key));
  return j[key];
}
std::string str(const json& j, const char* key, const std::string& where, bool optional = false) {
  if (optional && !j.contains(key)) return "";
  const json& v = member(j, key, where);
  if (!v.is_string()) throw std::runtime_error(fmt::format("{}: `{}` must be a string", where, key));
  return v.get<std::string>();
}
long long num(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (!v.is_number_integer()) throw std::runtime_error(fmt::format("{}: `{}` must be an integer", where, key));
  return v.get<long long>();
}
bool flag(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) return false;
  if (!j[key].is_boolean()) throw std::runtime_error(fmt::format("{}: `{}` must be true or false", where, key));
  return j[key].get<bool>();
}
const json& list(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (!v.is_array()) throw std::runtime_error(fmt::format("{}: `{}` must be an array", where, key));
  return v;
}

StepFinding finding_from(const json& j, const std::string& host) {
  StepFinding s;
  s.id = str(j, "id", "probe " + host + " step");
  const std::string where = fmt::format("probe {} step {}", host, s.id);
  s.name = str(j, "name", where);
  auto kind = playbook::parse_kind(str(j, "kind", where));
  auto verdict = parse_probe_verdict(str(j, "verdict", where));
  if (!kind || !verdict) throw std::runtime_error(where + ": `kind` or `verdict` is not one ratchet writes");
  s.kind = *kind;
  s.verdict = *verdict;
  s.ms = num(j, "ms", where);
  s.reason = str(j, "reason", where, true);
  s.no_check = flag(j, "no_check", where);
  s.no_remedy = flag(j, "no_remedy", where);
  s.action = str(j, "action", where, true);
  s.rung = str(j, "rung", where, true);
  if (j.contains("depends_on"))
    for (const auto& d : list(j, "depends_on", where)) {
      if (!d.is_string()) throw std::runtime_error(where + ": `depends_on` must hold strings");
      s.depends_on.push_back(d.get<std::string>());
    }
  if (j.contains("holders"))
    for (const auto& h : list(j, "holders", where)) {
      auto x = steps::holder_from(transcript::from_json(h));
      if (!x) throw std::runtime_error(where + ": a holder is not one ratchet writes");
      s.holders.push_back(std::move(*x));
    }
  if (j.contains("state")) {
    const json& st = j["state"];
    if (!st.is_object()) throw std::runtime_error(where + ": `state` must be a table of strings");
    for (auto it = st.begin(); it != st.end(); ++it) {
      if (!it.value().is_string()) throw std::runtime_error(where + ": `state` must be a table of strings");
      s.state.emplace_back(it.key(), it.value().get<std::string>());
    }
  }
  s.would_create = flag(j, "would_create", where);
  s.diff = str(j, "diff", where, true);
  s.output = str(j, "output", where, true);
  return s;
}

}  // namespace

json finding_json(const StepFinding& s) {
  json j = {{"id", s.id}, {"kind", playbook::name(s.kind)}, {"name", s.name}, {"verdict", name(s.verdict)},
            {"ms", s.ms}};
  if (!s.reason.empty()) j["reason"] = s.reason;
  if (s.no_check) j["no_check"] = true;
  if (s.no_remedy) j["no_remedy"] = true;
  if (!s.action.empty()) j["action"] = s.action;
  if (!s.rung.empty()) j["rung"] = s.rung;
  if (!s.depends_on.empty()) j["depends_on"] = s.depends_on;
  if (!s.holders.empty()) j["holders"] = transcript::to_json(steps::to_value(s.holders));
  if (!s.state.empty()) {
    json st = json::object();
    for (const auto& [k, v] : s.state) st[k] = v;
    j["state"] = st;
  }
  if (s.would_create) j["would_create"] = true;
  if (!s.diff.empty()) j["diff"] = s.diff;
  if (!s.output.empty()) j["output"] = s.output;
  return j;
}

json findings_json(const Findings& f) {
  json hosts = json::array();
  for (const auto& h : f.hosts) {
    json steps = json::array();
    for (const auto& s : h.steps) steps.push_back(finding_json(s));
    json hj = {{"host", h.host}, {"status", h.status}, {"ms", h.ms}, {"steps", steps}};
    if (!h.reason.empty()) hj["reason"] = h.reason;
    if (!h.connected.empty()) hj["connected"] = h.connected;
    hosts.push_back(hj);
  }
  return {{"at", f.at}, {"hosts", hosts}};
}

Findings findings_from(const json& j) {
  Findings f;
  f.at = str(j, "at", "probe");
  for (const auto& hj : list(j, "hosts", "probe")) {
    HostFindings h;
    h.host = str(hj, "host", "probe host");
    const std::string where = "probe host " + h.host;
    h.status = str(hj, "status", where);
    h.ms = num(hj, "ms", where);
    h.reason = str(hj, "reason", where, true);
    h.connected = str(hj, "connected", where, true);
    for (const auto& sj : list(hj, "steps", where)) h.steps.push_back(finding_from(sj, h.host));
    f.hosts.push_back(std::move(h));
  }
  return f;
}

}  // namespace ratchet::plan
