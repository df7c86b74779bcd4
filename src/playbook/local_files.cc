#include "playbook/local_files.h"

#include <fmt/format.h>

#include <filesystem>

#include "playbook/doc.h"
#include "util/hash.h"

namespace ratchet::playbook {

std::vector<const char*> local_file_keys(Kind kind) {
  switch (kind) {
    case Kind::write: return {"template"};
    case Kind::service: return {"unit_file"};
    case Kind::run:
    case Kind::kill:
    case Kind::verify:
    case Kind::reboot: return {};
  }
  return {};
}

std::string local_file_path(const Playbook& pb, const std::string& name) {
  std::filesystem::path p(name);
  return p.is_absolute() || pb.dir.empty() ? name : (std::filesystem::path(pb.dir) / p).lexically_normal().string();
}

void read_local_files(Playbook* pb, std::vector<LoadError>* errors) {
  auto read_one = [&](const Action& a, const char* key) {
    if (!a.fields.contains(key) || !a.fields[key].is_string()) return;  // the schema reports a wrong type
    if (a.kind == Kind::write && a.fields.contains("content")) return;  // both: the schema's error says enough
    const std::string name = a.fields[key].get<std::string>();
    auto pos = a.pos.find(key);
    SourcePos at = pos == a.pos.end() ? a.where : pos->second;
    const char* what = std::string_view(key) == "template" ? "template" : "unit file";
    if (name.find("{{") != std::string::npos) {
      errors->push_back(make_error(
          at, fmt::format("`{}` must be a literal path: the {} is read once, when the playbook loads", key, what),
          "put the per-host part in the file's text ({{ host.name }} renders there)", pb->source));
      return;
    }
    if (pb->files.contains(name)) return;
    LocalFile f;
    f.role = key;
    f.path = local_file_path(*pb, name);
    std::string err;
    if (!read_text_file(f.path, &f.bytes, &err)) {
      errors->push_back(make_error(at, fmt::format("cannot read {} `{}`: {}", what, f.path, err), "", pb->source));
      return;
    }
    f.sha256 = util::sha256_hex(f.bytes);
    pb->files.emplace(name, std::move(f));
  };
  auto read_all = [&](const Action& a) {
    if (a.kind)  // none: the kind was missing or unknown, reported already
      for (const char* k : local_file_keys(*a.kind)) read_one(a, k);
  };
  for (const auto& s : pb->steps) {
    read_all(s.body);
    for (const auto& r : s.escalate) read_all(r);
  }
}

}  // namespace ratchet::playbook
