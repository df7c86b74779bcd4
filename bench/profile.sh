#!/bin/bash
# Where ratchet's time goes: per-command floors, host-side spawn cost of the deadline wrapper,
# machine-wide fork/exec counts, perf and callgrind profiles, and how cost grows with steps and
# hosts. Starts and stops its own loopback sshd hosts (as bench/run.sh does; run it when
# run.sh is not running). ~3 min on 2 cores. Output: $OUT/profile/ (see bench/profile/profile.py).
#
#   bench/profile.sh            (R=3 alternating repetitions for the scaling part)
set -euo pipefail
cd "$(dirname "$0")"
. ./lib.sh
[ "$(id -u)" -eq 0 ] || { echo "profile: run as root" >&2; exit 1; }
[ -x "$RATCHET" ] || { echo "profile: $RATCHET missing (run bench/run.sh or scripts/setup.sh first)" >&2; exit 1; }
command -v perf >/dev/null || echo "profile: perf not installed (apt-get install linux-perf); those parts are skipped"
K=${K:-10} A=${A:-50}; export K A QUICK=0
OUT=${OUT:-$BENCH_TMP/results}; export OUT
mkdir -p "$BENCH_TMP/bin" "$OUT"
cc -O2 -Wall -o "$BENCH_TMP/bin/channel_floor" profile/channel_floor.c -lssh
cleanup() {
  local s
  for s in "$BENCH_TMP"/cm.*/* "$BENCH_TMP/prof-cm.sock"; do [ -S "$s" ] && ssh -F /dev/null -S "$s" -O exit x 2>/dev/null; done
  ./hosts.sh stop
}
trap cleanup EXIT
trap 'exit 130' INT TERM
./hosts.sh start "$K" "$A"
/usr/bin/python3 profile/profile.py
