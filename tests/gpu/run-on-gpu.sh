#!/bin/bash
# Issues 6 and 17: ratchet frees a real CUDA device held by an orphaned process, on the GPU
# machine that the `device` tool lends (kind nvidia-h200: Ubuntu 24.04, root, no sshd,
# no registry). Runs there as root, from the repository root, in one call:
#
#   (here)   tests/gpu/stage.sh                       # sshd + ssh-keygen from Debian's debs,
#                                                     # ratchet, their libraries -> tests/gpu/.stage
#   (device) run: tests/gpu/run-on-gpu.sh   carry: ["tests/gpu/.stage"]
#
# What it does, all on 127.0.0.1 of that machine:
#  1. creates the test user (TEST_USER, UID TEST_UID, which no process may use yet), the
#     privilege-separation user sshd and /run/sshd; generates host and client keys
#     with the staged ssh-keygen; starts the staged sshd on 127.0.0.1:PORT (not 2024);
#  2. starts, as root, a bystander: a CUDA process that is not the test user's and must
#     survive the runbook untouched; then, as the test user, over that sshd (`ratchet
#     exec`): `nohup python3 holder.py server &`
#     with its PID into a PID file, then logs out. The server initialises CUDA through
#     PyTorch and orphans a worker (double fork + setsid) that also holds the GPU and
#     ignores SIGTERM (tests/gpu/holder.py);
#  3. records nvidia-smi's version and its two CSV answers (--query-gpu, --query-compute-apps)
#     and whether it lists the server and the worker (smi=true/false: the notes say which);
#  4. runs playbooks/gpu-release-cuda.toml (every selector filtered by the test user; the
#     devices checked by `verify gpus_idle`, per GPU, the driver's view beside the kernel's),
#     then runs it a second time (nothing left: no rung may fire);
#  5. asserts from the transcripts (tests/gpu/check-transcript.py) that every PID ratchet
#     signalled was the test user's and one of the two it started, that the worker was
#     found by ratchet's own /proc scan and which rung freed it, the per-GPU table before
#     and after (the worker's context and memory, then 0 processes of the test user and
#     memory back to the floor), that the bystander was listed as left out and never
#     selected or signalled; and checks independently that no process of the
#     test user is left and that the bystander still runs and holds the GPU;
#  6. on exit, also on failure: KILLs by PID what still runs with the test user's UID,
#     the bystander by its PID, and stops the sshd it started by its PID: nothing else.
# Nothing here signals a process by name, and nothing else on the machine is touched but
# /etc/passwd, /etc/group, /etc/shadow (the two users) and /run/sshd.
#
# MAX_MEMORY_USED=MiB (default 512) is the playbook's max_memory_used: what a GPU may show
# used by none of the test user's processes (the bystander's own memory is left out).
#
# Outputs (to $OUT, else tests/gpu/.out): run-on-gpu.log, transcript.jsonl,
# transcript-second-run.jsonl, production-notes.md, summary.txt, sshd.log, holder.log.
#
# RATCHET_GPU_FAKE=1 runs the same scene without a GPU: stand-in files under the work
# directory (nvidia0, nvidiactl, nvidia-uvm, nvidia-uvm-tools, nvidia-caps/nvidia-cap1,2)
# instead of /dev/nvidia*, held by holder.py without CUDA, and tests/gpu/fake-nvidia-smi
# (the driver's CSV for the processes holding the stand-in nvidia0). To try it on a
# machine that is not throwaway, run it through tests/gpu/local-standin.sh (private
# /etc and /run, so the users it creates never reach that machine).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
S=$ROOT/tests/gpu/.stage
OUTDIR=${OUT:-$ROOT/tests/gpu/.out}
FAKE=${RATCHET_GPU_FAKE:-0}
TEST_USER=${TEST_USER:-ratchet-gpu}
TEST_UID=${TEST_UID:-59123}
LIFETIME=${HOLDER_LIFETIME:-240}
mkdir -p "$OUTDIR"
# ratchet appends to a transcript file: start from none
rm -f "$OUTDIR"/transcript.jsonl "$OUTDIR"/transcript-second-run.jsonl "$OUTDIR"/production-notes.md \
      "$OUTDIR"/summary.txt "$OUTDIR"/sshd.log "$OUTDIR"/holder.log
exec > >(tee "$OUTDIR/run-on-gpu.log") 2>&1

