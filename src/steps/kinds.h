#pragma once
// One builder per step kind: the kind's resolved keys in, commands out
// (docs/playbook.md's "Kinds"). Pure: no I/O, no parsing and no checks; every
// value passed its rule (playbook/key_rules.h) when it was read.
#include <string>

#include "playbook/actions.h"
#include "playbook/model.h"
#include "steps/action.h"

namespace ratchet::steps {

/// What a builder needs besides the action's keys.
struct BuildContext {
  util::Millis timeout{60'000};  ///< the step's (or rung's) per-command timeout
  std::string unit_file_content;  ///< service: bytes of the local unit_file ("" = none)
  std::string write_content;      ///< write: rendered content or template
  const std::vector<playbook::TreeEntry>* tree = nullptr;  ///< copy: the source, read at load
};

/// Each builder fills `out` (check for rung 0, and the action) from keys whose
/// every given Field holds its value (steps::resolve); it throws
/// std::logic_error on a key still unrendered or a table the loader would refuse.
void build_run(const playbook::RunAction& a, const BuildContext& ctx, Rung* out);
void build_service(const playbook::ServiceAction& a, const BuildContext& ctx, Rung* out);
void build_kill(const playbook::KillAction& a, const BuildContext& ctx, Rung* out);
void build_verify(const playbook::VerifyAction& a, const BuildContext& ctx, Rung* out);
void build_write(const playbook::WriteAction& a, const BuildContext& ctx, Rung* out);
void build_copy(const playbook::CopyAction& a, const BuildContext& ctx, Rung* out);
void build_fetch(const playbook::FetchAction& a, const BuildContext& ctx, Rung* out);
void build_reboot(const playbook::RebootAction& a, const BuildContext& ctx, Rung* out);

/// Dispatches on the keys' kind to its builder and sets out->kind.
void build_rung(const playbook::ActionKeys& keys, const BuildContext& ctx, Rung* out);

/// A check command judged by `judge` against `expect`.
Command check_command(std::string text, util::Millis timeout, Judge judge, Expect expect = {});

/// An action command that succeeds on exit 0, with `input` on stdin.
Command action_command(std::string text, util::Millis timeout, std::string input = "");

/// The library flags of kill's and verify's `user`, `exclude` and `missing_ok`
/// (" --user a,b --exclude c --missing-ok"; "" when none is given).
std::string filter_flags(const playbook::Field<std::vector<std::string>>& user,
                         const playbook::Field<std::vector<std::string>>& exclude,
                         const playbook::Field<bool>& missing_ok);

}  // namespace ratchet::steps
