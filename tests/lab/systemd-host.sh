#!/bin/bash
# A lab host with REAL systemd as PID 1 (systemd-nspawn --boot), reachable by ssh on
# 127.0.0.1:PORT only. Works on a machine WITHOUT systemd as init (no machined, no
# D-Bus; cgroup v1, hybrid or v2). Needs root, systemd-container, debootstrap, zstd,
# openssh-client and util-linux (unshare, flock).
#
# usage:
#   systemd-host.sh ensure [ROOTFS]            make a complete rootfs available (default below):
#                                              fast if there; else import ROOTFS.tar.zst; else build + export
#   systemd-host.sh build  [ROOTFS]            debootstrap bookworm minbase + systemd, sshd, ... (2-3 min)
#   systemd-host.sh export ROOTFS TARBALL      cache the rootfs as .tar.zst (~2 s)
#   systemd-host.sh import TARBALL [ROOTFS]    unpack a cached rootfs
#   systemd-host.sh start  STATE PORT [ROOTFS] boot an instance (STATE e.g. /tmp/lab-sd-2222); ~2 s to ssh
#   systemd-host.sh stop   STATE               orderly poweroff, then clean up the instance's cgroups
#   systemd-host.sh ssh    STATE [CMD...]      ssh root@127.0.0.1 -p PORT with the instance's key/known_hosts
#   systemd-host.sh add-user STATE NAME nopasswd|password=PW   unprivileged user + sudo rule + ssh key
#   systemd-host.sh reset  STATE               forget all changes made inside the instance (stopped only)
#
# Default ROOTFS: $RATCHET_LAB_ROOTFS or /var/cache/ratchet-lab/rootfs; its cache tarball
# is ROOTFS.tar.zst (override with RATCHET_LAB_TARBALL).
#
# A rootfs counts as complete only when it carries the stamp file etc/ratchet-lab-rootfs,
# written last. build and import work in ROOTFS.partial and rename it at the end, so an
# interrupted build is rebuilt by `ensure`, never booted.
#
# Each instance = overlayfs (lower = ROOTFS read-only, upper = STATE/upper): several
# instances share one rootfs, and changes survive stop/start until `reset`. The instance
# shares the machine's network namespace; its sshd listens on 127.0.0.1:PORT only.
# Side effects on the machine stay inside STATE: nspawn runs in a private mount namespace
# with its own tmpfs /run (nspawn writes /run/systemd/nspawn/...), and in its own cgroup
# lab-nspawn-PORT (with --keep-unit nspawn creates payload/ below its own cgroup, which
# would otherwise be the machine's root cgroup). `stop` removes that cgroup.
set -euo pipefail

DEFAULT_ROOTFS=${RATCHET_LAB_ROOTFS:-/var/cache/ratchet-lab/rootfs}
STAMP=etc/ratchet-lab-rootfs   # relative to the rootfs; written last
RECIPE_VERSION=1

# The Debian mirror is the one this machine's apt already uses (deb822 or one-line format).
apt_mirror() {
  local u
  u=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$u" ] || u=$(awk '$1=="deb" && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  echo "$u"
}
MIRROR=${MIRROR:-$(apt_mirror)}
SUITE=${SUITE:-bookworm}
# What the demo and the tests run on the host: systemd + logind (libpam-systemd, dbus),
# sshd, sudo, fuser (psmisc), ps/pgrep (procps), ss (iproute2). findutils (GNU find
# -printf), mawk and coreutils are in minbase already; naming them makes it explicit.
PKGS="systemd,systemd-sysv,openssh-server,psmisc,procps,iproute2,dbus,sudo,libpam-systemd,findutils,mawk,coreutils${EXTRA_PACKAGES:+,$EXTRA_PACKAGES}"

die() { echo "systemd-host: $*" >&2; exit 1; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
since() { local d=$(( $(now_ms) - $1 )); printf '%d.%03d' $((d / 1000)) $((d % 1000)); }

proc_starttime() { # PID -> start time in clock ticks (field 22 of /proc/PID/stat)
  local st; st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20) && [ -n "$st" ] && echo "$st"
}

