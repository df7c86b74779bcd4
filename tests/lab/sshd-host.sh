#!/bin/bash
# Hermetic sshd test host on 127.0.0.1 for ratchet's tests (no systemd, no PAM,
# no changes to /etc or /run). Used by tests/support/sshd_fixture.cc.
#
#   sshd-host.sh start DIR PORT   -> generate keys+config in DIR, start sshd, wait for port
#   sshd-host.sh stop  DIR        -> kill the sshd whose PID is in DIR/sshd.pid (only that PID)
#   sshd-host.sh status DIR
#   sshd-host.sh env DIR          -> print shell variables (SSH_HOST_PORT, SSH_KEY, ...)
#
# DIR should be something like /tmp/lab-sshd-XXXX; it is created if missing.
# Extra sshd_config lines can be passed with EXTRA_SSHD_CONFIG="Opt val\nOpt2 val".
# SSHD_MAX_STARTUPS (default 200:30:400) and SSHD_MAX_SESSIONS (default 100) override
# the concurrency limits (sshd's own defaults are 10:30:100 and 10).
#
# Why a private mount namespace: Debian's sshd insists on the privilege-separation
# directory /run/sshd (compile-time path, normally created by the systemd unit).
# Instead of creating it on the host we start sshd inside `unshare --mount`
# (private propagation) where /run is an overlay (lower=/run, upper=DIR/run-upper),
# and create /run/sshd there. The host's /run is not modified. Set
# SSHD_HOST_NO_NS=1 to skip this (then /run/sshd must already exist).
# SSHD_HOST_CLEAN_ROOT_HOME=1 (the default here; set 0 to keep the real /root)
# bind-mounts an empty DIR/root-home over /root inside that namespace, so a slow
# /root/.bashrc (seen: pyenv init, ~1.3 s per command) is not run by every ssh command.
# SSHD_HOST_ETC_OVERLAY=1 makes /etc an overlay (upper=DIR/etc-upper) and /home a
# bind of DIR/home inside the namespace, so test users created through the test
# host (useradd, sudoers.d, authorized_keys) never reach the real host.
# /var/log is always a bind of an empty DIR/var-log inside the namespace: the
# audit line each run writes on its host (/var/log/ratchet/runs.log) stays in DIR.
set -euo pipefail

die() { echo "sshd-host: $*" >&2; exit 1; }

cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: $0 start DIR PORT | stop DIR | status DIR | env DIR"

