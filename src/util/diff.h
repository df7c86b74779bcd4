#pragma once
// A unified diff of two texts, line by line (diff -u's format), for a
// probe's "this file would change like this".
#include <cstddef>
#include <functional>
#include <string>

namespace ratchet::util {

/// The hunks (with `context` lines around each change) that turn `before`
/// into `after`, headed "--- from_name" / "+++ to_name"; "" when they are
/// equal. Texts of more than `max_lines` lines are not compared: one line says so.
std::string unified_diff(const std::string& before, const std::string& after, const std::string& from_name,
                         const std::string& to_name, size_t context = 3, size_t max_lines = 2000);

/// Whether a line (without its newline) holds a secret.
using SecretLine = std::function<bool(const std::string& line)>;

/// unified_diff, with the lines that may hold a secret shown as "***": each
/// line of `after` that `secret` holds, and on the `before` side each line
/// `secret` holds and each removed line at the same place as one of those of
/// `after` (the same line number; the line it replaces in one change: the
/// n-th of as many removed lines as added, else every removed line of it; or
/// the same key: the text before a first `=` or `:`, as `password=` or
/// `token:`; or, when `after` holds a secret, a removed line whose key names a
/// credential: pass, pwd, secret, token, key, cred, auth, private, cookie,
/// session, in any case: a moved or renamed one), whose old value nobody knows to be a secret. Changes are found on the real lines: a
/// changed secret shows as "-***" and "+***", an unchanged one as " ***".
std::string unified_diff_masked(const std::string& before, const std::string& after, const std::string& from_name,
                                const std::string& to_name, const SecretLine& secret, size_t context = 3,
                                size_t max_lines = 2000);

}  // namespace ratchet::util
