#include "playbook/when.h"

#include <fmt/format.h>

namespace ratchet::playbook {

bool eval_when(const std::string& when, const Value& scope, bool* out, std::string* err) {
  std::string name = when;
  bool negate = false;
  if (name.rfind("not ", 0) == 0) {
    negate = true;
    name = name.substr(4);
  }
  while (!name.empty() && name.front() == ' ') name.erase(0, 1);
  if (!scope.contains(name)) {
    *err = fmt::format("`when`: undefined variable `{}`", name);
    return false;
  }
  const Value& v = scope[name];
  if (!v.is_bool()) {
    *err = fmt::format("`when`: `{}` must be true or false, got {}", name, util::toml_text(v));
    return false;
  }
  *out = v.as_bool() != negate;
  return true;
}

}  // namespace ratchet::playbook
