#!/bin/bash
# The demo: ratchet frees held GPUs on a throwaway real systemd host over SSH.
#
#   scripts/demo.sh
#
# 1. sets up (packages, build, lab rootfs: scripts/setup.sh);
# 2. boots a real systemd host (systemd-nspawn) on 127.0.0.1 with its own keys
#    on a free port;
# 3. stages there an "inference server" started by hand with nohup, whose
#    orphaned worker ignores SIGTERM and keeps ten stand-in device files open
#    (regular files for nvidia0..7, nvidiactl, nvidia-uvm under a temp dir),
#    plus an nvidia-persistenced that holds them by design;
# 4. prints the dry run, runs playbooks/gpu-release.toml with the device
#    variable pointed at the stand-ins, and prints `ratchet show`'s summary;
# 5. runs it again: nothing to kill, no rung fires;
# 6. stops the host (also on failure or Ctrl-C).
# Transcripts stay in transcripts/. Set DEMO_KEEP_HOST=1 to leave the host up.
# A host of your own for your own playbook: scripts/lab.sh start (README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

scripts/setup.sh
ratchet=$root/build/ratchet
lab=$root/scripts/lab.sh
host=$root/tests/lab/systemd-host.sh

# The host is scripts/lab.sh's (one inventory writer, one free-port rule), in a
# state directory of the demo's own so that a lab host of yours is left alone.
export RATCHET_LAB_DIR
RATCHET_LAB_DIR=$(mktemp -d /tmp/ratchet-demo.XXXXXX)
state=$RATCHET_LAB_DIR
cleanup() {
  if [ "${DEMO_KEEP_HOST:-0}" = 1 ]; then
    echo "demo: host left running: RATCHET_LAB_DIR=$state scripts/lab.sh ssh   (stop: RATCHET_LAB_DIR=$state scripts/lab.sh stop)"
  else
    "$lab" stop >/dev/null 2>&1 || "$host" stop "$state" >/dev/null 2>&1 || true
    rm -rf "$state"
  fi
}
trap cleanup EXIT

echo "== booting a real systemd host on 127.0.0.1 (scripts/lab.sh start --group gpu)"
"$lab" start --group gpu >/dev/null
inv=$("$lab" inventory)
echo "   root@127.0.0.1:$(cat "$state/port"), inventory $inv"
echo "== staging the hand-started inference server"
stage=$("$lab" ssh 'bash -s' < tests/lab/stage-inference.sh)
glob=$(sed -n 's/^DEVICE_GLOB=//p' <<<"$stage")
printf '%s\n' "$stage" | grep -E '^(DEVICE_GLOB|PID_FILE|SERVER_PID|CHILD_PID|WORKER_PID|KEEP_PID)='

args=(playbooks/gpu-release.toml -i "$inv" -e "devices=[\"$glob\"]")
echo
echo "== ratchet plan (dry run; connects to nothing)"
"$ratchet" plan "${args[@]}" | sed -n '1,40p'
echo "   ..."

echo
echo "== ratchet plan --probe (connects, sends only the checks, once: what each step would do now)"
"$ratchet" plan "${args[@]}" --probe || true

stamp=$(date -u +%Y%m%dT%H%M%SZ)
t1=transcripts/demo-$stamp-1.jsonl
t2=transcripts/demo-$stamp-2.jsonl
echo
echo "== ratchet run (first: the GPUs are held)"
"$ratchet" run "${args[@]}" --transcript "$t1"
echo
echo "== ratchet show $t1"
"$ratchet" show "$t1"
echo
echo "== production notes written on the host"
"$lab" ssh cat /root/production.md
echo
echo "== ratchet run (second: nothing left to kill, no rung fires)"
"$ratchet" run "${args[@]}" --transcript "$t2"
echo
echo "== demo done: transcripts $t1 and $t2"
echo "== next, your own playbook on a throwaway host like this one: scripts/lab.sh start --group gpu (see --help)"
