# The run wrapper (wire.cc): `/bin/sh -c RUN /bin/sh RUN_ID COMMAND [MS WATCHDOG]`.
# CMake joins its lines with a space into one line (comment lines dropped):
# every line ends a command (`;`, `&&`, `then`, `do`, `{`, ...), and no line
# holds a single quote, a backslash or a `#` comment after code, so the line
# travels single-quoted through any login shell (csh rejects a newline inside
# quotes). tests/transport/wire_test.cc checks all of that.
#
# The shell's own comm ("sh") has no space, so `read` splits /proc/self/stat
# (proc(5)) at spaces: field 4 is the parent, 5 the process group, 6 the
# session, 22 the start time.
read -r _ _ _ __rp __rg __rd _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ __rs _ 2>/dev/null </proc/self/stat && {
# With MS (the channel path: wire.cc): the watchdog (the script WATCHDOG) runs
# on the host from the start, keyed by what this shell is (PID, group, start
# time, run id, its parent and session: the connection that started it), so
# that the deadline and the end of that connection (^C) need no second
# channel. Off the command's streams, with RATCHET_SELF and without the run
# id, started twice forked (a `wait` of the command never waits for it): one
# exec, no more. " watch" on the pid line says that it runs.
__rw=;
if [ -n "$3" ]; then
__rw=" watch";
( unset RATCHET_RUN_ID; RATCHET_SELF=1; export RATCHET_SELF; exec </dev/null >/dev/null 2>&1; /bin/sh -c "$4" ratchet "$$" "$__rg" "$__rs" "$3" "$1" "$__rp" "$__rd" & );
fi;
echo "[ratchet-pid $1] $$ $__rg $__rs$__rw" >&2;
};
# Every process the command starts carries the run id (held_output_query).
RATCHET_RUN_ID=$1;
export RATCHET_RUN_ID;
# The command runs in this same shell: same PID, no exec, nothing of ours left.
__rc=$2;
shift $#;
eval "unset __rp __rg __rd __rs __rw __rc __c; $__rc"
