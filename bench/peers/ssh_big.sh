#!/bin/bash
# Peer for W5: `ssh host cmd > /dev/null` with the OpenSSH client (a new connection),
# cmd printing BIG_BYTES bytes.   BIG_BYTES=N [KEX=...] ssh_big.sh
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
KEXOPT=(); [ -n "${KEX:-}" ] && KEXOPT=(-o "KexAlgorithms=$KEX")
set_step_cmd big 1
exec ssh -n -F "$SSH_CFG" "${KEXOPT[@]}" h1 "$STEP_CMD" > /dev/null
