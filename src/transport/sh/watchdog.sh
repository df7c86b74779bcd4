# The host-side watchdog (wire.cc): `/bin/sh -c WATCHDOG ratchet PID PGID TICKS MS RUN_ID`.
# Joined into one line by CMake, as run.sh is (see there for the rules).
#
# m/g/s/k/n = PID, PGID, start ticks, ms left, run id; T/D = now/deadline in
# centiseconds. Before it detaches it checks what the marker line said (a
# login shell's rc file prints before the wrapper, and could forge one): PID
# and group above 1, not its own group or session, and, while the command
# runs, that PID has the run id in its argv, started at TICKS and leads group
# PGID (or is the child of the sudo that leads it). A refusal is one line on
# stderr and exit 3, which the client records. A command already gone:
# nothing to do.
set -f;
m=$1 g=$2 s=$3 k=$4 n=$5;
no() { echo "ratchet-watchdog: refused: $*" >&2; exit 3; };
case $n in *[!0-9a-f]*) no "run id $n is not one";; esac;
[ ${#n} = 16 ] || no "run id $n is not one";
if ! { [ "$m" -gt 1 ] 2>/dev/null && [ "$g" -gt 1 ] 2>/dev/null; }; then no "PID $m, group $g: PID 1 and group 1 are never signalled"; fi;
read -r _ _ _ _ wg ws _ </proc/self/stat;
if [ "$g" = "$wg" ] || [ "$g" = "$ws" ]; then no "group $g is the session of the watchdog itself"; fi;
# shellcheck disable=SC2086  # the stat fields, split at spaces on purpose
alive() { { read -r l <"/proc/$m/stat"; } 2>/dev/null || return 1; l=${l##*") "}; set -- $l; [ "$1" != Z ] && [ "${20}" = "$s" ]; };
alive || exit 0;
read -r l <"/proc/$m/stat";
l=${l##*") "};
# shellcheck disable=SC2086
set -- $l;
[ "$3" = "$g" ] || no "PID $m is not in group $g";
if [ "$m" != "$g" ]; then
  read -r c <"/proc/$g/comm";
  if [ "$2" != "$g" ] || [ "$c" != sudo ]; then no "group $g is not led by the command (PID $m) or its sudo"; fi;
fi;
grep -q -a -F -e "$n" "/proc/$m/cmdline" || no "PID $m is not the command of run $n";
# Detached: its channel closes at once. Polls every 0.2 s (clock: /proc/uptime,
# else tick counting); at the deadline TERM the group, 1 s later KILL it.
( ( exec </dev/null >/dev/null 2>&1;
trap "" TERM HUP INT PIPE;
T=0;
now() { if read -r u _ </proc/uptime; then T=$((${u%.*}*100+1${u#*.}-100)); else T=$((T+20)); fi; };
now;
D=$((T+(k+9)/10));
while alive; do
  [ $T -lt $D ] || { kill -TERM -"$g"; sleep 1; kill -KILL -"$g"; exit; };
  sleep 0.2 || sleep 1;
  now;
done ) & )
