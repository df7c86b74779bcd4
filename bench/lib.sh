# Settings shared by the bench scripts. Sourced, not run.
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$BENCH_DIR/.." && pwd)
BENCH_TMP=${BENCH_TMP:-/tmp/ratchet-bench}
case "$BENCH_TMP" in /tmp/ratchet-bench*) ;; *) echo "BENCH_TMP must be /tmp/ratchet-bench*" >&2; exit 2 ;; esac
BASE_PORT=${BASE_PORT:-23300}         # sshd instance i listens on BASE_PORT+i (i = 1..K); probe on BASE_PORT+K+1
SSH_CFG=$BENCH_TMP/ssh_config         # Host h1..hA -> 127.0.0.1, port BASE_PORT + ((j-1) % K) + 1
KNOWN_HOSTS=$BENCH_TMP/known_hosts
CLIENT_KEY=$BENCH_TMP/client_ed25519
INVENTORY=$BENCH_TMP/inventory.toml   # the same aliases for ratchet
RATCHET=${RATCHET:-$REPO_DIR/build/ratchet}
export BENCH_DIR REPO_DIR BENCH_TMP BASE_PORT SSH_CFG KNOWN_HOSTS CLIENT_KEY INVENTORY RATCHET

# The step command of workload MODE, step I, into STEP_CMD (no subshell: shell-out peers
# call it once per step inside the timed run). big: BIG_BYTES bytes of 100-byte text lines.
set_step_cmd() { # MODE I
  case "$1" in
    true) STEP_CMD=true ;;
    echo) STEP_CMD="echo $2" ;;
    big)  STEP_CMD="yes 012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678 | head -c ${BIG_BYTES:?}" ;;
    *) echo "unknown mode $1" >&2; return 2 ;;
  esac
}
