// A stand-in debugger: `tracer PID` attaches to PID with ptrace
// (PTRACE_ATTACH: the kernel sends it SIGSTOP), waits for that stop, then
// sleeps until it is killed, never resuming its tracee. The tracee stays in
// tracing stop (state t) while this process lives: CONT does not resume it, a
// TERM stays pending; KILL still ends it. When the tracer ends, the kernel
// detaches the tracee. Exit 2: bad usage, 3: the attach was refused, 4: no stop.
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const pid_t pid = static_cast<pid_t>(atol(argv[1]));
  if (pid <= 0) return 2;
  if (ptrace(PTRACE_ATTACH, pid, nullptr, nullptr) != 0) return 3;
  int status = 0;
  if (waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status)) return 4;
  for (;;) pause();
}
