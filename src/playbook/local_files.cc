#include "playbook/local_files.h"

#include <fmt/format.h>

#include <filesystem>

#include "playbook/doc.h"
#include "playbook/local_tree.h"
#include "util/hash.h"

namespace ratchet::playbook {

LocalFileKey local_file_key(const Action& a) {
  if (!a.kind) return {};
  if (const auto* w = std::get_if<WriteAction>(&a.keys); w && a.kind == Kind::write && w->template_file.given)
    return {&w->template_file, "template"};
  if (const auto* s = std::get_if<ServiceAction>(&a.keys); s && a.kind == Kind::service && s->unit_file.given)
    return {&s->unit_file, "unit_file"};
  if (const auto* c = std::get_if<CopyAction>(&a.keys); c && a.kind == Kind::copy && c->src.given)
    return {&c->src, "src"};
  return {};
}

const LocalFile* local_file_of(const Playbook& pb, const Action& a) {
  LocalFileKey k = local_file_key(a);
  if (!k.field || !k.field->value) return nullptr;
  auto it = pb.files.find(local_file_name(a));
  return it == pb.files.end() ? nullptr : &it->second;
}

std::string local_file_path(const Playbook& pb, const std::string& name) {
  std::filesystem::path p(name);
  return p.is_absolute() || pb.dir.empty() ? name : (std::filesystem::path(pb.dir) / p).lexically_normal().string();
}

std::string local_file_name(const Action& a) {
  LocalFileKey k = local_file_key(a);
  if (!k.field || !k.field->value) return "";
  if (const auto* c = std::get_if<CopyAction>(&a.keys); c && a.kind == Kind::copy)
    return tree_key(*c->src, {c->follow.value.value_or(false), c->exclude.value.value_or(std::vector<std::string>{})});
  return *k.field->value;
}

// A copy step's source: read as a tree (its `follow` and `exclude` literal too).
static void read_copy_source(Playbook* pb, const Action& a, const CopyAction& c, SourcePos at,
                             std::vector<LoadError>* errors) {
  for (const char* key : {"follow", "exclude"}) {
    const FieldBase& f = key[0] == 'f' ? static_cast<const FieldBase&>(c.follow) : c.exclude;
    if (f.templated()) {
      auto pos = a.pos.find(key);
      errors->push_back(make_error(pos == a.pos.end() ? a.where : pos->second,
                                   fmt::format("`{}` must be literal: the source is read once, when the playbook loads", key),
                                   "", pb->source));
      return;
    }
  }
  const std::string name = local_file_name(a);
  if (pb->files.contains(name)) return;
  LocalFile f;
  f.role = "src";
  std::error_code ec;  // absolute: a saved plan streams these paths from wherever apply runs
  f.path = std::filesystem::absolute(local_file_path(*pb, *c.src), ec).lexically_normal().string();
  while (f.path.size() > 1 && f.path.back() == '/') f.path.pop_back();
  std::string err;
  TreeOptions opt{c.follow.value.value_or(false), c.exclude.value.value_or(std::vector<std::string>{})};
  if (!read_tree(f.path, opt, &f.tree, &err)) {
    errors->push_back(make_error(at, fmt::format("cannot read copy source `{}`: {}", f.path, err), "", pb->source));
    return;
  }
  pb->files.emplace(name, std::move(f));
}

void read_local_files(Playbook* pb, std::vector<LoadError>* errors) {
  auto read_one = [&](const Action& a) {
    LocalFileKey k = local_file_key(a);
    if (!k.field) return;
    const std::string key = k.key;
    if (const auto* w = std::get_if<WriteAction>(&a.keys); w && w->content.given) return;  // both: the schema's error says enough
    if (!k.field->value && !k.field->templated()) return;  // refused by its rule: reported
    const std::string name = k.field->value ? *k.field->value : util::toml_text(*k.field->written);
    auto pos = a.pos.find(key);
    SourcePos at = pos == a.pos.end() ? a.where : pos->second;
    const char* what = key == "template" ? "template" : key == "src" ? "copy source" : "unit file";
    if (k.field->templated()) {
      errors->push_back(make_error(
          at, fmt::format("`{}` must be a literal path: the {} is read once, when the playbook loads", key, what),
          key == "template" ? "put the per-host part in the template's text: {{ host.name }} renders there"
          : key == "src"    ? "copy sends the same files to every host; for per-host text use a `write` step's template"
                            : "a unit file is sent as it is written: for per-host text, write it with a `write` step's template",
          pb->source));
      return;
    }
    if (const auto* c = std::get_if<CopyAction>(&a.keys); c && a.kind == Kind::copy)
      return read_copy_source(pb, a, *c, at, errors);
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
  for (const auto& s : pb->steps) {
    read_one(s.body);
    for (const auto& r : s.escalate) read_one(r);
  }
}

}  // namespace ratchet::playbook