T0=$(date +%s)
log() { printf '[%s +%3ss] %s\n' "$(date -u +%H:%M:%S)" "$(( $(date +%s) - T0 ))" "$*"; }
die() { log "FAIL: $*"; exit 1; }
# The staged binaries run with the staged libraries; nothing else sees them (sshd builds
# its sessions' environment afresh, so the remote commands run with the machine's own).
sx() { LD_LIBRARY_PATH="$S/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
ratchet() { sx "$S/bin/ratchet" "$@"; }
sq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }   # POSIX sh single quotes

uid_pids() { # PIDs whose real UID is $1 (zombies too)
  awk -v u="$1" '$1 == "Uid:" && $2 == u { split(FILENAME, f, "/"); print f[3] }' /proc/[0-9]*/status 2>/dev/null || true
}
alive() { # PID alive and not a zombie
  local s; s=$(awk '$1 == "State:" { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
  [ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ]
}
holds_device() { # PID -> prints the device files it holds (fd links into the device glob)
  local f l
  for f in /proc/"$1"/fd/*; do
    l=$(readlink "$f" 2>/dev/null) || continue
    case "$l" in "$DEVDIR"/nvidia*) printf '%s\n' "$l";; esac
  done | sort -u
}

# ---- 0. preflight ---------------------------------------------------------------------
[ "$(id -u)" = 0 ] || die "run as root"
[ -x "$S/bin/ratchet" ] && [ -x "$S/bin/sshd" ] || die "no $S: run tests/gpu/stage.sh on the build machine and carry tests/gpu/.stage"
log "machine: $(. /etc/os-release; echo "$PRETTY_NAME"), kernel $(uname -r), $(getconf GNU_LIBC_VERSION)"
sed 's/^/  stage: /' "$S/MANIFEST"
glibc=$(getconf GNU_LIBC_VERSION | awk '{ print $2 }')
awk -v v="$glibc" 'BEGIN { split(v, a, "."); exit !(a[1] > 2 || (a[1] == 2 && a[2] >= 36)) }' ||
  die "glibc $glibc is older than the staging machine's 2.36: the staged binaries need at least that"
log "ratchet $(ratchet --version)"

W=$(mktemp -d /tmp/ratchet-gpu.XXXXXX)
chmod 711 "$W"   # the test user reaches its run directory; sshd reads authorized_keys
RUN=$W/run
SSHD_PID= BYSTANDER=

cleanup() {
  local rc=$? p left
  set +e
  # Every process with the test UID was started by this script (the UID was unused
  # when it began): KILL each by PID. Nothing else is signalled.
  left=$(uid_pids "$TEST_UID")
  for p in $left; do alive "$p" && { log "cleanup: KILL $p (uid $TEST_UID): $(tr '\0' ' ' < /proc/$p/cmdline)"; kill -KILL "$p"; }; done
  if [ -n "$BYSTANDER" ] && alive "$BYSTANDER" && grep -qa 'holder.py.bystander' "/proc/$BYSTANDER/cmdline"; then
    kill -KILL "$BYSTANDER"
  fi
  if [ -n "$SSHD_PID" ] && kill -0 "$SSHD_PID" 2>/dev/null; then kill -TERM "$SSHD_PID"; fi
  cp "$W/sshd.log" "$OUTDIR/sshd.log" 2>/dev/null
  cat "$RUN/server.log" "$RUN/worker.log" "$W/bystander/bystander.log" > "$OUTDIR/holder.log" 2>/dev/null
  if [ "$rc" = 0 ]; then rm -rf "$W"; log "PASS"; else log "FAILED (rc $rc); work directory kept: $W"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- 1. devices, users, keys, sshd ----------------------------------------------------
if [ "$FAKE" = 1 ]; then
  DEVDIR=$W/dev
  mkdir -p "$DEVDIR/nvidia-caps"
  for n in nvidia0 nvidiactl nvidia-uvm nvidia-uvm-tools nvidia-caps/nvidia-cap1 nvidia-caps/nvidia-cap2; do
    : > "$DEVDIR/$n"; chmod 666 "$DEVDIR/$n"
  done
  chmod 400 "$DEVDIR/nvidia-caps/nvidia-cap1"; chmod 444 "$DEVDIR/nvidia-caps/nvidia-cap2"  # as on the H200
  FAKE_DEVICES="$DEVDIR/nvidia0 $DEVDIR/nvidiactl $DEVDIR/nvidia-uvm $DEVDIR/nvidia-caps/nvidia-cap2"
  PY=${PYTHON:-/usr/bin/python3}
  # the stand-in nvidia-smi: the driver's CSV, as the real one prints it, for the
  # processes that hold the stand-in nvidia0 (tests/gpu/fake-nvidia-smi)
  mkdir -p "$W/smi/nvidia-smi.d"
  ln -s "$ROOT/tests/gpu/fake-nvidia-smi" "$W/smi/nvidia-smi"
  echo "0 GPU-00000000-0000-4000-8000-000000000000 143771 $DEVDIR/nvidia0 NVIDIA H200 (stand-in)" > "$W/smi/nvidia-smi.d/gpus"
  SMI=$W/smi/nvidia-smi
  log "stand-in run (no GPU): devices are files under $DEVDIR, nvidia-smi is $SMI"
else
  DEVDIR=/dev
  FAKE_DEVICES=
  PY=${PYTHON:-$(command -v python3)}
  SMI=$(command -v nvidia-smi) || die "nvidia-smi not found"
  log "nvidia-smi $SMI: $("$SMI" --version 2>&1 | tr '\n' ';' | sed 's/;*$//; s/;/; /g')"
  ls -ld /dev/nvidia* /dev/nvidia-caps/* | sed 's/^/  /'
fi
DEVICE_GLOB="$DEVDIR/nvidia*"

if id -u "$TEST_USER" >/dev/null 2>&1; then
  [ "$(id -u "$TEST_USER")" = "$TEST_UID" ] || die "user $TEST_USER exists with another UID"
else
  getent passwd "$TEST_UID" >/dev/null && die "UID $TEST_UID belongs to $(getent passwd "$TEST_UID" | cut -d: -f1)"
  useradd -u "$TEST_UID" -M -d "$W/home" -s /bin/sh -p '*' "$TEST_USER"   # '*': no password, not locked
fi
[ -z "$(uid_pids "$TEST_UID")" ] || die "processes already run with UID $TEST_UID: $(uid_pids "$TEST_UID" | tr '\n' ' ')"
mkdir -p "$W/home" "$RUN"
chown "$TEST_USER:" "$W/home" "$RUN"
cp tests/gpu/holder.py "$W/holder.py"; chmod 644 "$W/holder.py"
getent passwd sshd >/dev/null || useradd -r -M -d /run/sshd -s /usr/sbin/nologin sshd
mkdir -p /run/sshd; chmod 755 /run/sshd
log "test user $TEST_USER (uid $TEST_UID), work directory $W"

sx "$S/bin/ssh-keygen" -q -t ed25519 -N '' -C ratchet-gpu-host -f "$W/host_key"
sx "$S/bin/ssh-keygen" -q -t ed25519 -N '' -C ratchet-gpu-client -f "$W/client_key"
mkdir -p "$W/authorized_keys"
cp "$W/client_key.pub" "$W/authorized_keys/root"
cp "$W/client_key.pub" "$W/authorized_keys/$TEST_USER"
chmod 755 "$W/authorized_keys"; chmod 644 "$W/authorized_keys"/*

PORT=${PORT:-}
if [ -z "$PORT" ]; then
  for p in $(seq 2222 2299); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { PORT=$p; break; }
  done
fi
[ -n "$PORT" ] && [ "$PORT" != 2024 ] || die "no free port"
cat > "$W/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $PORT
HostKey $W/host_key
PidFile $W/sshd.pid
AuthorizedKeysFile $W/authorized_keys/%u
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
LogLevel VERBOSE
MaxStartups 100:30:200
MaxSessions 50
EOF
sx "$S/bin/sshd" -t -f "$W/sshd_config" || die "sshd -t rejected the config"
# Not setsid: should this script die unhandled, the device tool ends sshd with it.
sx "$S/bin/sshd" -D -e -f "$W/sshd_config" </dev/null >>"$W/sshd.log" 2>&1 &
SSHD_PID=$!
for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || { cat "$W/sshd.log"; die "sshd did not listen on 127.0.0.1:$PORT"; }
log "sshd (OpenSSH from Debian's deb) pid $SSHD_PID on 127.0.0.1:$PORT"
echo "[127.0.0.1]:$PORT $(cut -d' ' -f1,2 "$W/host_key.pub")" > "$W/known_hosts"

INV=$W/inventory.toml
cat > "$INV" <<EOF
# generated by tests/gpu/run-on-gpu.sh: this machine's loopback sshd
[hosts.h200]
address = "127.0.0.1"
port = $PORT
user = "root"
identity = "$W/client_key"
known_hosts = "$W/known_hosts"

[hosts.h200-user]
address = "127.0.0.1"
port = $PORT
user = "$TEST_USER"
identity = "$W/client_key"
known_hosts = "$W/known_hosts"

[groups]
gpu = ["h200"]
EOF
ratchet exec h200 -i "$INV" -F none --timeout 20s -- 'echo "root over ssh: $(id -un)@$(hostname)"' || die "ratchet exec as root failed"

# ---- 2. the scene: a root bystander; the test user starts the server by hand, with nohup ---
# The holders get root's CUDA-related environment (sshd gives the test user a clean one).
envs="PYTHONUNBUFFERED=1 HOLDER_LIFETIME=$LIFETIME"
for v in LD_LIBRARY_PATH $(compgen -e | grep -E '^(CUDA|NVIDIA)_' || true); do
  [ -n "${!v:-}" ] && envs="$envs $v=$(sq "${!v}")"
done
[ -n "$FAKE_DEVICES" ] && envs="$envs HOLDER_FAKE_DEVICES=$(sq "$FAKE_DEVICES")"
mkdir -p "$W/bystander"
eval "nohup env $envs $PY $W/holder.py bystander $W/bystander >$W/bystander/bystander.log 2>&1 </dev/null &"
BYSTANDER=$!
disown "$BYSTANDER"   # no job-control notice when cleanup KILLs it
log "bystander (root, not the test user's): PID $BYSTANDER"
start_cmd="cd $RUN && nohup env $envs $PY $W/holder.py server $RUN >$RUN/server.log 2>&1 </dev/null & echo \$! > $RUN/server.pid; echo \"started \$(cat $RUN/server.pid) as \$(id -un)\""
log "as $TEST_USER over ssh: $start_cmd"
ratchet exec h200-user -i "$INV" -F none --timeout 20s -- "$start_cmd" || die "ratchet exec as $TEST_USER failed"

SERVER= WORKER=
for _ in $(seq 1 600); do   # up to 120 s: two PyTorch imports and CUDA initialisations
  SERVER=$(cat "$RUN/server.pid" 2>/dev/null || true)
  WORKER=$(cat "$RUN/worker.pid" 2>/dev/null || true)
  if [ -n "$SERVER" ] && ! alive "$SERVER"; then cat "$RUN/server.log"; die "the server $SERVER died"; fi
  alive "$BYSTANDER" || { cat "$W/bystander/bystander.log"; die "the bystander died"; }
  if [ -f "$RUN/server.ready" ] && [ -n "$WORKER" ] && [ -s "$W/bystander/bystander.pid" ] &&
     [ -n "$(holds_device "$SERVER")" ] && [ -n "$(holds_device "$WORKER")" ] && [ -n "$(holds_device "$BYSTANDER")" ]; then break; fi
  sleep 0.2
done
[ -f "$RUN/server.ready" ] && [ -n "$WORKER" ] || { cat "$RUN/server.log" "$RUN/worker.log" 2>/dev/null; die "scene not ready after 120 s"; }
for p in "$SERVER" "$WORKER"; do
  [ "$(awk '$1 == "Uid:" { print $2 }' "/proc/$p/status")" = "$TEST_UID" ] || die "PID $p is not the test user's"
done
wpp=$(awk '$1 == "PPid:" { print $2 }' "/proc/$WORKER/status")
[ "$wpp" != "$SERVER" ] || die "the worker is still the server's child: not orphaned"
log "scene ready: server $SERVER, worker $WORKER (parent $wpp, session $(awk '$1 == "NSsid:" { print $2 }' "/proc/$WORKER/status"); the server's session $(awk '$1 == "NSsid:" { print $2 }' "/proc/$SERVER/status"))"
log "  server holds: $(holds_device "$SERVER" | tr '\n' ' ')"
log "  worker holds: $(holds_device "$WORKER" | tr '\n' ' ')"
log "  bystander $BYSTANDER (root) holds: $(holds_device "$BYSTANDER" | tr '\n' ' ')"

# ---- 3. does nvidia-smi list the test's own CUDA processes? ------------------------------
Q_GPU="--query-gpu=index,uuid,name,memory.used,memory.total,utilization.gpu --format=csv,noheader,nounits"
Q_APPS="--query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits"
# shellcheck disable=SC2086  # the query's words
"$SMI" $Q_GPU 2>&1 | sed 's/^/  nvidia-smi --query-gpu before: /' || true
# shellcheck disable=SC2086
before=$("$SMI" $Q_APPS 2>&1 || true)
printf '%s\n' "$before" | sed 's/^/  nvidia-smi --query-compute-apps before: /'
listed=$(printf '%s\n' "$before" | awk -F', *' '$2 ~ /^[0-9]+$/ { print $2 }')
if printf '%s\n' "$listed" | grep -qx "$SERVER" && printf '%s\n' "$listed" | grep -qx "$WORKER"; then
  SMI_OK=true
  SMI_NOTE="Before the run nvidia-smi listed the test's own CUDA processes (server $SERVER, worker $WORKER): the driver's view counts."
else
  SMI_OK=false
  SMI_NOTE="On this machine nvidia-smi did not list the test's own CUDA processes (server $SERVER, worker $WORKER) before the run: of the two views, the kernel's (ratchet's /proc holders scan) is the one that saw them."
fi
[ "$FAKE" = 1 ] && SMI_NOTE="Stand-in run without a GPU, and with a stand-in nvidia-smi. $SMI_NOTE"
log "smi=$SMI_OK: $SMI_NOTE"

# ---- 4. the runbook, twice -------------------------------------------------------------------
args=(playbooks/gpu-release-cuda.toml -i "$INV" -F none
      -e "test_user=$TEST_USER" -e "pid_file=$RUN/server.pid" -e "devices=[\"$DEVICE_GLOB\"]"
      -e "notes=$W/production-notes.md" -e "nvidia_smi=$SMI" -e "smi_note=$SMI_NOTE"
      -e "max_memory_used=${MAX_MEMORY_USED:-512}")
log "ratchet plan (dry run)"
ratchet plan "${args[@]}" > "$W/plan.txt" || die "plan failed"
head -n 40 "$W/plan.txt" | sed 's/^/  | /'
log "ratchet run (first)"
set +e
ratchet run "${args[@]}" --transcript "$OUTDIR/transcript.jsonl"; rc1=$?
set -e
log "ratchet run exit $rc1"
ratchet show "$OUTDIR/transcript.jsonl" | sed 's/^/  | /' || true
cp "$W/production-notes.md" "$OUTDIR/production-notes.md" 2>/dev/null || true
log "ratchet run (second: nothing left, no rung may fire)"
set +e
ratchet run "${args[@]}" --transcript "$OUTDIR/transcript-second-run.jsonl"; rc2=$?
set -e
log "ratchet run exit $rc2"

# ---- 5. assertions ---------------------------------------------------------------------------
[ "$rc1" = 0 ] || die "first run exited $rc1"
[ "$rc2" = 0 ] || die "second run exited $rc2"
"$PY" tests/gpu/check-transcript.py --user "$TEST_USER" --server "$SERVER" --worker "$WORKER" --bystander "$BYSTANDER" \
  --smi "$SMI_OK" --first "$OUTDIR/transcript.jsonl" --second "$OUTDIR/transcript-second-run.jsonl" |
  tee "$OUTDIR/summary.txt"
[ "${PIPESTATUS[0]}" = 0 ] || die "transcript check failed"

left=
for p in $(uid_pids "$TEST_UID"); do alive "$p" && left="$left $p"; done
[ -z "$left" ] || die "processes of $TEST_USER still alive:$left"
for p in "$SERVER" "$WORKER"; do
  [ -z "$(holds_device "$p")" ] || die "PID $p still holds a device"
done
alive "$BYSTANDER" && [ -n "$(holds_device "$BYSTANDER")" ] || die "the bystander $BYSTANDER was harmed"
# shellcheck disable=SC2086
"$SMI" $Q_GPU 2>&1 | sed 's/^/  nvidia-smi --query-gpu after: /' || true
# shellcheck disable=SC2086
after=$("$SMI" $Q_APPS 2>&1 || true)
printf '%s\n' "$after" | sed 's/^/  nvidia-smi --query-compute-apps after: /'
if printf '%s\n' "$after" | awk -F', *' '{ print $2 }' | grep -qxE "$SERVER|$WORKER"; then
  [ "$SMI_OK" = true ] && die "nvidia-smi still lists $SERVER or $WORKER"
fi
if printf '%s\n' "$after" | awk -F', *' '{ print $2 }' | grep -qx "$BYSTANDER"; then
  log "nvidia-smi still lists the bystander $BYSTANDER (root): gpus_idle told it apart from the test user's"
fi
printf 'nvidia-smi after the runs, as root (server %s, worker %s, bystander %s):\n%s\n' "$SERVER" "$WORKER" "$BYSTANDER" "$after" >> "$OUTDIR/summary.txt"
log "independent checks: no live process of $TEST_USER, neither PID holds a device; the bystander $BYSTANDER still runs and holds the GPU"
echo "independent checks (as root, after both runs): no live process of $TEST_USER; server $SERVER and worker $WORKER hold nothing; bystander $BYSTANDER (root) still runs and holds the GPU" >> "$OUTDIR/summary.txt"