ssh_opts() { # STATE -> options for OpenSSH's ssh (-F none: no user config such as ControlMaster)
  local s=$1 port; port=$(cat "$s/port")
  echo "-F none -i $s/client_key -o UserKnownHostsFile=$s/known_hosts -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -o BatchMode=yes -o LogLevel=ERROR -p $port"
}

cg_dirs() { # PORT -> cgroup dirs to create for this instance
  local n=lab-nspawn-$1
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    echo "/sys/fs/cgroup/$n"                                            # pure cgroup v2
  else
    [ -d /sys/fs/cgroup/systemd ] && echo "/sys/fs/cgroup/systemd/$n"   # v1 name=systemd
    [ -d /sys/fs/cgroup/unified ] && echo "/sys/fs/cgroup/unified/$n"   # hybrid: v2 part
  fi
  return 0
}

# ---- rootfs helpers ----------------------------------------------------------------

is_stamped() { [ -f "$1/$STAMP" ]; }

# ensure/build/import rewrite files of ROOTFS (machine-id, ssh host keys): never this machine's /.
check_rootfs_path() { # ROOTFS
  case "$1" in /*) ;; *) die "ROOTFS must be an absolute path: $1";; esac
  [ "$(readlink -m "$1")" != / ] || die "ROOTFS must not be /"
}

# A build that got through debootstrap: the key binaries exist, every package dpkg knows
# is fully installed (a cut-off second stage leaves "unpacked"/"half-configured"), and
# GNU find -printf runs inside it.
is_complete_build() { # ROOTFS
  local r=$1 p
  [ -e "$r/etc/os-release" ] && [ -x "$r/usr/sbin/sshd" ] && [ -x "$r/lib/systemd/systemd" ] || return 1
  [ -f "$r/var/lib/dpkg/status" ] || return 1
  awk '/^Status:/ && !/ install ok installed$/ {bad=1} END {exit bad}' "$r/var/lib/dpkg/status" || return 1
  for p in ${PKGS//,/ }; do
    grep -qx "Package: $p" "$r/var/lib/dpkg/status" || return 1
  done
  [ "$(chroot "$r" /usr/bin/find /etc/os-release -maxdepth 0 -printf '%s' 2>/dev/null)" -gt 0 ] 2>/dev/null || return 1
  chroot "$r" /usr/bin/awk 'BEGIN{exit 0}' || return 1
}

# Instance-independent configuration (per-instance bits are written at start). Idempotent.
configure_rootfs() { # ROOTFS
  local r=$1
  rm -f "$r"/etc/ssh/ssh_host_*                         # per-instance host key at start
  rm -f "$r"/etc/systemd/system/getty.target.wants/getty@tty1.service
  rm -f "$r"/etc/systemd/system/timers.target.wants/*   # no apt-daily etc. in tests
  : > "$r/etc/machine-id"                               # debootstrap copied the machine's id
  echo lab-systemd > "$r/etc/hostname"
  rm -rf "$r"/var/cache/apt/archives/*.deb
}

write_stamp() { # ROOTFS
  printf 'ratchet-lab rootfs v%s\nsuite=%s\npackages=%s\ncompleted=%s\n' \
    "$RECIPE_VERSION" "$SUITE" "$PKGS" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$1/$STAMP.tmp"
  mv -f "$1/$STAMP.tmp" "$1/$STAMP"
}

# Removes a leftover ROOTFS.partial; refuses if anything is mounted below it.
remove_partial() { # DIR
  local d=$1
  [ -e "$d" ] || return 0
  case "$d" in *.partial) ;; *) die "refusing to remove $d";; esac
  if awk -v p="$d" '$2 == p || index($2, p "/") == 1 {f=1} END{exit !f}' /proc/self/mounts; then
    die "something is mounted below $d; unmount it first"
  fi
  rm -rf --one-file-system "$d"
}

with_lock() { # ROOTFS CMD... : serialize build/import/ensure of one rootfs (ctest runs tests in parallel)
  local r=$1; shift
  mkdir -p "$(dirname "$r")"
  exec 9>"$(dirname "$r")/.$(basename "$r").lock"
  flock 9
  "$@"
}

do_build() { # ROOTFS
  local R=$1 P=$1.partial t0
  is_stamped "$R" && die "$R is already a complete rootfs (rm -rf it to rebuild)"
  [ -e "$R" ] && die "$R exists but is incomplete; remove it or run: $0 ensure $R"
  [ -n "$MIRROR" ] || die "no Debian mirror found in apt sources; set MIRROR"
  command -v debootstrap >/dev/null || die "debootstrap is not installed (scripts/setup.sh installs it)"
  t0=$(now_ms)
  remove_partial "$P"
  # private mount ns + tmpfs /run: debootstrap's own `mount -t proc/sysfs` into the target
  # would otherwise make libmount create /run/mount on the machine, and a failed build
  # could leave proc/sys mounted under the target.
  unshare --mount --propagation private sh -c 'mount -n -t tmpfs -o mode=755 lab-build-run /run && exec "$@"' sh \
    debootstrap --variant=minbase --include="$PKGS" "$SUITE" "$P" "$MIRROR" ||
    die "debootstrap failed (log: $P/debootstrap/debootstrap.log); the next build starts over"
  echo "debootstrap took $(since "$t0")s"
  is_complete_build "$P" || die "debootstrap finished but $P is incomplete"
  configure_rootfs "$P"
  write_stamp "$P"
  mv -T "$P" "$R"
  du -sh "$R"
  echo "build total $(since "$t0")s"
}

do_export() { # ROOTFS TARBALL
  local R=$1 T=$2
  is_stamped "$R" || die "$R is not a complete rootfs"
  tar -C "$R" --numeric-owner --xattrs --acls -I 'zstd -T0 -3 -q' -cf "$T.partial" .
  mv -f "$T.partial" "$T"
  ls -la "$T"
}

do_import() { # TARBALL ROOTFS
  local T=$1 R=$2 P=$2.partial
  [ -e "$R" ] && die "$R already exists"
  remove_partial "$P"
  mkdir -p "$P"
  tar -C "$P" --numeric-owner --xattrs --acls -I zstd -xf "$T" || { remove_partial "$P"; return 1; }
  if ! is_stamped "$P"; then
    if ! is_complete_build "$P"; then
      remove_partial "$P"; echo "systemd-host: $T does not hold a complete rootfs" >&2; return 1
    fi
    configure_rootfs "$P"; write_stamp "$P"
  fi
  mv -T "$P" "$R"
}

do_ensure() { # ROOTFS
  local R=$1 T=${RATCHET_LAB_TARBALL:-$1.tar.zst} t0
  is_stamped "$R" && return 0          # another caller finished while we waited for the lock
  t0=$(now_ms)
  if [ -e "$R" ]; then
    if is_complete_build "$R"; then    # built by an earlier recipe without the stamp
      configure_rootfs "$R"; write_stamp "$R"
      echo "systemd-host: accepted existing rootfs $R" >&2; return 0
    fi
    echo "systemd-host: $R is incomplete (interrupted build?); rebuilding" >&2
    mv -T "$R" "$R.partial.old.$$"; rm -rf --one-file-system "$R.partial.old.$$"
  fi
  if [ -f "$T" ]; then
    echo "systemd-host: importing $T" >&2
    if do_import "$T" "$R"; then echo "systemd-host: imported in $(since "$t0")s" >&2; return 0; fi
    echo "systemd-host: import of $T failed; building instead" >&2
  fi
  echo "systemd-host: building $R with debootstrap (2-3 min)" >&2
  do_build "$R" >&2
  do_export "$R" "$T" >&2
}

# ---- commands ------------------------------------------------------------------------

cmd=${1:-}; shift || true
case "$cmd" in
ensure)
  R=${1:-$DEFAULT_ROOTFS}
  check_rootfs_path "$R"
  [ "$(id -u)" -eq 0 ] || die "needs root"
  is_stamped "$R" && exit 0            # fast path: no lock, no writes
  with_lock "$R" do_ensure "$R"
  ;;

build)
  R=${1:-$DEFAULT_ROOTFS}
  check_rootfs_path "$R"
  with_lock "$R" do_build "$R"
  ;;

export)
  R=${1:-$DEFAULT_ROOTFS}; T=${2:?TARBALL.tar.zst}
  do_export "$R" "$T"
  ;;

import)
  T=${1:?TARBALL.tar.zst}; R=${2:-$DEFAULT_ROOTFS}
  check_rootfs_path "$R"
  with_lock "$R" do_import "$T" "$R"
  ;;

start)
  S=${1:?STATE dir}; PORT=${2:?PORT}; R=${3:-$DEFAULT_ROOTFS}
  case "$PORT" in 2024|*[!0-9]*|?|??|???) die "choose a free port above 1023 (2024 is taken)";; esac
  is_stamped "$R" || die "no complete rootfs at $R (run: $0 ensure $R)"
  mkdir -p "$S"; chmod 711 "$S"; S=$(cd "$S" && pwd); R=$(cd "$R" && pwd)
  if [ -f "$S/launcher.pid" ] && kill -0 "$(cat "$S/launcher.pid")" 2>/dev/null; then die "already running"; fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then die "127.0.0.1:$PORT already in use"; fi
  echo "$PORT" > "$S/port"; echo "$R" > "$S/rootfs"
  mkdir -p "$S/upper" "$S/work" "$S/merged"
  [ -f "$S/client_key" ] || ssh-keygen -q -t ed25519 -N '' -C lab-systemd-client -f "$S/client_key"
  [ -f "$S/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C "lab-systemd-$PORT" -f "$S/ssh_host_ed25519_key"
  U=$S/upper
  mkdir -p "$U/etc/ssh/sshd_config.d" "$U/root/.ssh" "$U/etc/systemd/system/session-.scope.d"
  install -m 600 "$S/ssh_host_ed25519_key" "$U/etc/ssh/ssh_host_ed25519_key"
  install -m 644 "$S/ssh_host_ed25519_key.pub" "$U/etc/ssh/ssh_host_ed25519_key.pub"
  cat > "$U/etc/ssh/sshd_config.d/lab.conf" <<EOF
ListenAddress 127.0.0.1
Port $PORT
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
MaxStartups 200:30:400
MaxSessions 100
UseDNS no
EOF
  # A process left in a login session that ignores SIGTERM (the staged GPU worker does)
  # holds up the poweroff for 90 s (the session scope's stop timeout; `stop` gives up at
  # 30 s). Only session scopes get a short timeout: services keep systemd's defaults.
  printf '[Scope]\nTimeoutStopSec=%s\n' "${LAB_SESSION_STOP_TIMEOUT:-1s}" > "$U/etc/systemd/system/session-.scope.d/lab.conf"
  chmod 700 "$U/root/.ssh"; install -m 600 "$S/client_key.pub" "$U/root/.ssh/authorized_keys"
  echo "lab-$PORT" > "$U/etc/hostname"
  # without this sudo prints "unable to resolve host lab-PORT" on every call
  printf '127.0.0.1\tlocalhost\n127.0.1.1\tlab-%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' "$PORT" > "$U/etc/hosts"
  [ -s "$U/etc/machine-id" ] || systemd-id128 new > "$U/etc/machine-id"
  echo "[127.0.0.1]:$PORT $(cut -d' ' -f1,2 "$S/ssh_host_ed25519_key.pub")" > "$S/known_hosts"
  cgs=$(cg_dirs "$PORT"); for d in $cgs; do mkdir -p "$d"; done
  echo "$cgs" > "$S/cgroups"
  t0=$(now_ms)
  rm -f "$S/stopping" "$S/nspawn.pid"; : > "$S/console.log"
  # launcher (own session, private mount ns) -> loop { systemd-nspawn } so that a
  # `reboot` inside the container (nspawn exit code 133) boots it again.
  # --keep-unit: without it nspawn fails with "Failed to open system bus".
  setsid unshare --mount --propagation private sh -c '
    S=$1 R=$2 PORT=$3; shift 3
    mount -n -t tmpfs -o mode=755,size=64m lab-nspawn-run /run
    mount -n -t overlay lab-root -o "lowerdir=$R,upperdir=$S/upper,workdir=$S/work" "$S/merged"
    while :; do
      # only nspawn itself goes into the lab cgroup (--keep-unit uses its own cgroup)
      sh -c "for d in \$(cat \"$S/cgroups\"); do echo \$\$ > \"\$d/cgroup.procs\"; done; exec \"\$@\"" sh \
        systemd-nspawn -D "$S/merged" --boot --register=no --keep-unit \
        --link-journal=no --console=read-only --machine="lab-$PORT" "$@" &
      echo $! > "$S/nspawn.pid"
      wait $!; rc=$?
      if [ "$rc" -eq 133 ] && [ ! -e "$S/stopping" ]; then echo "[systemd-host] container rebooted; booting again"; continue; fi
      break
    done
    echo "[systemd-host] nspawn exited rc=$rc"; exit "$rc"
  ' sh "$S" "$R" "$PORT" ${NSPAWN_EXTRA_ARGS:-} </dev/null >>"$S/console.log" 2>&1 &
  launcher=$!; echo "$launcher" > "$S/launcher.pid"
  for _ in $(seq 1 50); do [ -s "$S/nspawn.pid" ] && break; sleep 0.1; done
  pid=$(cat "$S/nspawn.pid" 2>/dev/null || true)
  O=$(ssh_opts "$S")
  ok=0
  for _ in $(seq 1 600); do
    kill -0 "$launcher" 2>/dev/null || break
    # shellcheck disable=SC2086
    if ssh $O -o ConnectTimeout=2 root@127.0.0.1 true 2>/dev/null; then ok=1; break; fi
    sleep 0.1
  done
  if [ $ok != 1 ]; then
    tail -30 "$S/console.log" >&2
    "$0" stop "$S" >&2 || true
    die "instance did not become reachable by ssh"
  fi
  boot=$(since "$t0"); echo "$boot" > "$S/boot_to_ssh_s"
  # With LAB_OWNER_PID (a test process), a watchdog stops the instance once that process
  # is gone without calling stop (killed by a ctest timeout, Ctrl-C): a destructor that
  # never ran must not leave a container behind. LAB_OWNER_CLEANUP=1: then remove STATE too.
  if [ -n "${LAB_OWNER_PID:-}" ]; then
    st=$(proc_starttime "$LAB_OWNER_PID") || { "$0" stop "$S" >&2; die "owner $LAB_OWNER_PID is not running"; }
    setsid bash -c '
      S=$1 owner=$2 st=$3 script=$4 cleanup=$5
      starttime() { sed "s/.*) //" "/proc/$1/stat" 2>/dev/null | cut -d" " -f20; }
      while [ -f "$S/launcher.pid" ] && [ "$(starttime "$owner")" = "$st" ]; do sleep 1; done
      [ -f "$S/launcher.pid" ] || exit 0
      rm -f "$S/watchdog.pid"            # so that stop does not kill us
      echo "[systemd-host] owner $owner is gone; stopping"
      "$script" stop "$S"
      if [ "$cleanup" = 1 ]; then rm -rf "$S"; fi
    ' sh "$S" "$LAB_OWNER_PID" "$st" "$(readlink -f "$0")" "${LAB_OWNER_CLEANUP:-0}" </dev/null >>"$S/console.log" 2>&1 &
    echo $! > "$S/watchdog.pid"
  fi
  cat <<EOF
SSH_HOST=127.0.0.1
SSH_HOST_PORT=$PORT
NSPAWN_PID=$pid
LAUNCHER_PID=$launcher
SSH_KEY=$S/client_key
SSH_KNOWN_HOSTS=$S/known_hosts
CONSOLE_LOG=$S/console.log
BOOT_TO_SSH_S=$boot
# ssh $O root@127.0.0.1
EOF
  ;;

stop)
  S=${1:?STATE dir}; S=$(cd "$S" && pwd)
  launcher=$(cat "$S/launcher.pid" 2>/dev/null || true)
  pid=$(cat "$S/nspawn.pid" 2>/dev/null || true)
  wd=$(cat "$S/watchdog.pid" 2>/dev/null || true); rm -f "$S/watchdog.pid"
  if [ -n "$wd" ] && tr '\0' ' ' < "/proc/$wd/cmdline" 2>/dev/null | grep -qF "sh $S "; then
    kill "$wd" 2>/dev/null || true
  fi
  if [ -n "$launcher" ] && kill -0 "$launcher" 2>/dev/null; then
    t0=$(now_ms); touch "$S/stopping"
    # SIGTERM to nspawn -> it sends SIGRTMIN+3 to the container's systemd -> orderly halt
    if [ -n "$pid" ] && grep -q systemd-nspawn "/proc/$pid/cmdline" 2>/dev/null; then kill -TERM "$pid"; fi
    for _ in $(seq 1 300); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$launcher" 2>/dev/null; then
      echo "still alive after 30s, SIGKILL" >&2
      if [ -n "$pid" ] && grep -q systemd-nspawn "/proc/$pid/cmdline" 2>/dev/null; then kill -KILL "$pid"; fi
      sleep 0.5; kill -KILL "$launcher" 2>/dev/null || true
    fi
    echo "stopped nspawn pid $pid (launcher $launcher) in $(since "$t0")s"
  else
    echo "not running"
  fi
  rm -f "$S/stopping" "$S/launcher.pid" "$S/nspawn.pid"
  # remove the instance cgroups (depth-first; only empty dirs can be removed anyway)
  for d in $(cat "$S/cgroups" 2>/dev/null); do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
    [ -d "$d" ] && echo "warning: cgroup $d not removed (processes left?)" >&2
  done
  true
  ;;

ssh)
  S=${1:?STATE dir}; shift
  # shellcheck disable=SC2046
  exec ssh $(ssh_opts "$S") root@127.0.0.1 "$@"
  ;;

add-user)
  S=${1:?STATE dir}; NAME=${2:?NAME}; MODE=${3:-nopasswd}
  pub=$(cat "$S/client_key.pub")
  case "$MODE" in
    nopasswd)   rule="$NAME ALL=(ALL:ALL) NOPASSWD: ALL"; pw='*' ;;   # '*' = no password but NOT locked
    password=*) rule="$NAME ALL=(ALL:ALL) ALL"; pw=${MODE#password=} ;;
    *) die "mode must be nopasswd or password=PW";;
  esac
  # ssh joins argv into ONE string for the remote shell -> quote each argument.
  # The password travels on stdin (the line after `read`), never in an argv:
  # tests watch every command line for it. bash -s reads a pipe line by line.
  # shellcheck disable=SC2046
  { printf 'IFS= read -r pw\n%s\n' "$pw"; cat; } <<'EOF' | ssh $(ssh_opts "$S") root@127.0.0.1 "bash -s -- $(printf '%q ' "$NAME" "$rule" "$pub")"
set -e
name=$1 rule=$2 pub=$3
id "$name" >/dev/null 2>&1 || useradd -m -s /bin/bash "$name"
if [ "$pw" = '*' ]; then usermod -p '*' "$name"; else echo "$name:$pw" | chpasswd; fi
printf '%s\n' "$rule" > "/etc/sudoers.d/90-$name"; chmod 440 "/etc/sudoers.d/90-$name"
visudo -cf "/etc/sudoers.d/90-$name" >/dev/null
install -d -m 700 -o "$name" -g "$name" "/home/$name/.ssh"
printf '%s\n' "$pub" > "/home/$name/.ssh/authorized_keys"
chown "$name:$name" "/home/$name/.ssh/authorized_keys"; chmod 600 "/home/$name/.ssh/authorized_keys"
echo "user $name ready: $rule"
EOF
  ;;

reset)
  S=${1:?STATE dir}
  if [ -f "$S/launcher.pid" ] && kill -0 "$(cat "$S/launcher.pid")" 2>/dev/null; then die "stop it first"; fi
  rm -rf "$S/upper" "$S/work"; echo "instance state wiped"
  ;;

*)
  sed -n '/^# usage:/,/^# Default/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
  ;;
esac
