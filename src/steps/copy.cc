// kind = "copy": the builder (commands from the source tree read at load) and
// the judge of its check. The host library's ratchet_copy_* (lib/ratchet_files.sh)
// refuse to write through a symlinked directory under `dest`.
#include "steps/copy.h"

#include <fmt/format.h>

#include <sstream>
#include <stdexcept>

#include "steps/kinds.h"
#include "util/hash.h"
#include "util/shell.h"

namespace ratchet::steps {

namespace {

using playbook::TreeEntry;

const char* type_name(TreeEntry::Type t) {
  switch (t) {
    case TreeEntry::Type::file: return "file";
    case TreeEntry::Type::dir: return "dir";
    case TreeEntry::Type::link: return "link";
  }
  return "?";
}

std::string first_line_of(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  if (l.rfind("ratchet: ", 0) == 0) l = l.substr(9);
  return short_line(l);
}

}  // namespace

void build_copy(const playbook::CopyAction& a, const BuildContext& ctx, Rung* out) {
  if (!ctx.tree || ctx.tree->empty()) throw std::logic_error("copy: the source was not read");
  std::string dest = *a.dest;
  while (dest.size() > 1 && dest.back() == '/') dest.pop_back();
  // A directory lands as `dest` itself, its entries below it; a lone file or
  // symlink lands at `dest`, its parent the root that nothing may escape.
  std::string root = dest, top;
  if (ctx.tree->front().type != TreeEntry::Type::dir) {
    size_t slash = dest.rfind('/');
    root = slash == 0 ? "/" : dest.substr(0, slash);
    top = dest.substr(slash + 1);
  }
  const std::string owner = a.owner.or_else(""), group = a.group.or_else("");
  const std::string qo = util::shell_quote(owner), qg = util::shell_quote(group), qroot = util::shell_quote(root);
  bool first = true;
  for (const auto& e : *ctx.tree) {
    const std::string rel = e.rel.empty() ? top : top.empty() ? e.rel : top + "/" + e.rel;
    const std::string qrel = util::shell_quote(rel);
    const std::string host_path = rel.empty() ? root : (root == "/" ? "" : root) + "/" + rel;
    std::string octal = fmt::format("{:04o}", e.mode), bare = fmt::format("{:o}", e.mode);
    if (e.type == TreeEntry::Type::file && a.mode.given) octal = (*a.mode).octal, bare = (*a.mode).bare();
    Expect x;
    x.entry = Expect::Entry{host_path, type_name(e.type), "", bare, owner, group};
    Command act;
    switch (e.type) {
      case TreeEntry::Type::dir:
        act = action_command(fmt::format("ratchet_copy_dir {} {} {} {} {}", qroot, qrel, octal, qo, qg), ctx.timeout);
        break;
      case TreeEntry::Type::file:
        x.entry->sha256 = e.sha256;
        act = action_command(fmt::format("ratchet_copy_file {} {} {} {} {} {}", qroot, qrel, e.sha256, octal, qo, qg),
                             ctx.timeout);
        act.stdin_file = LocalInput{e.path, e.size, e.sha256};
        break;
      case TreeEntry::Type::link:
        x.entry->sha256 = util::sha256_hex(e.link + "\n");  // as `readlink | sha256sum` prints it
        x.entry->mode = x.entry->owner = x.entry->group = "";
        act = action_command(fmt::format("ratchet_copy_link {} {} {}", qroot, qrel, util::shell_quote(e.link)),
                             ctx.timeout);
        break;
    }
    out->check.push_back(check_command(fmt::format("ratchet_copy_stat {} {}", qroot, qrel), ctx.timeout, Judge::copy, x));
    if (first) out->action = std::move(act);
    else out->more_actions.push_back(std::move(act));
    first = false;
  }
}

Verdict judge_copy(const Command& c, const transport::ExecResult& r) {
  Verdict v;
  auto cannot = [&](std::string why) {
    v.unknown = true;
    v.reason = "could not check: " + why;
    return v;
  };
  if (!c.expect.entry) return cannot("the check names no entry state to compare with (no `expect`)");
  const Expect::Entry& e = *c.expect.entry;
  if (r.exit_code != 0) {
    std::string why = first_line_of(r.err.data);
    if (why.rfind("could not check: ", 0) == 0) why = why.substr(17);
    return cannot(fmt::format("{}: {}", e.path, why.empty() ? fmt::format("exit {}", r.exit_code) : why));
  }
  std::istringstream in(r.out.data);
  std::string type, a1, a2, a3, a4;
  in >> type >> a1 >> a2 >> a3 >> a4;
  if (type == "escape") {
    v.reason = fmt::format("{}: {}", e.path, first_line_of(r.err.data));
    return v;
  }
  if (type == "absent") {
    v.reason = fmt::format("{}: absent", e.path);
    return v;
  }
  if (type != e.type) {
    v.reason = fmt::format("{}: is {}, not {}", e.path, type == "other" ? "neither a file, a directory nor a symlink" : "a " + type,
                           "a " + e.type);
    return v;
  }
  std::string sha, mode, owner, group;
  if (type == "file") sha = a1, mode = a2, owner = a3, group = a4;
  else if (type == "dir") mode = a1, owner = a2, group = a3;
  else sha = a1;
  std::vector<std::string> wrong;
  if (!e.sha256.empty() && sha != e.sha256) wrong.push_back(type == "link" ? "points elsewhere" : "content differs");
  if (!e.mode.empty() && mode != e.mode) wrong.push_back(fmt::format("mode is {}, not {}", mode, e.mode));
  if (!e.owner.empty() && owner != e.owner) wrong.push_back(fmt::format("owner is {}, not {}", owner, e.owner));
  if (!e.group.empty() && group != e.group) wrong.push_back(fmt::format("group is {}, not {}", group, e.group));
  v.holds = wrong.empty();
  for (size_t i = 0; i < wrong.size(); ++i) v.reason += (i ? "; " : e.path + ": ") + wrong[i];
  return v;
}

}  // namespace ratchet::steps
