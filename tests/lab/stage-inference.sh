#!/bin/bash
# Stages, ON a lab host (as root), the scene of the production GPU hand-over that the
# gpu-release runbook (design.md §2) cleans up:
#   - DEVICE_DIR: regular files standing in for nvidia0..nvidia7, nvidiactl, nvidia-uvm
#   - /usr/local/bin/inference-server + /etc/default/inference (DEVICES=...): what the
#     runbook's unit runs (EnvironmentFile=-/etc/default/inference,
#     ExecStart=/usr/local/bin/inference-server); it holds every file in $DEVICES
#   - a server started by hand (setsid nohup, then "logged out"), PID in /run/inference.pid,
#     holding nvidiactl, with a direct child (tokenizer, holds nothing special) and an
#     ORPHANED worker (double fork + setsid: parent is PID 1, not a descendant, other
#     session) that ignores SIGTERM and holds all ten stand-in files
#   - nvidia-persistenced (comm "nvidia-persiste"), a systemd service holding nvidiactl,
#     which must survive the runbook (keep list)
#
# usage (bash, not sh: dash has no pipefail and only fds 0-9):
#   tests/lab/systemd-host.sh ssh STATE 'bash -s' < tests/lab/stage-inference.sh
#
# Prints, last and only on stdout, one KEY=VALUE line each:
#   DEVICE_DIR= DEVICE_GLOB= DEVICES= PID_FILE= SERVER_PID= CHILD_PID= WORKER_PID= KEEP_PID=
# It returns once every process holds its files. Nothing started here keeps the ssh
# channel open: all of them have stdin/stdout/stderr on /dev/null.
set -euo pipefail

fail() { echo "stage-inference: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "run as root"

D=$(mktemp -d /var/tmp/ratchet-gpu.XXXXXX)
chmod 755 "$D"
NAMES="nvidia0 nvidia1 nvidia2 nvidia3 nvidia4 nvidia5 nvidia6 nvidia7 nvidiactl nvidia-uvm"
DEVICES=""
for n in $NAMES; do
  : > "$D/$n"; chmod 666 "$D/$n"             # like /dev/nvidia*: crw-rw-rw-
  DEVICES="${DEVICES:+$DEVICES }$D/$n"
done
LIB=/usr/local/lib/ratchet-lab               # helper scripts: never inside DEVICE_DIR
mkdir -p "$LIB"

# ---- what the unit runs ----------------------------------------------------------------
cat > /usr/local/bin/inference-server <<'EOF'
#!/bin/bash
# Stand-in for the GPU inference server: opens every file in $DEVICES (space-separated)
# read-only on fds 3, 4, ... and sleeps; exec keeps those fds.
set -euo pipefail
fd=3
for f in ${DEVICES:?DEVICES is not set (EnvironmentFile=/etc/default/inference)}; do
  eval "exec $fd<\"\$f\""
  fd=$((fd + 1))
done
exec -a inference-server sleep infinity
EOF
chmod 755 /usr/local/bin/inference-server
printf 'DEVICES="%s"\n' "$DEVICES" > /etc/default/inference

# ---- the processes started by hand ---------------------------------------------------------
# Worker: ignores SIGTERM (SIG_IGN survives exec), holds all ten files.
cat > "$LIB/hand-worker" <<'EOF'
#!/bin/bash
set -euo pipefail
trap '' TERM
fd=3
for f in $DEVICES; do eval "exec $fd<\"\$f\""; fd=$((fd + 1)); done
exec -a inference-worker sleep infinity
EOF
# Server: orphans a worker (the subshell exits at once, so the worker is re-parented to
# PID 1; setsid puts it in its own session), forks a tokenizer child, writes the PID file,
# then holds nvidiactl. The children are forked before nvidiactl is opened.
cat > "$LIB/hand-server" <<'EOF'
#!/bin/bash
set -euo pipefail
ctl=$1
( setsid "${0%/*}/hand-worker" & )
( exec -a inference-tokenizer sleep infinity ) &
echo $$ > /run/inference.pid
exec 3<"$ctl"
exec -a inference-server sleep infinity
EOF
chmod 755 "$LIB/hand-worker" "$LIB/hand-server"

rm -f /run/inference.pid
DEVICES=$DEVICES setsid nohup "$LIB/hand-server" "$D/nvidiactl" </dev/null >/dev/null 2>&1 &

# ---- the daemon that holds the GPUs by design ----------------------------------------------
# comm comes from the executable's file name, cut to 15 chars: "nvidia-persiste".
# (a second staging on the same host replaces the daemon; the old scene's other processes stay)
systemctl stop nvidia-persistenced.service >/dev/null 2>&1 || true
systemctl reset-failed nvidia-persistenced.service >/dev/null 2>&1 || true
cp /usr/bin/sleep "$LIB/nvidia-persistenced.tmp"         # cp onto a running binary: "Text file busy"
mv -f "$LIB/nvidia-persistenced.tmp" "$LIB/nvidia-persistenced"
systemd-run --quiet --unit=nvidia-persistenced --description="stand-in NVIDIA persistence daemon" \
  /bin/bash -c 'exec 3<"$1"; exec "$2" infinity' sh "$D/nvidiactl" "$LIB/nvidia-persistenced"

# ---- wait until every process really holds its files ----------------------------------------
held() { # PID -> how many of its fds point into DEVICE_DIR
  find "/proc/$1/fd" -mindepth 1 -lname "$D/*" 2>/dev/null | wc -l
}
holds() { [ "$(readlink "/proc/$1/fd/$2" 2>/dev/null)" = "$3" ]; }   # PID FD PATH
cmd_is() { # PID ARGV0: its command line starts with ARGV0 (set by exec -a)
  local c; c=$(tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null) || return 1
  [[ "$c" == "$2 "* ]]
}

server="" child="" worker="" keep=""
for _ in $(seq 1 100); do
  server=$(cat /run/inference.pid 2>/dev/null || true)
  child=$( [ -n "$server" ] && pgrep -P "$server" || true)
  # the worker is the only process holding nvidia0 at this point
  worker=$(find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/fd/*' -lname "$D/nvidia0" 2>/dev/null |
           cut -d/ -f3 | head -n1 || true)
  keep=$(systemctl show -p MainPID --value nvidia-persistenced.service 2>/dev/null || true)
  if [ -n "$server" ] && holds "$server" 3 "$D/nvidiactl" && cmd_is "$server" inference-server &&
     [ -n "$child" ] && cmd_is "$child" inference-tokenizer && [ "$(held "$child")" = 0 ] &&
     [ -n "$worker" ] && cmd_is "$worker" inference-worker && [ "$(held "$worker")" = 10 ] &&
     [ "$(ps -o ppid= -p "$worker" | tr -d ' ')" = 1 ] &&
     [ -n "$keep" ] && [ "$keep" != 0 ] && holds "$keep" 3 "$D/nvidiactl" &&
     [ "$(cat "/proc/$keep/comm")" = nvidia-persiste ]; then
    cat <<EOF
DEVICE_DIR=$D
DEVICE_GLOB=$D/nvidia*
DEVICES=$DEVICES
PID_FILE=/run/inference.pid
SERVER_PID=$server
CHILD_PID=$child
WORKER_PID=$worker
KEEP_PID=$keep
EOF
    exit 0
  fi
  sleep 0.1
done
fail "scene not ready after 10 s: server=$server child=$child worker=$worker keep=$keep"
