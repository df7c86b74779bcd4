#pragma once
// The local files steps read (write `template`, service `unit_file`): read once,
// at load, into Playbook::files, so that plan and run use the same bytes.
#include <vector>

#include "playbook/loader.h"
#include "playbook/model.h"

namespace ratchet::playbook {

/// The key of `a` that names a local file (write's `template`, service's
/// `unit_file`) with its name ("template", "unit_file"), or {nullptr, ""} when
/// `a` names none.
struct LocalFileKey {
  const Field<std::string>* field = nullptr;
  const char* key = "";
};
LocalFileKey local_file_key(const Action& a);

/// The file `a` names, read at load, or nullptr when it names none (or it was not read).
const LocalFile* local_file_of(const Playbook& pb, const Action& a);

/// The key of Playbook::files for the file `a` names ("" = none): the name as
/// written; for copy, with its follow and exclude (playbook/local_tree.h: tree_key).
std::string local_file_name(const Action& a);

/// Where the file named `name` in a step of `pb` is opened: `name` when
/// absolute, else relative to the playbook's directory.
std::string local_file_path(const Playbook& pb, const std::string& name);

/// Reads every file the steps and rungs of *pb name into pb->files. A name
/// holding a template, or a file that cannot be read, is an error at the
/// field's file:line:col (appended to *errors).
void read_local_files(Playbook* pb, std::vector<LoadError>* errors);

}  // namespace ratchet::playbook
