#pragma once
// Test helper: a command's result as a transport returns it, for judge tests.
#include <string>

#include "transport/transport.h"

namespace ratchet::testing {

/// A result that exited with `code` and printed `out` and `err`.
inline transport::ExecResult exec_result(int code, const std::string& out = "", const std::string& err = "") {
  transport::ExecResult r;
  r.exit_code = code;
  r.out.data = out;
  r.err.data = err;
  return r;
}

}  // namespace ratchet::testing
