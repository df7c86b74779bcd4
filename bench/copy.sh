#!/bin/bash
# copy's upload rate (issue 16): one MiB-sized random file of SIZE_MIB MiB
# (default 256) copied to a loopback sshd host (bench/hosts.sh, one instance)
# by a `copy` step, N times (the destination removed in between, so each run
# uploads); prints the upload command's MB/s (its exit event's ms, as the
# transcript records it) and the whole run's, medians of N. Then an unchanged
# run (`ok`: sha256 compared on the host, nothing sent). Prints figures; never a test.
#   bench/copy.sh                 SIZE_MIB=256 N=3
#   RATCHET=build/ratchet SIZE_MIB=1024 N=1 bench/copy.sh
# Stops only the sshd it starts.
set -euo pipefail
export BENCH_TMP=${BENCH_TMP:-/tmp/ratchet-bench-copy} BASE_PORT=${BASE_PORT:-23460}
. "$(dirname "$0")/lib.sh"
SIZE_MIB=${SIZE_MIB:-256}
N=${N:-3}
[ -x "$RATCHET" ] || { echo "copy bench: no ratchet at $RATCHET (build it: cmake --build build)" >&2; exit 2; }
mkdir -p "$BENCH_TMP"
W=$(mktemp -d "$BENCH_TMP/copy.XXXXXX")
cleanup() {
  "$BENCH_DIR/hosts.sh" stop >/dev/null 2>&1 || true
  rm -rf "$W"
}
trap cleanup EXIT
"$BENCH_DIR/hosts.sh" start 1 1 >/dev/null
mkdir -p "$W/src"
head -c $((SIZE_MIB << 20)) /dev/urandom > "$W/src/big.bin"
cat > "$W/copy.toml" <<TOML
name = "copy-bench"
[[step]]
id = "big"
kind = "copy"
src = "src"
dest = "$W/dest"
timeout = "10m"
TOML
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
upload_ms() { # TRANSCRIPT: the ms of the file's upload (the command whose stdin is the file)
  python3 - "$1" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
for i, e in enumerate(events):
    if e.get("event") == "command" and "stdin_file" in e:
        for f in events[i + 1:]:
            if f.get("event") == "exit" and f.get("step") == e["step"]:
                print(f["ms"]); break
PY
}
: > "$W/up"; : > "$W/wall"
for ((r = 1; r <= N; r++)); do
  rm -rf "$W/dest"
  t0=$(date +%s%N)
  "$RATCHET" run "$W/copy.toml" -i "$INVENTORY" --limit h1 -F none --transcript "$W/t$r.jsonl" > "$W/out" 2>&1 ||
    { cat "$W/out" >&2; exit 1; }
  t1=$(date +%s%N)
  cmp -s "$W/src/big.bin" "$W/dest/big.bin" || { echo "copy bench: the copy differs from its source" >&2; exit 1; }
  upload_ms "$W/t$r.jsonl" >> "$W/up"
  echo $(( (t1 - t0) / 1000000 )) >> "$W/wall"
done
up=$(median < "$W/up"); wall=$(median < "$W/wall")
rate() { awk -v b=$((SIZE_MIB << 20)) -v ms="$1" 'BEGIN { printf "%.0f", b / 1e6 / (ms / 1000) }'; }
t0=$(date +%s%N)
"$RATCHET" run "$W/copy.toml" -i "$INVENTORY" --limit h1 -F none --transcript "$W/ok.jsonl" > "$W/out" 2>&1
t1=$(date +%s%N)
status=$(python3 -c 'import json,sys; print([json.loads(l)["status"] for l in open(sys.argv[1]) if "\"step_end\"" in l][0])' "$W/ok.jsonl")
printf 'copy %d MiB to a loopback host: upload %s ms = %s MB/s; whole run (hash at load, check, upload, check) %s ms = %s MB/s; median of %d\n' \
  "$SIZE_MIB" "$up" "$(rate "$up")" "$wall" "$(rate "$wall")" "$N"
printf 'copy unchanged (%s): %d ms\n' "$status" $(( (t1 - t0) / 1000000 ))
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); ratchet $("$RATCHET" --version)"