wait_port() { # host port timeout_s
  local i
  for i in $(seq 1 $(( $3 * 10 ))); do
    if (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}

case "$cmd" in
start)
  port=${3:-}; [ -n "$port" ] || die "start needs a PORT"
  case "$port" in 2024|*[!0-9]*|?|??|???) die "choose a free port above 1023 (2024 is taken)";; esac
  mkdir -p "$dir"; chmod 711 "$dir"; dir=$(cd "$dir" && pwd)  # 711: sshd reads authorized_keys as the target user
  if [ -f "$dir/sshd.pid" ] && kill -0 "$(cat "$dir/sshd.pid")" 2>/dev/null; then
    die "already running (pid $(cat "$dir/sshd.pid"))"
  fi
  [ -f "$dir/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C lab-host -f "$dir/ssh_host_ed25519_key"
  [ -f "$dir/client_key" ]           || ssh-keygen -q -t ed25519 -N '' -C lab-client -f "$dir/client_key"
  # one authorized_keys file per user; %u expands to the user name
  mkdir -p "$dir/authorized_keys"; chmod 755 "$dir/authorized_keys"
  cp "$dir/client_key.pub" "$dir/authorized_keys/root"
  chmod 644 "$dir/authorized_keys/root"
  cat > "$dir/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $port
HostKey $dir/ssh_host_ed25519_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys/%u
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
# The key files live under /tmp (mode 1777); StrictModes would reject that path.
StrictModes no
LogLevel VERBOSE
# Headroom for ~50 concurrent connections / multiplexed channels:
MaxStartups ${SSHD_MAX_STARTUPS:-200:30:400}
MaxSessions ${SSHD_MAX_SESSIONS:-100}
MaxAuthTries 10
LoginGraceTime 30
UseDNS no
ClientAliveInterval 0
Subsystem sftp internal-sftp
AcceptEnv LANG LC_*
EOF
  if [ -n "${EXTRA_SSHD_CONFIG:-}" ]; then printf '%b\n' "$EXTRA_SSHD_CONFIG" >> "$dir/sshd_config"; fi
  echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$dir/ssh_host_ed25519_key.pub")" > "$dir/known_hosts"
  rm -f "$dir/sshd.pid"
  if [ "${SSHD_HOST_NO_NS:-0}" = 1 ]; then
    [ -d /run/sshd ] || die "/run/sshd missing (needed by sshd privsep); create it or drop SSHD_HOST_NO_NS"
    /usr/sbin/sshd -t -f "$dir/sshd_config" || die "sshd -t rejected $dir/sshd_config"
    setsid /usr/sbin/sshd -D -e -f "$dir/sshd_config" </dev/null >>"$dir/sshd.log" 2>&1 &
  else
    mkdir -p "$dir/run-upper" "$dir/run-work"
    # Private mount ns; /run = overlay(host /run, DIR/run-upper) so /run/sshd can exist
    # without touching the host. unshare(1) execs its command and sh execs sshd,
    # so $! ends up being sshd's own PID.
    ns_prelude='d=$1; shift
      if ! mount -n -t overlay lab-run -o "lowerdir=/run,upperdir=$d/run-upper,workdir=$d/run-work" /run 2>/dev/null; then
        mount -n -t tmpfs -o mode=755,size=16m lab-run /run
      fi
      mkdir -p /run/sshd && chmod 755 /run/sshd
      if [ "${SSHD_HOST_ETC_OVERLAY:-0}" = 1 ]; then
        mkdir -p "$d/etc-upper" "$d/etc-work" "$d/home"
        mount -n -t overlay lab-etc -o "lowerdir=/etc,upperdir=$d/etc-upper,workdir=$d/etc-work" /etc
        mount -n --bind "$d/home" /home
      fi
      if [ "${SSHD_HOST_CLEAN_ROOT_HOME:-1}" = 1 ]; then
        mkdir -p "$d/root-home" && chmod 700 "$d/root-home" && mount -n --bind "$d/root-home" /root
      fi
      # ratchet audit lines (default /var/log/ratchet/runs.log) stay in DIR/var-log
      mkdir -p "$d/var-log" && mount -n --bind "$d/var-log" /var/log
      exec "$@"'
    unshare --mount --propagation private sh -c "$ns_prelude" sh "$dir" \
      /usr/sbin/sshd -t -f "$dir/sshd_config" || die "sshd -t rejected $dir/sshd_config"
    setsid unshare --mount --propagation private sh -c "$ns_prelude" sh "$dir" \
      /usr/sbin/sshd -D -e -f "$dir/sshd_config" </dev/null >>"$dir/sshd.log" 2>&1 &
  fi
  pid=$!
  echo "$pid" > "$dir/launcher.pid"
  if ! wait_port 127.0.0.1 "$port" 10; then
    kill "$pid" 2>/dev/null || true
    tail -20 "$dir/sshd.log" >&2
    die "sshd did not come up on 127.0.0.1:$port"
  fi
  # sshd -D writes PidFile with its own pid; it must equal $pid (exec chain)
  for _ in $(seq 1 20); do [ -s "$dir/sshd.pid" ] && break; sleep 0.1; done
  [ "$(cat "$dir/sshd.pid" 2>/dev/null)" = "$pid" ] || echo "warning: PidFile $(cat "$dir/sshd.pid" 2>/dev/null) != launched pid $pid" >&2
  cat <<EOF
SSH_HOST=127.0.0.1
SSH_HOST_PORT=$port
SSH_HOST_PID=$pid
SSH_KEY=$dir/client_key
SSH_KNOWN_HOSTS=$dir/known_hosts
SSH_HOST_PUBKEY=$dir/ssh_host_ed25519_key.pub
SSH_CONFIG=$dir/sshd_config
SSH_LOG=$dir/sshd.log
# ssh -i $dir/client_key -o UserKnownHostsFile=$dir/known_hosts -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -p $port root@127.0.0.1 true
EOF
  ;;
stop)
  pf="$dir/launcher.pid"; [ -f "$pf" ] || pf="$dir/sshd.pid"
  [ -f "$pf" ] || die "no pid file in $dir"
  pid=$(cat "$pf")
  # kill only this PID (the listening sshd); established session children of
  # sshd exit when their connection closes.
  if kill -0 "$pid" 2>/dev/null && grep -q sshd "/proc/$pid/cmdline" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    echo "stopped sshd pid $pid"
  else
    echo "sshd pid $pid not running"
  fi
  rm -f "$dir/launcher.pid" "$dir/sshd.pid"
  ;;
status)
  pid=$(cat "$dir/launcher.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "running pid $pid"; else echo "not running"; exit 1; fi
  ;;
env)
  port=$(awk '$1=="Port"{print $2}' "$dir/sshd_config")
  echo "SSH_HOST=127.0.0.1 SSH_HOST_PORT=$port SSH_KEY=$dir/client_key SSH_KNOWN_HOSTS=$dir/known_hosts"
  ;;
*) die "unknown command $cmd";;
esac
