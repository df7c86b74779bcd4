#include "playbook/guards.h"

#include <fmt/format.h>

namespace ratchet::playbook {

bool is_guard_key(std::string_view key) { return key == "lock" || key == "lock_path" || key == "audit_log"; }

// An absolute path of printable bytes: it goes into a shell word and a log line.
static std::string path_problem(std::string_view key, const std::string& p) {
  if (p.empty() || p[0] != '/') return fmt::format("`{}` must be an absolute path, not \"{}\"", key, p);
  for (unsigned char c : p)
    if (c < 0x20 || c == 0x7f) return fmt::format("`{}` holds a control character", key);
  if (p.size() > 1 && p.back() == '/') return fmt::format("`{}` must name a file, not end with `/`", key);
  return "";
}

std::string read_guard_key(std::string_view key, const Value& v, GuardKeys* out) {
  if (key == "lock") {
    if (!v.is_bool()) return "`lock` must be true or false";
    out->lock = v.as_bool();
    return "";
  }
  if (key == "lock_path") {
    if (!v.is_string()) return "`lock_path` must be a string (an absolute path)";
    if (std::string why = path_problem(key, v.as_string()); !why.empty()) return why;
    out->lock_path = v.as_string();
    return "";
  }
  if (key == "audit_log") {
    if (v.is_bool() && !v.as_bool()) {
      out->audit_log = "";
      return "";
    }
    if (!v.is_string()) return "`audit_log` must be an absolute path or false";
    if (std::string why = path_problem(key, v.as_string()); !why.empty()) return why;
    out->audit_log = v.as_string();
    return "";
  }
  return fmt::format("`{}` is not a lock or audit key", key);
}

Guards resolve_guards(const GuardKeys& playbook, const GuardKeys& host) {
  Guards g;
  for (const GuardKeys* k : {&playbook, &host}) {
    if (k->lock) g.lock = *k->lock;
    if (k->lock_path) g.lock_path = *k->lock_path;
    if (k->audit_log) g.audit_log = *k->audit_log;
  }
  return g;
}

}  // namespace ratchet::playbook
