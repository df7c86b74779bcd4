#pragma once
// The plan as JSON (docs/plan.md): the `plan --json` document, and the plan
// file `plan --out` writes (that document plus provenance and its own digest).
// Of the headers of src/, this one, transcript/'s and playbook/json_schema.h
// (`ratchet schema`) expose nlohmann::json (tests/util/value_test.cc holds it).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "plan/findings.h"
#include "plan/plan.h"

namespace ratchet::plan {

/// The plan file's format name and version (docs/plan.md).
inline constexpr const char* kFormat = "ratchet-plan";
inline constexpr int kFormatVersion = 1;

/// One host's plan as JSON: {"host", "address", "port", "user", "jump"?,
/// "identity"?, "known_keys", "vars", "steps": [...]} (docs/plan.md).
nlohmann::json host_json(const HostPlan& hp);

/// The `plan --json` document: {"playbook", "path", "sha256", "policy", "hosts"};
/// with `provenance`, also "format", "version", "made", "selection", "sources",
/// "secrets" and "digest" (the plan file).
nlohmann::json plan_json(const Plan& p, bool provenance);

/// run_start's "selection" (docs/transcript.md): {"tags", "skip_tags", "start_at",
/// "steps", "not_selected": [{"step", "reason"}]}; null when p chose no steps.
nlohmann::json step_selection_json(const Plan& p);

/// One step's probe findings as JSON: {"id", "kind", "name", "verdict", "ms",
/// and what it found} (docs/plan.md#probe): `plan --probe --json` and the plan file.
nlohmann::json finding_json(const StepFinding& s);
/// A saved probe as JSON: {"at", "hosts": [{"host", "status", "reason"?,
/// "connected"?, "ms", "steps": [finding_json...]}]}: the plan file's "probe".
nlohmann::json findings_json(const Findings& f);
/// The inverse of findings_json; throws std::runtime_error naming the member
/// that is missing, of another type, or a name no verdict or kind has.
Findings findings_from(const nlohmann::json& j);

/// sha256 (hex) of `doc` without its "digest" member, dumped compactly with
/// sorted keys: what "digest" holds in a plan file.
std::string digest_of(const nlohmann::json& doc);

/// The plan file's text: plan_json(p, true), indented, with a final newline.
std::string encode_file(const Plan& p);

/// Parses a plan file's text. nullopt with *err saying what is wrong ("not a
/// ratchet plan file", "the plan was edited after it was made: its digest is
/// X but its content hashes to Y", a field that is missing or of the wrong type).
std::optional<Plan> decode_file(const std::string& text, std::string* err);

/// Whether `text` looks like a plan file (a JSON object with "format":
/// "ratchet-plan"), for a clear refusal where a playbook was expected.
bool looks_like_plan(const std::string& text);

}  // namespace ratchet::plan
