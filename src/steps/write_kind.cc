// kind = "write": content streamed on stdin into a temp file in the target's
// directory, chmod/chown, then one `mv -f` (works with become, unlike SFTP on
// libssh 0.10). Check: content hash, mode and owner equal.
#include <fmt/format.h>

#include "steps/kinds.h"
#include "util/hash.h"
#include "util/shell.h"

namespace ratchet::steps {

void build_write(const playbook::WriteAction& a, const BuildContext& ctx, Rung* out) {
  const std::string q = util::shell_quote(*a.path);
  const playbook::FileMode mode = a.mode.or_else({});
  const std::string owner = a.owner.or_else(""), group = a.group.or_else("");
  Expect e;
  e.file = Expect::File{util::sha256_hex(ctx.write_content), mode.octal.empty() ? "" : mode.bare(), owner, group};
  out->check.push_back(check_command("ratchet_stat " + q, ctx.timeout, Judge::write, e));
  out->action = action_command(fmt::format("ratchet_write {} {} {} {} {}", q, util::shell_quote(mode.octal),
                                           util::shell_quote(owner), util::shell_quote(group),
                                           a.backup.or_else(false) ? 1 : 0),
                               ctx.timeout, ctx.write_content);
}

}  // namespace ratchet::steps
