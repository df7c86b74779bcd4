#!/bin/bash
# Runs run-on-gpu.sh's stand-in scene (RATCHET_GPU_FAKE=1: files instead of /dev/nvidia*,
# no CUDA) on a machine that is NOT throwaway, such as a developer's: inside a private
# mount namespace whose /etc and /run are overlays over a scratch directory, so the
# users the script creates (useradd) and /run/sshd never reach this machine. Needs root,
# tests/gpu/stage.sh first, and /usr/bin/python3 (PYTHON=... for another).
#
#   tests/gpu/local-standin.sh        # outputs in tests/gpu/.out/
set -euo pipefail
cd "$(dirname "$0")/../.."
d=$(mktemp -d /tmp/ratchet-gpu-ns.XXXXXX)
trap 'rm -rf "$d"' EXIT
unshare --mount --propagation private sh -c '
  d=$1; shift
  mkdir -p "$d/etc-upper" "$d/etc-work" "$d/run-upper" "$d/run-work"
  mount -n -t overlay ratchet-gpu-etc -o "lowerdir=/etc,upperdir=$d/etc-upper,workdir=$d/etc-work" /etc
  mount -n -t overlay ratchet-gpu-run -o "lowerdir=/run,upperdir=$d/run-upper,workdir=$d/run-work" /run 2>/dev/null ||
    mount -n -t tmpfs -o mode=755,size=16m ratchet-gpu-run /run
  exec "$@"' sh "$d" env RATCHET_GPU_FAKE=1 HOLDER_LIFETIME="${HOLDER_LIFETIME:-120}" tests/gpu/run-on-gpu.sh
