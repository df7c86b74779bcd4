#!/bin/bash
# ratchet side by side with the peers, on loopback sshd hosts this script starts and stops.
#
#   bench/run.sh                 full run (~12-15 min on 2 cores): W1..W6, N=5 repetitions
#   QUICK=1 bench/run.sh         smoke test (~1-2 min): tiny sizes, one repetition, W1..W5, W8
#                                (QUICK=1 ONLY="W1 W2 W3 W4 W5 W6" adds the systemd host, ~1 min more)
#
# 1. installs what is missing from Debian's packages (time-boxed): openssh-client/-server,
#    python3-fabric, ansible-core, time; builds build/ratchet with scripts/setup.sh if it is
#    missing (RATCHET=PATH to use another binary);
# 2. starts K=10 sshd instances on 127.0.0.1:BASE_PORT+1.. (default 23301..) with 50 aliases,
#    through tests/lab/sshd-host.sh (raised MaxStartups/MaxSessions; root with an empty HOME,
#    so the remote shell's start-up costs nothing), plus a probe instance that logs which key
#    exchange each tool negotiates;
# 3. runs bench/bench.py: W1..W5 (and W8: A8 hosts, default 200, x 1 step, against Fabric) with ratchet, an OpenSSH ControlMaster loop (default key
#    exchange and curve25519-sha256), Fabric (one connection per host) and ansible-playbook
#    (pipelining, forks = hosts, no facts), alternating the tools in every repetition;
#    W6 = playbooks/gpu-release.toml on a systemd lab host (tests/lab/systemd-host.sh) with
#    stand-in devices (tests/lab/stage-inference.sh);
# 4. prints the table (median, min-max, ratchet/peer, peak RSS) and writes
#    $OUT/table.md and $OUT/results.json (default OUT=/tmp/ratchet-bench/results);
# 5. stops every host it started, also on failure or Ctrl-C.
#
# Paired before/after (one sitting, the two binaries alternating in every repetition):
#   RATCHET=new/ratchet RATCHET_BEFORE=old/ratchet RATCHET_ONLY=1 ONLY="W1 W2 W3 W4 W5" bench/run.sh
# Knobs: N, N_SLOW, N_HEAVY, N_W4, N_W6 (repetitions), ONLY="W1 W3" (workloads), ANSIBLE=0,
# BASE_PORT, OUT, BENCH_TMP (/tmp/ratchet-bench*), INSTALL=0 (install nothing).
set -euo pipefail
cd "$(dirname "$0")"
. ./lib.sh
QUICK=${QUICK:-0}
export QUICK

install_missing() {
  local pkgs=(openssh-client openssh-server python3-fabric ansible-core time procps) missing=() p
  [ "${RATCHET_ONLY:-0}" = 1 ] && pkgs=(openssh-client openssh-server time procps)  # no peers to run
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "${INSTALL:-1}" = 1 ] || { echo "bench: missing ${missing[*]} (INSTALL=0)" >&2; exit 1; }
  echo "bench: installing ${missing[*]}"
  local SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  timeout 300 $SUDO apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive timeout 600 $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install_missing
if [ ! -x "$RATCHET" ]; then
  echo "bench: $RATCHET missing; building it (scripts/setup.sh)"
  SETUP_NO_LAB=1 "$REPO_DIR/scripts/setup.sh"
fi
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root (the lab hosts need a mount namespace)" >&2; exit 1; }

if [ "$QUICK" = 1 ]; then K=${K:-3} A=${A:-5}; else K=${K:-10} A=${A:-50}; fi
export K A
OUT=${OUT:-$BENCH_TMP/results}; export OUT
case "$OUT" in "$BENCH_TMP"/*) rm -rf "$OUT" ;; esac   # a results dir elsewhere is never removed
rm -rf "$BENCH_TMP/transcripts" "$BENCH_TMP/playbooks" "$BENCH_TMP/ansible"
mkdir -p "$BENCH_TMP"

cleanup() {
  local s
  "$BENCH_DIR/peers/ansible-cleanup.sh" 2>/dev/null || true
  for s in "$BENCH_TMP"/cm.*/*; do [ -S "$s" ] && ssh -F /dev/null -S "$s" -O exit x 2>/dev/null; done
  if [ -f "$BENCH_TMP/w6-host/launcher.pid" ]; then "$REPO_DIR/tests/lab/systemd-host.sh" stop "$BENCH_TMP/w6-host" >/dev/null 2>&1 || true; fi
  ./hosts.sh stop
}
trap cleanup EXIT
trap 'exit 130' INT TERM

case " ${ONLY:-W8} " in *" W8 "*) A8=${A8:-$([ "$QUICK" = 1 ] && echo 20 || echo 200)} ;; *) A8=0 ;; esac
export A8
./hosts.sh start "$K" "$A" "$A8"
echo "bench: load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
/usr/bin/python3 ./bench.py
