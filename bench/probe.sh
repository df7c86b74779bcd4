#!/bin/bash
# The probe's speed (issue 13): `plan --probe` of a hand-over-shaped runbook
# (kill by a stand-in PID file, a holder scan of stand-in device files, a
# write with a diff, a busy port, a command verify) on 1 host and on 50
# (aliases over K loopback sshd instances, bench/hosts.sh), --forks 25;
# medians of N runs, wall time as `plan --probe` measures it and as the
# shell does. Prints figures; never a test.
#   bench/probe.sh            K=5 instances, N=5 runs
#   RATCHET=build/ratchet K=5 N=3 bench/probe.sh
# Kills only the stand-in holder it starts (by PID) and stops only its sshds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
K=${K:-5}
N=${N:-5}
[ -x "$RATCHET" ] || { echo "probe bench: no ratchet at $RATCHET (build it: cmake --build build)" >&2; exit 2; }
mkdir -p "$BENCH_TMP"
W=$(mktemp -d "$BENCH_TMP/probe.XXXXXX")
holder=
cleanup() {
  [ -z "$holder" ] || kill "$holder" 2>/dev/null || true
  "$BENCH_DIR/hosts.sh" stop >/dev/null 2>&1 || true
}
trap cleanup EXIT
"$BENCH_DIR/hosts.sh" start "$K" 50 >/dev/null
mkdir -p "$W/dev"
for i in 0 1 2 3 4 5 6 7; do : > "$W/dev/gpu$i"; done
# one stand-in holder of every device (started here, killed here by PID)
sh -c 'exec 3<"$1/dev/gpu0" 4<"$1/dev/gpu1" 5<"$1/dev/gpu7"; exec sleep 600' sh "$W" &
holder=$!
echo "$holder" > "$W/server.pid"
printf 'line one\nold line\n' > "$W/notes.md"
cat > "$W/probe.toml" <<TOML
name = "probe-bench"
[[step]]
id = "kill_server"
kind = "kill"
pid_file = "$W/server.pid"
[[step]]
id = "gpus_free"
kind = "verify"
no_holders = ["$W/dev/gpu*"]
  [[step.escalate]]
  kind = "kill"
  holders_of = ["$W/dev/gpu*"]
[[step]]
id = "notes"
kind = "write"
path = "$W/notes.md"
content = "line one\nnew line\n"
[[step]]
id = "port"
kind = "verify"
port_free = [$((BASE_PORT + 1))]
[[step]]
id = "version"
kind = "verify"
command = "uname -r"
TOML
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
for sel in w1 w4; do
  hosts=$([ "$sel" = w1 ] && echo 1 || echo 50)
  : > "$W/ms.$sel"; : > "$W/wall.$sel"
  for ((r = 1; r <= N; r++)); do
    t0=$(date +%s%N)
    "$RATCHET" plan "$W/probe.toml" --probe -i "$INVENTORY" --limit "$sel" -F none --forks 25 --json > "$W/out.json" || true
    t1=$(date +%s%N)
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["ms"])' "$W/out.json" >> "$W/ms.$sel"
    echo $(( (t1 - t0) / 1000000 )) >> "$W/wall.$sel"
  done
  verdicts=$(python3 -c 'import json,sys,collections; d=json.load(open(sys.argv[1])); print(dict(collections.Counter(s["verdict"] for h in d["hosts"] for s in h["steps"])), "exit", d["exit_code"])' "$W/out.json")
  printf 'probe %2d host(s), forks 25, %d sshd: median %s ms (its own ms), %s ms wall; last: %s\n' \
    "$hosts" "$K" "$(median < "$W/ms.$sel")" "$(median < "$W/wall.$sel")" "$verdicts"
done
kill "$holder" 2>/dev/null || true
holder=
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); ratchet $("$RATCHET" --version)"
