#!/bin/bash
# Peer "OpenSSH ControlMaster": per host one master connection (ssh -M -N -f), then each step
# as `ssh -S sock host cmd` (a new session channel on the open connection); steps sequential
# per host, hosts in parallel, one bash loop per host (no subshell per step); masters closed
# with `ssh -O exit` at the end. Master set-up and tear-down are inside the timed run.
#   cm.sh HOSTS STEPS MODE        MODE: true | echo (captured and checked)
#   KEX=curve25519-sha256 cm.sh ...   the masters negotiate that key exchange
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
H=$1 N=$2 MODE=$3
KEXOPT=(); [ -n "${KEX:-}" ] && KEXOPT=(-o "KexAlgorithms=$KEX")
CM_DIR=$(mktemp -d "$BENCH_TMP/cm.XXXXXX")
cleanup() {
  local s
  for s in "$CM_DIR"/*; do [ -S "$s" ] && ssh -F "$SSH_CFG" -S "$s" -O exit x 2>/dev/null & done
  wait; rm -rf "$CM_DIR"
}
trap cleanup EXIT
run_host() {
  local h=$1 i r s=$CM_DIR/$1
  ssh -n -F "$SSH_CFG" "${KEXOPT[@]}" -M -N -f -o ControlPersist=yes -S "$s" "$h" || return 1
  for ((i = 1; i <= N; i++)); do
    set_step_cmd "$MODE" "$i"
    case $MODE in
      true) ssh -n -F "$SSH_CFG" -S "$s" "$h" "$STEP_CMD" || return 1 ;;
      echo) r=$(ssh -n -F "$SSH_CFG" -S "$s" "$h" "$STEP_CMD") || return 1
            [ "$r" = "$i" ] || { echo "$h step $i: got '$r'" >&2; return 1; } ;;
      *) echo "cm.sh: mode $MODE" >&2; return 2 ;;
    esac
  done
}
pids=()
for ((j = 1; j <= H; j++)); do run_host "h$j" & pids+=($!); done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
exit $rc
