# The run wrapper (wire.cc): `/bin/sh -c RUN /bin/sh RUN_ID COMMAND`.
# CMake joins its lines with a space into one line (comment lines dropped):
# every line ends a command (`;`, `&&`, `then`, `do`, `{`, ...), and no line
# holds a single quote, a backslash or a `#` comment after code, so the line
# travels single-quoted through any login shell (csh rejects a newline inside
# quotes). tests/transport/wire_test.cc checks all of that.
#
# The shell's own comm ("sh") has no space, so `read` splits /proc/self/stat
# (proc(5)) at spaces: field 5 is the process group, field 22 the start time.
read -r _ _ _ _ __rg _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ __rs _ 2>/dev/null </proc/self/stat &&
echo "[ratchet-pid $1] $$ $__rg $__rs" >&2;
# Every process the command starts carries the run id (held_output_query).
RATCHET_RUN_ID=$1;
export RATCHET_RUN_ID;
# The command runs in this same shell: same PID, no exec, nothing of ours left.
__rc=$2;
shift 2;
eval "unset __rg __rs __rc __c; $__rc"
