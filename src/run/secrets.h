#pragma once
// The run's secrets: their values from their sources, and the writer that masks them.
#include <optional>
#include <string>
#include <vector>

#include "playbook/model.h"
#include "transcript/writer.h"

namespace ratchet::run {

/// Secret values from their sources (env:NAME, file:PATH, -e with --secret) as
/// name → value. nullopt when a source is missing, with *err saying which
/// ("secret `token`: environment variable TOKEN is not set").
std::optional<playbook::Value> resolve_secrets(const playbook::Playbook& pb, std::string* err);

/// A warning line for each secret so short (under 4 bytes) that masking it hits everywhere.
std::vector<std::string> short_secret_warnings(const playbook::Value& secrets);

/// Registers every value of `secrets` and each of `extra` (every -e value a
/// --secret name was given, not only the last that won) with `w`.
void mask_secrets(transcript::Writer& w, const playbook::Value& secrets, const std::vector<std::string>& extra);

/// The names of `secrets` (run_start writes each "***").
std::vector<std::string> secret_names(const playbook::Value& secrets);

}  // namespace ratchet::run
