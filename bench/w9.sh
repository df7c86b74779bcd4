#!/bin/bash
# W9: the holder scan at scale (issue 14). A busy host: SIZES stand-in
# processes (default 100 500 2000) each holding F files (default 20) open,
# plus one that holds the target. At each size, medians of N runs of:
#   ratchet    ratchet_no_holders -- TARGET, the host library run with sh
#              (dash) directly: the scan every verify of `no_holders` pays
#   before     the same with the library file BEFORE=FILE (optional: a paired
#              before/after, the two alternating in every repetition)
#   tools      the same library with RATCHET_SCAN=tools: its POSIX-tools
#              gatherer (find, grep, awk) instead of the one perl process
#              (a host without perl); skipped with TOOLS=0
#   busybox    the library under BusyBox tools only (no find -printf), as
#              tests/steps/library_test.cc runs it (skipped without busybox)
#   fuser      fuser TARGET (psmisc)
#   raw walk   find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 -printf '%h %l\n'
# Every scan must find the holder (exit 1 for no_holders, 0 for fuser).
# DEVICE=1: the target is a character device node of number 1:7 (/dev/full's,
# harmless to open; mknod under the temp dir) instead of a file: the scan then
# stats every descriptor that is a device (the stand-ins' stdio: /dev/null).
# Prints a table; never a test. Run as root (it reads every process's fds).
#   bench/w9.sh
#   SIZES="100 500" N=3 BEFORE=/tmp/ratchet-before.sh bench/w9.sh
# The stand-ins are started here in a process group of their own and killed
# only by that group (kill -- -PGID), also on failure or ^C.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
SIZES=${SIZES:-100 500 2000}
F=${F:-20}
N=${N:-5}
LIB=${LIB:-$REPO_DIR/src/steps/lib/ratchet.sh}
BEFORE=${BEFORE:-}
[ "$(id -u)" -eq 0 ] || { echo "w9: run as root (the scan reads every process's fds)" >&2; exit 1; }
command -v fuser >/dev/null || { echo "w9: needs fuser (apt-get install psmisc)" >&2; exit 1; }
mkdir -p "$BENCH_TMP"
W=$(mktemp -d "$BENCH_TMP/w9.XXXXXX")
groups=()
cleanup() {
  local g
  for g in "${groups[@]}"; do kill -KILL -- "-$g" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for i in $(seq "$F"); do : > "$W/f$i"; done
if [ "${DEVICE:-0}" = 1 ]; then mknod "$W/target" c 1 7; else : > "$W/target"; fi
redirs=''
for i in $(seq "$F"); do redirs="$redirs $((i + 2))<$W/f$i"; done

# Starts COUNT more stand-ins in a new process group (its leader waits) and
# waits until they all run.
add_standins() { # COUNT
  setsid bash -c "for i in \$(seq $1); do sleep 3600 $redirs & done; wait" </dev/null >/dev/null 2>&1 &
  local leader=$! want have=0 tries=0
  disown "$leader"
  groups+=("$leader")
  want=$(( $1 + 1 ))
  while [ "$have" -lt "$want" ] && [ "$tries" -lt 600 ]; do
    have=$(pgrep -c -g "$leader" || true); tries=$((tries + 1)); sleep 0.1
  done
  [ "$have" -ge "$want" ] || { echo "w9: only $have of $want stand-ins started" >&2; exit 1; }
}

# One run of scan NAME: prints its wall time in ms; fails when it gives the wrong answer.
BUSY=''
if command -v busybox >/dev/null; then
  BUSY=$W/busybox-bin; mkdir -p "$BUSY"
  for t in sh find stat sleep awk sed grep tr cut readlink sort head tail wc cat date id mktemp rm rmdir xargs; do
    ln -s "$(command -v busybox)" "$BUSY/$t"
  done
fi
one() { # NAME
  local t0 t1 rc=0
  t0=$(date +%s%N)
  case "$1" in
    ratchet) sh -c ". '$LIB'; ratchet_no_holders -- '$W/target'" >/dev/null 2>&1 || rc=$? ;;
    tools)   RATCHET_SCAN=tools sh -c ". '$LIB'; ratchet_no_holders -- '$W/target'" >/dev/null 2>&1 || rc=$? ;;
    before)  sh -c ". '$BEFORE'; ratchet_no_holders -- '$W/target'" >/dev/null 2>&1 || rc=$? ;;
    busybox) PATH=$BUSY "$BUSY/sh" -c ". '$LIB'; ratchet_no_holders -- '$W/target'" >/dev/null 2>&1 || rc=$? ;;
    fuser)   fuser "$W/target" >/dev/null 2>&1 || rc=$? ;;
    raw)     find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 -printf '%h %l\n' >/dev/null 2>&1 || rc=$? ;;
  esac
  t1=$(date +%s%N)
  case "$1:$rc" in ratchet:1|tools:1|before:1|busybox:1|fuser:0|raw:*) ;; *) echo "w9: $1 gave exit $rc (the holder not found?)" >&2; exit 1 ;; esac
  echo $(( (t1 - t0) / 1000000 ))
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# the holder of the target
setsid bash -c "sleep 3600 3<$W/target & wait" </dev/null >/dev/null 2>&1 &
groups+=("$!"); disown "$!"
scans=(ratchet)
[ "${TOOLS:-1}" = 0 ] || scans+=(tools)
[ -z "$BEFORE" ] || scans+=(before)
[ -z "$BUSY" ] || scans+=(busybox)
scans+=(fuser raw)
have=0
printf '| processes | open fds | %s |\n' "$(printf '%s | ' "${scans[@]}" | sed 's/ | $//')"
printf '|---|---|%s\n' "$(printf -- '---|%.0s' "${scans[@]}")"
for size in $SIZES; do
  [ "$size" -gt "$have" ] && { add_standins $((size - have)); have=$size; }
  fds=$( { find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 2>/dev/null || true; } | wc -l)
  declare -A times=()
  one ratchet >/dev/null  # warm the caches
  for _ in $(seq "$N"); do
    for s in "${scans[@]}"; do times[$s]="${times[$s]:-} $(one "$s")"; done
  done
  procs=(/proc/[0-9]*)
  row="| ${#procs[@]} | $fds |"
  # shellcheck disable=SC2086  # the times, one a word
  for s in "${scans[@]}"; do row="$row $(printf '%s\n' ${times[$s]} | median) ms |"; done
  echo "$row"
  unset times
done
echo "(median of $N; processes and open fds: the whole host at that size, ratchet's own scan included)"
