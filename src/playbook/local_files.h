#pragma once
// The local files steps read (write `template`, service `unit_file`): read once,
// at load, into Playbook::files, so that plan and run use the same bytes.
#include <vector>

#include "playbook/loader.h"
#include "playbook/model.h"

namespace ratchet::playbook {

/// The keys whose value names a local file for a step of kind `kind`
/// ("template" for write, "unit_file" for service; none for the others).
std::vector<const char*> local_file_keys(Kind kind);

/// Where the file named `name` in a step of `pb` is opened: `name` when
/// absolute, else relative to the playbook's directory.
std::string local_file_path(const Playbook& pb, const std::string& name);

/// Reads every file the steps and rungs of *pb name into pb->files. A name
/// holding a template, or a file that cannot be read, is an error at the
/// field's file:line:col (appended to *errors).
void read_local_files(Playbook* pb, std::vector<LoadError>* errors);

}  // namespace ratchet::playbook
