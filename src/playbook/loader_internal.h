#pragma once
// Pieces of the loader shared between its .cc files. Internal to the module.
#include <optional>
#include <string>
#include <vector>

#include "playbook/doc.h"
#include "playbook/loader.h"
#include "playbook/model.h"

namespace ratchet::playbook {

/// The playbook's [defaults]; they apply to included steps too.
struct StepDefaults {
  std::optional<util::Millis> timeout, settle, delay;
  std::optional<int> retries;
  std::optional<size_t> capture;
  std::optional<bool> become;
  std::optional<std::string> become_user;
};

/// A var an include brought: its included file's [vars] (a default) or the
/// include entry's `vars`.
struct IncludeVar {
  std::string name;
  Value value;
  SourcePos pos;
  bool is_default = false;  ///< from the included file's [vars]
};

/// What reading includes gathers beside the steps (include.cc).
struct IncludeState {
  std::string main_dir;                 ///< the playbook's directory: local file names are made relative to it
  std::vector<IncludedFile> files;      ///< every file read, in order
  std::vector<IncludeVar> vars;         ///< in the order found
  std::vector<std::string> chain;       ///< files being read (as opened), the playbook first
  std::vector<std::string> chain_real; ///< the same, canonical (cycle check)
  std::vector<SourcePos> sites;         ///< include entries being read, outermost first
};

/// Reads [defaults] and the [[step]] array of `doc` into steps: kinds, keys and
/// types checked, defaults applied, ids derived and unique, includes read in
/// place (into *inc). Errors are appended.
std::vector<Step> read_steps(const Doc& doc, std::vector<LoadError>* errors, IncludeState* inc);

/// The [[step]] array of `doc` (the playbook, or an included file when
/// inc->sites is not empty) with `def` applied. Errors are appended.
std::vector<Step> read_step_list(const Doc& doc, const StepDefaults& def, IncludeState* inc,
                                 std::vector<LoadError>* errors);

/// The [[step]] entry at `path` of `doc` that holds `include`: the included
/// file's steps, ids prefixed with the entry's id and their references to
/// each other rewritten (docs/playbook.md, "Include"). Errors are appended.
std::vector<Step> read_include(const Doc& doc, const DocPath& path, const StepDefaults& def,
                               IncludeState* inc, std::vector<LoadError>* errors);

/// Puts the vars includes brought into pb->vars: an included file's [vars]
/// only where the playbook sets none; an include's `vars` must agree with the
/// playbook's [vars] and other includes (else an error at it).
void apply_include_vars(const IncludeState& inc, Playbook* pb, std::vector<LoadError>* errors);

/// errors[from..] at a file an include read: the source line from that file,
/// and "(included from FILE:LINE:COL)" for the entries that read it.
void note_include_sites(const Playbook& pb, std::vector<LoadError>* errors, size_t from);

/// Reads the inventory table at `at` of `doc` (root for an inventory file,
/// "/inventory" in a playbook). Returns nullopt when it had errors (appended).
std::optional<Inventory> read_inventory(const Doc& doc, const DocPath& at,
                                        std::vector<LoadError>* errors);

/// Load-time checks of every template in every step field: syntax, templates
/// inside quotes in shell fields, secrets outside `stdin`/`content`.
void check_step_templates(const Playbook& pb, std::vector<LoadError>* errors);

}  // namespace ratchet::playbook
