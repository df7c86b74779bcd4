#include "transcript/events.h"

#include <fmt/format.h>

#include <array>

#include "transcript/sign.h"

namespace ratchet::transcript::events {

namespace {

constexpr auto S = Type::string;
constexpr auto I = Type::integer;
constexpr auto B = Type::boolean;
constexpr auto A = Type::array;
constexpr auto O = Type::object;
constexpr auto req = Presence::required;
constexpr auto opt = Presence::optional;
constexpr auto v1 = Presence::schema1;

// docs/transcript.md says what each field holds and when an optional one is there.
constexpr Field kRunStartFields[] = {
    {"schema", I, req},           {"ratchet_version", S, req}, {"targets", A, req},
    {"run_id", S, opt},           {"argv", A, opt},            {"playbook", S, opt},
    {"playbook_path", S, opt},    {"playbook_sha256", S, opt}, {"playbook_source", S, opt},
    {"vars", O, opt},             {"policy", O, opt},          {"become_password", B, opt},
    {"exec", S, opt},             {"plan", O, opt},            {"host_library", O, v1},
    {"mode", S, opt},             {"run_by", S, opt},          {"selection", O, opt},
};
constexpr Field kHostLibraryFields[] = {{"sha256", S, req}, {"text", S, req}};
constexpr Field kBatchStartFields[] = {{"batch", I, req}, {"batches", I, req}, {"hosts", A, req}};
constexpr Field kConnectFields[] = {
    {"host", S, req},        {"address", S, req}, {"port", I, req}, {"user", S, req},
    {"fingerprint", S, req}, {"auth_method", S, req}, {"ms", I, req}, {"via", A, opt},
    {"after_reboot", B, opt}, {"retries", A, opt}, {"jump_reused", B, opt},
};
constexpr Field kUnreachableFields[] = {
    {"host", S, req}, {"cause", S, req}, {"message", S, req}, {"methods_tried", A, opt}, {"retries", A, opt}};
constexpr Field kRebootWaitFields[] = {
    {"host", S, req}, {"step", S, req}, {"attempt", I, req}, {"message", S, req}, {"cause", S, opt}};
constexpr Field kReconnectFields[] = {
    {"host", S, req}, {"step", S, req},         {"rung", I, req},  {"attempt", I, req}, {"ok", B, req},
    {"ms", I, req},   {"fingerprint", S, opt}, {"cause", S, opt}, {"message", S, opt},
};
constexpr Field kStepStartFields[] = {
    {"host", S, req}, {"step", S, req}, {"kind", S, req}, {"name", S, req}, {"source", S, opt}};
constexpr Field kCommandFields[] = {
    {"host", S, req},         {"step", S, req},       {"rung", I, req},          {"role", S, req},
    {"command", S, req},      {"sent", S, req},       {"timeout_ms", I, req},    {"stdin_bytes", I, opt},
    {"stdin_sha256", S, opt}, {"stdin", S, opt},      {"become_password", B, opt}, {"stdin_file", S, opt},
    {"stdin_file_sha256", S, opt},
};
constexpr Field kOutputFields[] = {
    {"host", S, req},     {"step", S, req},    {"rung", I, req},    {"stream", S, req}, {"bytes", I, req},
    {"data", S, opt},     {"data_b64", S, opt}, {"dropped", I, opt}, {"sha256", S, opt}, {"redacted", B, opt},
};
constexpr Field kExitFields[] = {
    {"host", S, req},  {"step", S, req},     {"rung", I, req},     {"ms", I, req},      {"timed_out", B, req},
    {"code", I, opt},  {"signal", S, opt},   {"error", S, opt},    {"pid", I, opt},     {"watchdog", S, opt},
    {"warning", S, opt}, {"login_output", S, opt},
};
constexpr Field kEvidenceFields[] = {
    {"host", S, req},           {"step", S, req},          {"rung", I, req},      {"role", S, opt},
    {"holders", A, opt},        {"signalled", A, opt},     {"holds", B, opt},     {"ok", B, opt},
    {"could_not_check", B, opt}, {"note", S, opt},         {"gpus", A, opt},      {"boot_id_before", S, opt},
    {"boot_id_after", S, opt},  {"back_ms", I, opt},       {"attempts", I, opt},      {"unkillable", A, opt},
    {"traced", A, opt},         {"frozen", A, opt},
};
constexpr Field kFetchFields[] = {
    {"host", S, req},  {"step", S, req},  {"rung", I, req},   {"remote", S, req}, {"ok", B, req},
    {"local", S, opt}, {"bytes", I, opt}, {"sha256", S, opt}, {"error", S, opt},
    {"remote_b64", S, opt}, {"local_b64", S, opt},
};
constexpr Field kStepEndFields[] = {
    {"host", S, req}, {"step", S, req},   {"status", S, req},    {"rung", I, req},
    {"ms", I, req},   {"reason", S, opt}, {"stopped_at", S, opt},
};
constexpr Field kHostEndFields[] = {
    {"host", S, req}, {"status", S, req},  {"counts", O, req},
    {"ms", I, req},   {"reason", S, opt},  {"stopped_at", S, opt},
};
constexpr Field kLockFields[] = {
    {"host", S, req}, {"action", S, req}, {"path", S, req},  {"ok", B, req},
    {"message", S, req}, {"holder", S, opt}, {"broke", S, opt},
};
constexpr Field kAuditFields[] = {
    {"host", S, req}, {"path", S, req}, {"line", S, req}, {"digest", S, req},
    {"ok", B, req},   {"command", S, req}, {"warning", S, opt},
};
constexpr Field kRunEndFields[] = {
    {"status", S, req}, {"exit_code", I, req}, {"hosts", O, req}, {"counts", O, opt}, {"ms", I, opt},
    {"host_digests", O, opt}};
constexpr Field kSignatureFields[] = {
    {"head", S, req}, {"namespace", S, req}, {"file", S, req}, {"key", S, opt}, {"error", S, opt}};
constexpr Field kCommonFields[] = {{"event", S, req}, {"t", S, req}, {"prev", S, opt}};

constexpr Event kEvents[] = {
    {kRunStart, "the run begins: what ran, with which playbook, vars and policy (always first)", kRunStartFields, ""},
    {kHostLibrary, "the text of the host library's shell functions, stored once for the run", kHostLibraryFields, ""},
    {kBatchStart, "a rolling batch of hosts begins (serial only)", kBatchStartFields, ""},
    {kConnect, "a session to a host is open: where, as whom, its host key", kConnectFields, ""},
    {kUnreachable, "a host could not be reached or logged into, and why", kUnreachableFields, ""},
    {kRebootWait, "a reboot step tried to reach its host again, which had not come back", kRebootWaitFields, ""},
    {kReconnect, "a session dropped during a step and ratchet tried to open it again", kReconnectFields, ""},
    {kStepStart, "a step begins on a host", kStepStartFields, ""},
    {kCommand, "a command is sent: as planned and as sent", kCommandFields, ""},
    {kOutput, "what a command wrote on one stream", kOutputFields, "data data_b64 redacted"},
    {kExit, "how a command ended: its exit status or signal, or why none came", kExitFields, "code signal error"},
    {kEvidence, "what a check found or an action selected, as the step judged it", kEvidenceFields, ""},
    {kFetch, "a fetch step downloaded one file of the host into the artifact directory, or why not", kFetchFields, ""},
    {kStepEnd, "a step ended on a host: its status and why", kStepEndFields, ""},
    {kLock, "the run's lock on a host was taken, refused, or released", kLockFields, ""},
    {kHostEnd, "a host is done: its status and step counts", kHostEndFields, ""},
    {kAudit, "the audit line appended on a host after its host_end, with that line's digest", kAuditFields, ""},
    {kRunEnd, "the run ended: its status and exit code (always last)", kRunEndFields, ""},
    {kSignature, "the run's final head was signed with the operator's SSH key (after run_end), or why not",
     kSignatureFields, "key error"},
};

bool has_type(const nlohmann::json& v, Type t) {
  switch (t) {
    case Type::string: return v.is_string();
    case Type::integer: return v.is_number_integer();
    case Type::boolean: return v.is_boolean();
    case Type::array: return v.is_array();
    case Type::object: return v.is_object();
  }
  return false;
}

const Field* field_in(std::span<const Field> fields, std::string_view name) {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace

std::span<const Event> all() { return kEvents; }

std::span<const Field> common() { return kCommonFields; }

const Event* find(std::string_view name) {
  for (const auto& e : kEvents)
    if (e.name == name) return &e;
  return nullptr;
}

std::string_view type_words(Type t) {
  switch (t) {
    case Type::string: return "a string";
    case Type::integer: return "an integer";
    case Type::boolean: return "true or false";
    case Type::array: return "an array";
    case Type::object: return "an object";
  }
  return "?";
}

std::string check_event(std::string_view name, const nlohmann::json& fields, Check mode) {
  const bool write = mode == Check::write;
  const Event* e = find(name);
  if (!e) return write ? fmt::format("unknown event `{}`", name) : "";
  if (!fields.is_object()) return fmt::format("event `{}`: its fields must be an object", name);
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    const std::string& key = it.key();
    if (key == "event") continue;  // the name itself, checked above
    if (const Field* c = field_in(kCommonFields, key)) {
      if (!has_type(*it, c->type))
        return fmt::format("event `{}`: field `{}` must be {}", name, key, type_words(c->type));
      continue;
    }
    const Field* f = field_in(e->fields, key);
    if (!f) {
      if (write) return fmt::format("event `{}`: unknown field `{}`", name, key);
      continue;  // a newer ratchet's field
    }
    if (write && f->presence == Presence::schema1)
      return fmt::format("event `{}`: field `{}` is schema 1's, not written since", name, key);
    if (!has_type(*it, f->type))
      return fmt::format("event `{}`: field `{}` must be {}", name, key, type_words(f->type));
  }
  if (!write) return "";  // older and foreign writers leave fields out
  for (const auto& f : e->fields)
    if (f.presence == Presence::required && !fields.contains(std::string(f.name)))
      return fmt::format("event `{}`: missing `{}`", name, f.name);
  if (!e->one_of.empty()) {
    std::string names;
    size_t from = 0;
    while (from < e->one_of.size()) {
      size_t sp = std::min(e->one_of.find(' ', from), e->one_of.size());
      std::string_view one = e->one_of.substr(from, sp - from);
      if (fields.contains(std::string(one))) return "";
      names += fmt::format("{}`{}`", names.empty() ? "" : ", ", one);
      from = sp + 1;
    }
    return fmt::format("event `{}`: needs one of {}", name, names);
  }
  return "";
}

}  // namespace ratchet::transcript::events
