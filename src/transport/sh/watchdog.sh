# The host-side watchdog (wire.cc): `/bin/sh -c WATCHDOG ratchet PID PGID TICKS MS RUN_ID [PARENT SESSION]`.
# Joined into one line by CMake, as run.sh is (see there for the rules).
#
# m/g/s/k/n = PID, PGID, start ticks, ms left, run id; T/D = now/deadline in
# centiseconds. Before it detaches it checks what the marker line said: PID
# and group above 1, not its own group or session (the second channel's: the
# run wrapper's own runs in the command's group and session), and, while the command
# runs, that PID started at TICKS (what the pid line recorded: an `exec`
# keeps both, whatever the argv says now) and leads group PGID (or is the
# child of the sudo that leads it). A refusal is one line on stderr and exit
# 3, which the client records. A command already gone: nothing to do.
# At the deadline it signals the group and every process that carries
# RATCHET_RUN_ID=RUN_ID (the wrapper exports it: what the command started,
# also in a session of its own). PID 0 (the pid line never came): those alone, now.
# PARENT and SESSION (the run wrapper starts it so: run.sh) are the command's
# parent and session: the connection q is the parent of the session's leader
# (sshd's process of the SSH connection on a channel, the sudo's parent under
# become, ratchet itself locally), with its start ticks qt; when q is gone
# (ratchet exited: ^C, a lost client) it ends the command as at the deadline.
set -f;
m=$1 g=$2 s=$3 k=$4 n=$5 p=${6:-0} d=${7:-0};
no() { echo "ratchet-watchdog: refused: $*" >&2; exit 3; };
case $n in *[!0-9a-f]*) no "run id $n is not one";; esac;
[ ${#n} = 16 ] || no "run id $n is not one";
# shellcheck disable=SC2013  # one /proc/PID/environ path a line, no spaces
reap() { set +f; for f in $(grep -l -s -a -F -e "RATCHET_RUN_ID=$n" /proc/[0-9]*/environ); do f=${f#/proc/}; kill -"$1" "${f%/environ}" 2>/dev/null; done; set -f; };
if [ "$m" = 0 ]; then ( ( exec </dev/null >/dev/null 2>&1; trap "" TERM HUP INT PIPE; reap TERM; sleep 1; reap KILL ) & ); exit 0; fi;
if ! { [ "$m" -gt 1 ] 2>/dev/null && [ "$g" -gt 1 ] 2>/dev/null; }; then no "PID $m, group $g: PID 1 and group 1 are never signalled"; fi;
read -r _ _ _ _ wg ws _ </proc/self/stat;
if [ "$p" = 0 ] && { [ "$g" = "$wg" ] || [ "$g" = "$ws" ]; }; then no "group $g is the session of the watchdog itself"; fi;
# Whether PID $1 runs (not a zombie) and started at ticks $2.
# shellcheck disable=SC2086  # the stat fields, split at spaces on purpose
alive() { { read -r l <"/proc/$1/stat"; } 2>/dev/null || return 1; t=$2; l=${l##*") "}; set -- $l; [ "$1" != Z ] && [ "${20}" = "$t" ]; };
# Stop now (^C, the client's deadline) when the command already ended (a
# signal sshd delivered first): what it started and carries the run id still goes.
if ! alive "$m" "$s"; then [ "$k" = 0 ] && ( ( exec </dev/null >/dev/null 2>&1; trap "" TERM HUP INT PIPE; reap TERM; sleep 1; reap KILL ) & ); exit 0; fi;
read -r l <"/proc/$m/stat";
l=${l##*") "};
# shellcheck disable=SC2086
set -- $l;
[ "$3" = "$g" ] || no "PID $m is not in group $g";
if [ "$m" != "$g" ]; then
  read -r c <"/proc/$g/comm";
  if [ "$2" != "$g" ] || [ "$c" != sudo ]; then no "group $g is not led by the command (PID $m) or its sudo"; fi;
fi;
q=0 qt=0;
if [ "$p" -gt 1 ] 2>/dev/null; then
  if [ "$d" != "$m" ] && { read -r l <"/proc/$d/stat"; } 2>/dev/null; then
    l=${l##*") "};
    # shellcheck disable=SC2086
    set -- $l;
    p=$2;
  fi;
  if [ "$p" -gt 1 ] 2>/dev/null; then
    if { read -r l <"/proc/$p/stat"; } 2>/dev/null; then
      l=${l##*") "};
      # shellcheck disable=SC2086
      set -- $l;
      q=$p qt=${20};
    else
      k=0;
    fi;
  fi;
fi;
# Detached: its channel closes at once. Polls every 0.2 s (clock: /proc/uptime,
# else tick counting); at the deadline, or once the connection is gone, TERM
# the group, 1 s later KILL it (the group last: the run wrapper's watchdog is
# in it, and TERM it ignores).
( ( exec </dev/null >/dev/null 2>&1;
trap "" TERM HUP INT PIPE;
T=0;
now() { if read -r u _ </proc/uptime; then T=$((${u%.*}*100+1${u#*.}-100)); else T=$((T+20)); fi; };
now;
D=$((T+(k+9)/10));
while alive "$m" "$s"; do
  if [ $T -ge $D ] || ! { [ "$q" = 0 ] || alive "$q" "$qt"; }; then kill -TERM -"$g"; reap TERM; sleep 1; reap KILL; kill -KILL -"$g"; exit; fi;
  sleep 0.2 || sleep 1;
  now;
done ) & )
