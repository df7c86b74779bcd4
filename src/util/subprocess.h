#pragma once
// Running a local program without a shell: argv in, stdin given, stdout and
// stderr captured (for OpenSSH's ssh-keygen and ssh-add: transcript/sign.h).
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace ratchet::util {

struct ProcessResult {
  int exit_code = -1;  ///< its exit status; -1 when it did not exit (see error)
  std::string out, err;  ///< what it wrote on stdout and stderr
  std::string error;     ///< "" when it ran and exited; else why not ("cannot run X: ...", "timed out after 30s")
};

/// write(2) that fails with EPIPE (-1) instead of raising SIGPIPE when the
/// reader is gone (blocks SIGPIPE in this thread and consumes the one it raised).
ssize_t write_nosigpipe(int fd, const char* data, size_t n);

/// Runs argv[0] (searched in PATH) with `argv`, no shell, the environment
/// inherited; writes `input` on its stdin and closes it. Waits at most
/// `timeout`, then kills it by its PID (SIGKILL) and sets `error`.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input,
                          std::chrono::milliseconds timeout);

}  // namespace ratchet::util
