// kind = "write": content streamed on stdin into a temp file in the target's
// directory, chmod/chown, then one `mv -f` (works with become, unlike SFTP on
// libssh 0.10). Check: content hash, mode and owner equal.
#include <fmt/format.h>

#include "steps/kinds.h"
#include "util/hash.h"
#include "util/rules.h"
#include "util/shell.h"

namespace ratchet::steps {

bool build_write(const Json& f, const BuildContext& ctx, Rung* out, std::string* err) {
  std::string path, mode, owner, group;
  bool backup = false;
  if (!field_string(f, "path", &path, err) || !field_string(f, "mode", &mode, err) ||
      !field_string(f, "owner", &owner, err) || !field_string(f, "group", &group, err) ||
      !field_bool(f, "backup", &backup, err))
    return false;
  if (path.empty() || path[0] != '/') {
    *err = fmt::format("write: `path` must be absolute, got \"{}\"", path);
    return false;
  }
  // The loader's rule (util/rules.h), again on a value a template filled in.
  if (f.contains("mode")) {
    if (std::string why = util::mode_problem(mode); !why.empty()) {
      *err = fmt::format("write: `mode` {}, got \"{}\"", why, mode);
      return false;
    }
  }
  std::string q = util::shell_quote(path);
  std::string m = mode;
  while (m.size() > 1 && m[0] == '0') m.erase(0, 1);
  out->check.push_back(check_command("ratchet_stat " + q, ctx.timeout, Judge::write,
                                     {{"sha256", util::sha256_hex(ctx.write_content)},
                                      {"mode", m},
                                      {"owner", owner},
                                      {"group", group}}));
  out->action = action_command(fmt::format("ratchet_write {} {} {} {} {}", q, util::shell_quote(mode),
                                           util::shell_quote(owner), util::shell_quote(group), backup ? 1 : 0),
                               ctx.timeout, ctx.write_content);
  return true;
}

}  // namespace ratchet::steps
