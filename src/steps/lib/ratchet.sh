# ratchet host library v1: POSIX sh + coreutils (GNU or BusyBox) + awk, reads /proc.
# (Where the host has perl, one perl process gathers the holder scan's records.)
# Prepended to every command that calls a ratchet_* function (the transcript's
# `sent`); the `command` shown by plan is the call alone. Never uses fuser.
# Holder/process line format (tab-separated):
#   pid  user  start_ticks  start_epoch  comm  cmdline  state  owner  file  file ...
# state: /proc/PID/stat's state letter (R S D T t Z ...), "D:WCHAN" for D.
# owner: "-" (the root cgroup), or KEY=VALUE words joined by blanks (kind name
# scope user restart id; ratchet_owner; kind=unknown when /proc/PID/cgroup is
# unreadable), each VALUE %-encoded as a file plus a blank -> %20.
# Each file is %-encoded (% -> %25, TAB -> %09, newline -> %0A), so no byte of a
# path can split a field or a line. Exit statuses of checks: 0 holds, 1 does
# not hold, 2 bad target (a pattern that matches nothing), 3 recycled PID,
# 4 bad input, 5 could not look (unreadable processes, a missing tool).
# A literal tab: sourcing the library starts no process (R24: a login at its
# process limit still gets as far as ratchet_room).
RATCHET_TAB='	'
# Column numbers of a process line, for cut -f (awk scripts name them too).
# A process line has at least RATCHET_COL_OWNER fields (files follow it).
RATCHET_COL_PID=1 RATCHET_COL_TICKS=3 RATCHET_COL_EPOCH=4 RATCHET_COL_OWNER=8
RATCHET_NL='
'

# %-encodes $1 (the process-line file encoding above); prints it with a newline.
ratchet_esc() {
  RE_S=$1 awk 'BEGIN { s = ENVIRON["RE_S"]; gsub(/%/, "%25", s); gsub(/\t/, "%09", s); gsub(/\n/, "%0A", s); print s }'
}

# ratchet_esc, without a process for a name that needs no escape.
ratchet_esc_path() {
  case "$1" in *%*|*"$RATCHET_TAB"*|*"$RATCHET_NL"*) ratchet_esc "$1" ;; *) printf '%s\n' "$1" ;; esac
}

# The user name of UID (numeric when no name is known).
ratchet_uname() {
  local _un
  _un=$(getent passwd "$1" 2>/dev/null | cut -d: -f1)
  [ -n "$_un" ] || _un=$(awk -F: -v u="$1" '$3 == u { print $1; exit }' /etc/passwd 2>/dev/null)
  printf '%s\n' "${_un:-$1}"
}

# Effective UID of PID (from /proc/PID/status; the files in /proc/PID are owned
# by root when the process is not dumpable, whoever runs it).
# (Shell builtins only: read's fields are awk's here.)
ratchet_euid() {
  local _k _r _e _x
  { while read -r _k _r _e _x; do
      if [ "$_k" = Uid: ]; then printf '%s\n' "$_e"; break; fi
    done < "/proc/$1/status"; } 2>/dev/null
}

# The most processes a /proc scan runs at once (pipelines, command
# substitutions, the maps walk beside the descriptor walk, with a margin):
# with fewer left under the login user's process limit, a fork would be
# refused part-way and the scan would end on a wrong reason.
RATCHET_SCAN_PROCS=16

# Fails closed before a scan the host would cut short (R24): the login user
# (not root, whom the kernel does not hold to it) has fewer than
# RATCHET_SCAN_PROCS processes left under its process limit (RLIMIT_NPROC,
# `ulimit -u`: every task of the user counts, threads too). Shell builtins
# only: it must run where no process is left. Prints "ratchet: could not
# check: the host refused a new process (...)" on stderr and returns 5; else 0.
# Without /proc (a chroot or container that has none mounted) every scan
# would read no process at all, never "free": "could not check" too (R27).
ratchet_room() {
  local _k _w _n _x _c _p _t
  if [ ! -r "/proc/$$/stat" ]; then
    printf '%s\n' "ratchet: could not check: /proc is not mounted (the process scan needs /proc on the host)" >&2
    return 5
  fi
  _n=
  { while read -r _k _w _n _x; do
      [ "$_k $_w" = "Max processes" ] && break
      _n=
    done < "/proc/$$/limits"; } 2>/dev/null
  case "$_n" in ''|*[!0-9]*) return 0 ;; esac  # unlimited: nothing to judge
  { while read -r _k _w _x; do [ "$_k" = Uid: ] && break; done < "/proc/$$/status"; } 2>/dev/null
  [ "$_x" = 0 ] && return 0
  # All the host's threads (/proc/loadavg's "running/total") are a bound on
  # the login user's: far enough below the limit, no walk.
  { read -r _k _k _k _t _k </proc/loadavg; } 2>/dev/null
  _t=${_t#*/}
  case "$_t" in ''|*[!0-9]*) ;; *) [ $((_n - _t)) -lt "$RATCHET_SCAN_PROCS" ] || return 0 ;; esac
  _c=0
  for _p in /proc/[0-9]*; do
    [ -O "$_p" ] || continue
    for _t in "$_p"/task/[0-9]*; do _c=$((_c + 1)); done
  done
  [ $((_n - _c)) -lt "$RATCHET_SCAN_PROCS" ] || return 0
  printf '%s\n' "ratchet: could not check: the host refused a new process (login user's process limit reached: ulimit -u $_n, $_c running)" >&2
  return 5
}

# Sleeps a tenth of a second, or a whole one where sleep takes no fraction.
ratchet_nap() { sleep 0.1 2>/dev/null || sleep 1; }

# Clock ticks per second and boot time (epoch seconds), for start times.
ratchet_hz() { getconf CLK_TCK 2>/dev/null || echo 100; }
ratchet_btime() { awk '$1=="btime"{print $2}' /proc/stat; }

# "PID PPID SID STATE THREADS" for every process, from /proc/PID/status (whose Name
# field is escaped, unlike comm in /proc/PID/stat, which may hold a newline).
# grep -s, not awk arguments: mawk aborts when a process exits between glob
# and read. Within ratchet_holders, the snapshot it took (RATCHET_SNAP_FILE).
ratchet_stats() {
  if [ -n "${RATCHET_SNAP_FILE:-}" ]; then cat -- "$RATCHET_SNAP_FILE"; return; fi
  grep -s -H -E '^(State|PPid|NSsid|Threads):' /proc/[0-9]*/status |
    awk -F '[:\t ]+' '{ split($1, f, "/"); if ($2 == "PPid") pp[f[3]] = $3; else if ($2 == "NSsid") sid[f[3]] = $3; else if ($2 == "Threads") th[f[3]] = $3; else st[f[3]] = $3 }
      END { for (p in pp) print p, pp[p], sid[p], st[p], (p in th) ? th[p] : 1 }'
}

# Runs CMD ARGS... over ratchet_stats' lines: the snapshot file as its last
# argument when there is one (no process to copy it), else on stdin.
ratchet_with_stats() { # CMD ARGS...
  if [ -n "${RATCHET_SNAP_FILE:-}" ]; then "$@" "$RATCHET_SNAP_FILE"; else ratchet_stats | "$@"; fi
}

# Kernel threads: PID 2 (kthreadd) and its children, one PID a line. They hold
# no user files and are never selected.
# shellcheck disable=SC2016  # an awk program
RATCHET_AWK_KT='$1 == 2 || $2 == 2 { print $1 }'
ratchet_kthreads() { ratchet_with_stats awk "$RATCHET_AWK_KT"; }

# Milliseconds since boot (/proc/uptime), for deadlines that hold under load.
ratchet_now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# Sets RATCHET_STATE (state letter, field 3), RATCHET_PPID (field 4) and
# RATCHET_TICKS (start ticks since boot, field 22) of PID from /proc/PID/stat;
# all "" when it is gone. The one reader of /proc/PID/stat here: the comm
# field may hold spaces, parentheses and newlines, so the lines are joined by
# blanks and the fields are those after the last ") ". Shell builtins only
# (no process: it is polled, and must work at the login's process limit).
ratchet_stat_fields() { # PID
  local _l _st
  RATCHET_STATE='' RATCHET_TICKS='' RATCHET_PPID='' _st='' _l=''
  { while IFS= read -r _l; do _st="$_st$_l "; done < "/proc/$1/stat"; } 2>/dev/null || [ -n "$_st$_l" ] || return 0
  _st="$_st$_l"
  case "$_st" in *") "*) ;; *) return 0 ;; esac
  _st=${_st##*) }
  # shellcheck disable=SC2086  # the stat fields, split at blanks on purpose
  { set -f; set -- $_st; set +f; }
  RATCHET_STATE=${1:-} RATCHET_PPID=${2:-} RATCHET_TICKS=${20:-}
}

# Start time of PID in clock ticks since boot (/proc/PID/stat field 22, as
# ratchet_stat_fields reads it); nothing when PID is gone.
ratchet_start() { ratchet_stat_fields "$1"; [ -z "$RATCHET_TICKS" ] || printf '%s\n' "$RATCHET_TICKS"; }

# The state of PID (R, S, D, T, t, Z, ...: /proc/PID/stat field 3, as
# ratchet_stat_fields reads it); nothing when PID is gone.
ratchet_state() { ratchet_stat_fields "$1"; [ -z "$RATCHET_STATE" ] || printf '%s\n' "$RATCHET_STATE"; }

# True when PID is alive and still the process that started at TICKS (a
# different start time is a recycled PID). A zombie is dead unless another
# thread of its thread group still runs (a leader that returned while a worker
# thread keeps the device): the group is gone only when every thread is.
ratchet_same_alive() {
  ratchet_stat_fields "$1"
  [ -n "$RATCHET_TICKS" ] || return 1
  [ "$RATCHET_TICKS" = "$2" ] || return 1
  case "$RATCHET_STATE" in
    X) return 1 ;;
    Z) ratchet_live_threads "$1" ;;
    *) return 0 ;;
  esac
}

# True when a thread of PID's group other than its leader is not a zombie.
ratchet_live_threads() {
  local _ls _lt
  for _lt in "/proc/$1/task/"[0-9]*; do
    [ "$_lt" = "/proc/$1/task/$1" ] && continue
    _ls=$(awk '$1 == "State:" { print $2; exit }' "$_lt/status" 2>/dev/null)
    case "$_ls" in ""|Z|X) ;; *) return 0 ;; esac
  done
  return 1
}

# The fd directories (/proc/PID/task/TID/fd, one a line) of the threads of
# the PIDs given (multi-threaded processes) whose descriptor table is not
# their thread-group leader's (a thread that called unshare(CLONE_FILES)):
# their descriptors are not under /proc/PID/fd. Told by the number of open
# descriptors the kernel gives as an fd directory's size (Linux 6.2 and
# later; one stat per thread, not a walk of its descriptors): a thread whose
# count is not its leader's. A kernel that gives no count (size 0): every
# thread. A table of its own that holds exactly as many descriptors as its
# leader's is not told apart (docs/host-library.md).
ratchet_task_tables() { # PID...
  local _p
  [ $# -gt 0 ] || return 0
  { printf '%s\n' /proc/self/fd
    for _p in "$@"; do printf '%s\n' "/proc/$_p/fd" "/proc/$_p/task/"[0-9]*/fd; done; } |
    xargs stat -c '%s %n' 2>/dev/null | awk '
    NR == 1 { counts = ($1 > 0); next }
    { split($2, q, "/"); if (q[4] == "fd") lead[q[3]] = $1; else if (q[5] != q[3]) { n++; t[n] = $2; p[n] = q[3]; c[n] = $1 } }
    END { for (i = 1; i <= n; i++) if (!counts || !(p[i] in lead) || c[i] != lead[p[i]]) print t[i] }'
}

# PIDs never selected: PID 1, this command's ancestry (sshd's session process)
# and every process of this command's own session (its subshells).
# shellcheck disable=SC2016  # awk program parts (ratchet_prot_kt runs both at once)
RATCHET_AWK_PROT_ROW='{ pp[$1] = $2; sid[$1] = $3 }' RATCHET_AWK_PROT_END='for (p = me; p != "" && p + 0 > 0; p = (p in pp) ? pp[p] : "") print p
          print 1
          for (p in sid) if (sid[p] == sid[me]) print p'
ratchet_protected() { ratchet_with_stats awk -v me="$$" "$RATCHET_AWK_PROT_ROW END { $RATCHET_AWK_PROT_END }"; }

# Sets RATCHET_PROT (ratchet_protected's lines) and RATCHET_KT
# (ratchet_kthreads') from one awk over the snapshot.
ratchet_prot_kt() {
  local _x
  _x=$(ratchet_with_stats awk -v me="$$" "$RATCHET_AWK_KT $RATCHET_AWK_PROT_ROW END { print \"-\"; $RATCHET_AWK_PROT_END }")
  RATCHET_KT='' RATCHET_PROT=$_x
  case "$_x" in
    -"$RATCHET_NL"*) RATCHET_PROT=${_x#-"$RATCHET_NL"} ;;
    *"$RATCHET_NL-$RATCHET_NL"*) RATCHET_KT=${_x%%"$RATCHET_NL-$RATCHET_NL"*} RATCHET_PROT=${_x#*"$RATCHET_NL-$RATCHET_NL"} ;;
  esac
}

# For pattern selection only (their command lines hold the pattern's text):
# processes running this library, such as an earlier command's deadline
# watchdog. Never for holders: a process could fake that text to hide.
ratchet_own_commands() {
  grep -s -l -a -F -e '# ratchet host library v1' -e 'ratchet-session: the host library ' /proc/[0-9]*/cmdline |
    sed 's|^/proc/||; s|/cmdline$||'
}

# True when PID's environment holds the entry RATCHET_SELF=1 (entries are
# NUL-separated: the whole entry, not a part of another).
ratchet_marked() { tr '\000' '\n' 2>/dev/null < "/proc/$1/environ" | grep -q -x -F 'RATCHET_SELF=1'; }

# ratchet's own processes among PID...: one "PID KIND" line each. KIND `self`:
# its environment holds RATCHET_SELF=1, which ratchet sets (with env, in no
# argv: a pattern neither matches nor forges it) on its session shell, all the
# shell starts but the command (its readers, timers, queries) and its
# watchdog, never on a command. KIND `wrapper`: a session shell's child (its
# parent carries the mark) running ratchet's host library commands (the
# script DIR/w that its argv names sources the library DIR/l). Reading an
# environment or DIR/w takes root or the same user: another user's helpers
# stay selectable (and cannot be signalled without root anyway).
ratchet_self() { # PID...
  local _c _d _p
  # Each candidate read through tr: BusyBox grep stops a line at its first NUL.
  for _p in "$@"; do
    if ratchet_marked "$_p"; then printf '%s self\n' "$_p"; continue; fi
    _c=$(tr '\000' ' ' 2>/dev/null < "/proc/$_p/cmdline") || continue
    case "$_c" in "/bin/sh -c exec 2>/"*"/e; . /"*"/w /bin/sh "*) ;; *) continue ;; esac
    _d=${_c#"/bin/sh -c exec 2>"}; _d=${_d%%"/e; . "*}
    case "$_c" in "/bin/sh -c exec 2>$_d/e; . $_d/w /bin/sh "????????????????" ") ;; *) continue ;; esac
    ratchet_marked "$(awk '$1 == "PPid:" { print $2; exit }' "/proc/$_p/status" 2>/dev/null)" || continue
    grep -q -F "ratchet-session: the host library $_d/l is gone" "$_d/w" 2>/dev/null && printf '%s wrapper\n' "$_p"
  done
  return 0
}

# Prints the process line for PID (see header); nothing when it is gone.
# FILES: the file fields, already %-encoded and tab-separated ("" for none).
ratchet_describe() { # PID FILES
  local _a _bt _c _e _hz _n _s _t _u _w
  [ -d "/proc/$1" ] || return 0
  ratchet_stat_fields "$1"; _t=$RATCHET_TICKS _s=$RATCHET_STATE
  [ -n "$_t" ] || return 0
  if [ "$_s" = D ]; then
    _w=''
    { read -r _w < "/proc/$1/wchan"; } 2>/dev/null
    case "$_w" in ''|0|*[!A-Za-z0-9_.]*) ;; *) _s="D:$_w" ;; esac
  fi
  _u=$(ratchet_euid "$1")
  case "$_u" in  # the name of each UID looked up once in this shell (RATCHET_UN_<UID>)
    '') ;;
    *[!0-9]*) _u=$(ratchet_uname "$_u") ;;
    *) ratchet_uid_name "$_u"; _u=$RATCHET_UNAME ;;
  esac
  # comm read with builtins (as $(cat) would give it: trailing newlines dropped)
  _c='' _n=''
  { while IFS= read -r _n; do _c="$_c$_n$RATCHET_NL"; done < "/proc/$1/comm"; } 2>/dev/null
  _c="$_c$_n"
  while :; do case "$_c" in *"$RATCHET_NL") _c=${_c%"$RATCHET_NL"} ;; *) break ;; esac; done
  case "$_c" in  # comm may hold any byte, even a newline
    *"$RATCHET_TAB"*|*"$RATCHET_NL"*) _c=$(printf '%s' "$_c" | tr '\t\n' '  ') ;;
  esac
  _a=$(tr '\000\t\n' '   ' 2>/dev/null < "/proc/$1/cmdline")
  _a=${_a%"${_a##*[! ]}"}  # no trailing blanks
  [ -n "$_a" ] || _a="[$_c]"
  _hz=${RATCHET_HZ:=$(ratchet_hz)}; _bt=${RATCHET_BT:=$(ratchet_btime)}
  # b + t / h to 2 decimals: shell arithmetic when that is exact (h = 100, Linux's USER_HZ), else awk
  case "$_bt$_t$_hz" in
    *[!0-9]*) _e='' ;;
    *) if [ "$_hz" -gt 0 ] && [ $(( _t * 100 % _hz )) = 0 ]; then
         _e=$(( _t * 100 / _hz )); _e="$(( _bt + _e / 100 )).$(( _e % 100 / 10 ))$(( _e % 10 ))"
       else _e=''; fi ;;
  esac
  [ -n "$_e" ] || _e=$(awk -v b="$_bt" -v t="$_t" -v h="$_hz" 'BEGIN{printf "%.2f", b + t / h}')
  ratchet_owner "$1"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$_u" "$_t" "$_e" "$_c" "$_a" "$_s" "$RATCHET_OWNER" "$2"
}

# Sets RATCHET_UNAME to the user name of numeric UID, looked up once in this
# shell (cached in RATCHET_UN_<UID>).
ratchet_uid_name() { # UID
  local _n
  eval "_n=\${RATCHET_UN_$1-}"
  if [ -z "$_n" ]; then _n=$(ratchet_uname "$1"); eval "RATCHET_UN_$1=\$_n"; fi
  RATCHET_UNAME=$_n
}

# Sets RATCHET_ESC to $1 %-encoded as an owner value (a file's encoding, and
# a blank is %20); no process when nothing needs it.
ratchet_esc_word() { # VALUE
  case "$1" in
    *%*|*" "*|*"$RATCHET_TAB"*|*"$RATCHET_NL"*)
      RATCHET_ESC=$(RE_S=$1 awk 'BEGIN { s = ENVIRON["RE_S"]; gsub(/%/, "%25", s); gsub(/\t/, "%09", s); gsub(/\n/, "%0A", s); gsub(/ /, "%20", s); printf "%s", s }') ;;
    *) RATCHET_ESC=$1 ;;
  esac
}

# Who owns a cgroup PATH (one path of /proc/PID/cgroup): sets RATCHET_OK (kind:
# pod, container, unit, session; "" none), RATCHET_ON (name), RATCHET_OS
# (scope: system or user for a unit, the runtime for a container or pod),
# RATCHET_OU (UID of a user unit or session), RATCHET_OI (id: container, pod
# UID, session number); returns 1 when the path names no owner. The most
# specific wins: pod, container, user unit, login session, system unit.
#   /system.slice/NAME.service  /user.slice/user-UID.slice/user@UID.service/.../NAME.service
#   docker-ID.scope /docker/ID  cri-containerd-ID.scope  crio-ID.scope  libpod-ID(.scope)
#   kubepods...-pod<UID>.slice  /kubepods/.../pod<UID>/ID  user-UID.slice/session-N.scope
ratchet_cgroup_path() { # PATH
  local _c _cid _kube _oifs _pod _prev _rt _sess _suid _unit _uuid _uunit
  RATCHET_OK='' RATCHET_ON='' RATCHET_OS='' RATCHET_OU='' RATCHET_OI=''
  case "$1" in ''|/) return 1 ;; esac
  _cid='' _kube='' _pod='' _prev='' _rt='' _sess='' _suid='' _unit='' _uuid='' _uunit=''
  _oifs=$IFS; IFS=/
  # shellcheck disable=SC2086  # split at / on purpose, no globbing
  { set -f; set -- $1; set +f; }
  IFS=$_oifs
  for _c in "$@"; do
    case "$_c" in kubepods*) _kube=1 ;; esac
    case "$_c" in
      '') ;;
      *-pod*.slice) if [ -n "$_kube" ]; then _pod=${_c##*-pod}; _pod=${_pod%.slice}; fi ;;
      pod?*) if [ -n "$_kube" ]; then _pod=${_c#pod}; fi ;;
      docker-*.scope) _rt=docker _cid=${_c#docker-}; _cid=${_cid%.scope} ;;
      cri-containerd-*.scope) _rt=containerd _cid=${_c#cri-containerd-}; _cid=${_cid%.scope} ;;
      crio-conmon-*|libpod-conmon-*) ;;  # the runtime's monitor, not the container
      crio-*.scope) _rt=cri-o _cid=${_c#crio-}; _cid=${_cid%.scope} ;;
      libpod-*) _rt=podman _cid=${_c#libpod-}; _cid=${_cid%.scope} ;;
      user@*.service) _uuid=${_c#user@}; _uuid=${_uuid%.service}; [ -n "$_unit" ] || _unit=$_c ;;
      user-*.slice) _suid=${_c#user-}; _suid=${_suid%.slice} ;;
      session-*.scope) _sess=${_c#session-}; _sess=${_sess%.scope} ;;
      *.service|*.scope)
        if [ -n "$_uuid" ]; then { [ -n "$_uunit" ] || [ "$_c" = init.scope ]; } || _uunit=$_c
        elif [ -z "$_unit" ]; then _unit=$_c; fi ;;
      *)  # a bare 64-hex container id: /docker/ID, /kubepods/.../pod<UID>/ID
        if [ ${#_c} -eq 64 ]; then
          case "$_c" in *[!0-9a-f]*) ;; *)
            if [ "$_prev" = docker ]; then _rt=docker _cid=$_c; elif [ -n "$_pod" ]; then _cid=$_c; fi ;;
          esac
        fi ;;
    esac
    _prev=$_c
  done
  # A systemd slice escapes a pod UID's dashes as underscores.
  while :; do case "$_pod" in *_*) _pod=${_pod%%_*}-${_pod#*_} ;; *) break ;; esac; done
  if [ -n "$_pod" ]; then RATCHET_OK=pod RATCHET_OS=$_rt RATCHET_OI=$_pod RATCHET_ON=$_cid
  elif [ -n "$_rt" ]; then RATCHET_OK=container RATCHET_OS=$_rt RATCHET_OI=$_cid RATCHET_OU=$_uuid  # rootless: its user
  elif [ -n "$_uunit" ]; then RATCHET_OK=unit RATCHET_OS=user RATCHET_ON=$_uunit RATCHET_OU=$_uuid
  elif [ -n "$_sess" ]; then RATCHET_OK=session RATCHET_ON="session-$_sess.scope" RATCHET_OI=$_sess RATCHET_OU=$_suid
  elif [ -n "$_unit" ]; then RATCHET_OK=unit RATCHET_OS=system RATCHET_ON=$_unit
  else return 1; fi
  return 0
}

# The owner in a /proc/PID/cgroup FILE (ratchet_cgroup_path's variables): the
# cgroup v2 path ("0::/path") first, then v1's name=systemd, then each other
# v1 hierarchy (cgroupfs drivers put /docker/ID, /kubepods/... there); else
# kind cgroup, the v2 (or name=systemd) path as its name. A path holding a
# newline goes on at the next line that is not "N:...:" (v2 and name=systemd
# only). Returns 1 when the process is in the root cgroup, 2 when FILE is
# unreadable or reads empty (a process that went mid-read): the owner is
# unknown, never "none" (fail closed).
ratchet_cgroup_owner() { # FILE
  local _c _cur _l _n _other _p _r _sd _v2
  _v2='' _sd='' _other='' _cur='' _n=0
  { while IFS= read -r _l || [ -n "$_l" ]; do
      _n=$((_n + 1))
      case "$_l" in
        [0-9]*:*:*)
          _r=${_l#*:}; _c=${_r%%:*}; _p=${_r#*:}
          case "${_l%%:*}:$_c" in
            0:) _v2=$_p _cur=v2 ;;
            *:name=systemd) _sd=$_p _cur=sd ;;
            *) _other="$_other$_p$RATCHET_NL" _cur='' ;;
          esac ;;
        *) case "$_cur" in v2) _v2="$_v2$RATCHET_NL$_l" ;; sd) _sd="$_sd$RATCHET_NL$_l" ;; esac ;;
      esac
    done < "$1"; } 2>/dev/null
  [ "$_n" -gt 0 ] || return 2
  ratchet_cgroup_path "$_v2" && return 0
  ratchet_cgroup_path "$_sd" && return 0
  while [ -n "$_other" ]; do
    _p=${_other%%"$RATCHET_NL"*}; _other=${_other#*"$RATCHET_NL"}
    ratchet_cgroup_path "$_p" && return 0
  done
  # A cgroup no rule knows (a supervisor of its own: /process_api/ID, a batch
  # system's job): named by its path, never "no owner".
  _p=$_v2
  case "$_p" in ''|/) _p=$_sd ;; esac
  case "$_p" in ''|/) return 1 ;; esac
  RATCHET_OK=cgroup RATCHET_ON=$_p RATCHET_OS='' RATCHET_OU='' RATCHET_OI=''
  return 0
}

# A value cached in this shell under KEY (RATCHET_OC: "|KEY=VALUE|..."):
# sets RATCHET_CV and returns 0 when there is one.
ratchet_cache_get() { # KEY
  case "${RATCHET_OC:-}" in *"|$1="*) RATCHET_CV=${RATCHET_OC#*"|$1="}; RATCHET_CV=${RATCHET_CV%%|*}; return 0 ;; esac
  return 1
}
ratchet_cache_put() { RATCHET_OC="${RATCHET_OC:-}|$1=$2|"; }  # KEY VALUE (no | in either)

# Sets RATCHET_RESTART to a loaded service's Restart= (no, always, on-failure,
# ...; "" unknown: systemd not running here, a unit it does not know, a name
# with odd bytes), asking systemctl once per unit in this shell (5 s bound).
# A user unit: the user's manager through `-M USER@`, else (root, where that
# needs machined) as the user with its XDG_RUNTIME_DIR (/run/user/UID).
ratchet_unit_restart() { # system|user USER UNIT [UID]
  local _id _k _l _sc _su _un _v
  RATCHET_RESTART=''
  [ -d /run/systemd/system ] || return 0  # sd_booted(3): no systemd manager here
  case "$2$3" in *[!A-Za-z0-9:_.@-]*) return 0 ;; esac
  _k="restart:$1:$2:$3"
  if ratchet_cache_get "$_k"; then RATCHET_RESTART=$RATCHET_CV; return 0; fi
  _sc=$1 _su=$2 _un=$3 _id=${4:-}
  if command -v timeout >/dev/null 2>&1; then set -- timeout 5; else set --; fi
  if [ "$_sc" = user ]; then
    _l=$("$@" systemctl --user -M "$_su@" show -p LoadState -p Restart -- "$_un" 2>/dev/null)
    if [ -z "$_l" ] && [ -d "/run/user/$_id" ] && command -v runuser >/dev/null 2>&1; then
      _l=$("$@" runuser -u "$_su" -- env XDG_RUNTIME_DIR="/run/user/$_id" systemctl --user show -p LoadState -p Restart -- "$_un" 2>/dev/null)
    fi
  else _l=$("$@" systemctl show -p LoadState -p Restart -- "$_un" 2>/dev/null); fi
  _v=''
  case "$RATCHET_NL$_l$RATCHET_NL" in
    *"${RATCHET_NL}LoadState=loaded$RATCHET_NL"*"${RATCHET_NL}Restart="*|*"${RATCHET_NL}Restart="*"${RATCHET_NL}LoadState=loaded$RATCHET_NL"*)
      _v=${_l#*Restart=}; _v=${_v%%"$RATCHET_NL"*} ;;
  esac
  case "$_v" in *[!a-z-]*) _v='' ;; esac
  ratchet_cache_put "$_k" "$_v"
  RATCHET_RESTART=$_v
}

# Sets RATCHET_CNAME (its name), RATCHET_CRESTART (restart policy) and
# RATCHET_CPOD (NAMESPACE/POD) of container ID where the runtime's files say
# so readably (Docker: config.v2.json "Name" and hostconfig.json
# "RestartPolicy" under RATCHET_DOCKER_ROOT, /var/lib/docker; containerd (CRI):
# the task's config.json annotations under RATCHET_CONTAINERD_ROOT,
# /run/containerd/io.containerd.runtime.v2.task/k8s.io; Podman: the first of
# "names" of its entry in overlay-containers/containers.json under
# RATCHET_CONTAINERS_ROOT, /var/lib/containers/storage, or for a rootless one
# (HOME, its user's) HOME/.local/share/containers/storage; CRI-O: the
# io.kubernetes.{container.name,pod.namespace,pod.name} annotations of
# overlay-containers/ID/userdata/config.json there); "" when they do not.
# Podman and CRI-O files hold no restart policy: RATCHET_CRESTART stays "".
# Once per container in this shell.
ratchet_container_names() { # RUNTIME ID [HOME]
  local _d _f _k
  RATCHET_CNAME='' RATCHET_CRESTART='' RATCHET_CPOD=''
  case "$2" in ''|*[!0-9a-f]*) return 0 ;; esac
  _k="ctr:$1:$2:${3:-}"
  if ratchet_cache_get "$_k"; then
    RATCHET_CNAME=${RATCHET_CV%%/*}; RATCHET_CV=${RATCHET_CV#*/}
    RATCHET_CRESTART=${RATCHET_CV%%/*}; RATCHET_CPOD=${RATCHET_CV#*/}
    return 0
  fi
  case "$1" in
    docker)
      _d=${RATCHET_DOCKER_ROOT:-/var/lib/docker}/containers/$2
      if [ -r "$_d/config.v2.json" ]; then
        RATCHET_CNAME=$(grep -o '"Name":"/[^"]*"' "$_d/config.v2.json" 2>/dev/null | head -n 1 | sed 's|^"Name":"/||; s|"$||')
        RATCHET_CRESTART=$(grep -o '"RestartPolicy":{"Name":"[^"]*"' "$_d/hostconfig.json" 2>/dev/null | head -n 1 | sed 's|.*"Name":"||; s|"$||')
      fi ;;
    containerd)
      _f=${RATCHET_CONTAINERD_ROOT:-/run/containerd/io.containerd.runtime.v2.task/k8s.io}/$2/config.json
      if [ -r "$_f" ]; then
        RATCHET_CNAME=$(grep -o '"io.kubernetes.cri.container-name":"[^"]*"' "$_f" 2>/dev/null | head -n 1 | sed 's|.*":"||; s|"$||')
        RATCHET_CPOD=$(awk '{ while (match($0, /"io\.kubernetes\.cri\.sandbox-(name|namespace)":"[^"]*"/)) {
            s = substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH); v = s; sub(/^.*":"/, "", v); sub(/"$/, "", v)
            if (s ~ /sandbox-name/) n = v; else ns = v } }
          END { if (n != "") print (ns != "" ? ns "/" : "") n }' "$_f" 2>/dev/null)
      fi ;;
    podman)
      _d=${RATCHET_CONTAINERS_ROOT:-/var/lib/containers/storage}
      [ -z "${3:-}" ] || _d=$3/.local/share/containers/storage
      _f=$_d/overlay-containers/containers.json
      [ ! -r "$_f" ] || RATCHET_CNAME=$(ratchet_podman_name "$2" < "$_f") ;;
    cri-o)
      _f=${RATCHET_CONTAINERS_ROOT:-/var/lib/containers/storage}/overlay-containers/$2/userdata/config.json
      if [ -r "$_f" ]; then
        RATCHET_CNAME=$(grep -o '"io.kubernetes.container.name" *: *"[^"]*"' "$_f" 2>/dev/null | head -n 1 | sed 's|"$||; s|.*"||')
        RATCHET_CPOD=$(awk '{ while (match($0, /"io\.kubernetes\.pod\.(name|namespace)" *: *"[^"]*"/)) {
            s = substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH); v = s; sub(/"$/, "", v); sub(/^.*"/, "", v)
            if (s ~ /pod\.name"/) n = v; else ns = v } }
          END { if (n != "") print (ns != "" ? ns "/" : "") n }' "$_f" 2>/dev/null)
      fi ;;
  esac
  # Names as the runtimes allow them: no | or / to break the cache, no blank.
  case "$RATCHET_CNAME" in *[!A-Za-z0-9_.-]*) RATCHET_CNAME='' ;; esac
  case "$RATCHET_CRESTART" in *[!a-z-]*) RATCHET_CRESTART='' ;; esac
  case "$RATCHET_CPOD" in *[!A-Za-z0-9_./-]*|*/*/*) RATCHET_CPOD='' ;; esac
  ratchet_cache_put "$_k" "$RATCHET_CNAME/$RATCHET_CRESTART/$RATCHET_CPOD"
}

# Podman's containers.json (a JSON array of {"id", "names": [...], ...}) on
# stdin: prints the first name of the entry whose "id" is ID; nothing if none.
ratchet_podman_name() { # ID
  RP_ID=$1 awk '{ t = t $0 "\n" }
    END {
      id = "\"" ENVIRON["RP_ID"] "\""
      while ((i = index(t, id)) > 0) {
        pre = substr(t, 1, i - 1); t = substr(t, i + length(id))
        if (pre !~ /"id"[ \t\n]*:[ \t\n]*$/) continue
        j = index(t, "\"id\""); if (j > 0) t = substr(t, 1, j - 1)  # this entry only
        if (match(t, /"names"[ \t\n]*:[ \t\n]*\[[ \t\n]*"[^"]*"/)) { s = substr(t, RSTART, RLENGTH); sub(/"$/, "", s); sub(/^.*"/, "", s); print s }
        exit
      } }'
}

# Sets RATCHET_OWNER to PID's owner field (see header): "-" (the root
# cgroup), "kind=unknown name=FILE" (FILE unreadable: ratchet_cgroup_owner), or
# "kind=K name=N scope=S user=U restart=R id=I" (each but kind left out when
# empty). FILE (a test's) replaces /proc/PID/cgroup.
ratchet_owner() { # PID [CGROUP_FILE]
  local _f _h _o _p _r _u
  RATCHET_OWNER=- _f=${2:-/proc/$1/cgroup} _p=''
  ratchet_cgroup_owner "$_f"
  case $? in
    0) ;;
    2) ratchet_esc_word "$_f"; RATCHET_OWNER="kind=unknown name=$RATCHET_ESC"; return 0 ;;
    *) return 0 ;;
  esac
  _r='' _u=''
  case "$RATCHET_OU" in ''|*[!0-9]*) ;; *) ratchet_uid_name "$RATCHET_OU"; _u=$RATCHET_UNAME ;; esac
  case "$RATCHET_OK" in
    unit) case "$RATCHET_ON" in *.service) ratchet_unit_restart "$RATCHET_OS" "$_u" "$RATCHET_ON" "$RATCHET_OU"; _r=$RATCHET_RESTART ;; esac ;;
    container)
      _h=''  # a rootless container's storage is under its user's home (read once per UID)
      if [ -n "$_u" ]; then
        if ratchet_cache_get "home:$RATCHET_OU"; then _h=$RATCHET_CV
        else
          _h=$(awk -F: -v u="$RATCHET_OU" '$3 == u { print $6; exit }' /etc/passwd 2>/dev/null)
          case "$_h" in *[!A-Za-z0-9_./-]*) _h='' ;; esac  # a cache key: no | or =
          ratchet_cache_put "home:$RATCHET_OU" "$_h"
        fi
      fi
      ratchet_container_names "$RATCHET_OS" "$RATCHET_OI" "$_h"
      RATCHET_ON=$RATCHET_CNAME _r=$RATCHET_CRESTART _p=$RATCHET_CPOD ;;
    pod)
      ratchet_container_names "$RATCHET_OS" "$RATCHET_ON"
      RATCHET_ON=$RATCHET_CPOD ;;
  esac
  _o="kind=$RATCHET_OK"
  ratchet_esc_word "$RATCHET_ON"; [ -z "$RATCHET_ESC" ] || _o="$_o name=$RATCHET_ESC"
  ratchet_esc_word "$RATCHET_OS"; [ -z "$RATCHET_ESC" ] || _o="$_o scope=$RATCHET_ESC"
  ratchet_esc_word "$_u"; [ -z "$RATCHET_ESC" ] || _o="$_o user=$RATCHET_ESC"
  [ -z "$_r" ] || _o="$_o restart=$_r"
  ratchet_esc_word "$RATCHET_OI"; [ -z "$RATCHET_ESC" ] || _o="$_o id=$RATCHET_ESC"
  [ -z "$_p" ] || _o="$_o pod=$_p"  # checked by ratchet_container_names: no blank, no odd byte
  RATCHET_OWNER=$_o
}

# Parses the common options into globals; sets RATCHET_SHIFT to the count used.
#   --user U  --exclude NAME[,NAME...]  --missing-ok  --signal SIG  --wait-ms N  --tree
ratchet_opts() {
  _user='' _ex='' _sig=TERM _wait=0 _tree=0 MISSING_OK=0 RATCHET_SHIFT=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --user) _user=$2; shift 2; RATCHET_SHIFT=$((RATCHET_SHIFT + 2));;
      --exclude) _ex=$2; shift 2; RATCHET_SHIFT=$((RATCHET_SHIFT + 2));;
      --signal) _sig=$2; shift 2; RATCHET_SHIFT=$((RATCHET_SHIFT + 2));;
      --wait-ms) _wait=$2; shift 2; RATCHET_SHIFT=$((RATCHET_SHIFT + 2));;
      --tree) _tree=1; shift; RATCHET_SHIFT=$((RATCHET_SHIFT + 1));;
      --missing-ok) MISSING_OK=1; shift; RATCHET_SHIFT=$((RATCHET_SHIFT + 1));;
      --) RATCHET_SHIFT=$((RATCHET_SHIFT + 1)); return 0;;
      *) return 0;;
    esac
  done
}

# Filters process lines on stdin: drops protected PIDs (saying so on stderr:
# a selection that shrank says why; not with RATCHET_QUIET=1), excluded names
# (matched against comm, which the kernel truncates to 15 bytes, and argv[0]'s
# basename) and, with users, processes of other users.
ratchet_filter() { # USERS(comma-separated) EXCLUDES(comma-separated) [own]
  local _in _kt _own _prot _self
  _in=$(cat)
  [ -n "$_in" ] || return 0
  # ratchet_holders works them out once for its two filters (RATCHET_PROT, RATCHET_KT).
  if [ "${RATCHET_PROT+set}" = set ]; then _prot=$RATCHET_PROT; else _prot=$(ratchet_protected); fi
  if [ "${RATCHET_KT+set}" = set ]; then _kt=$RATCHET_KT; else _kt=$(ratchet_kthreads); fi
  _own=
  if [ "${3:-}" = own ]; then _own=$(ratchet_own_commands); fi
  # shellcheck disable=SC2046  # one PID a word
  _self=$(ratchet_self $(printf '%s\n' "$_in" | cut -f"$RATCHET_COL_PID"))
  printf '%s\n' "$_in" | RU=$1 RX=$2 RP=$_prot RO=$_own RK=$_kt RS=$_self RQ=${RATCHET_QUIET:-0} awk -F '\t' '
    BEGIN { user = ENVIRON["RU"]; ex = ENVIRON["RX"]; prot = ENVIRON["RP"]; q = ENVIRON["RQ"] == 1
            n = split(ex, e, ","); for (i = 1; i <= n; i++) if (e[i] != "") { x[e[i]] = 1; x[substr(e[i], 1, 15)] = 1 }
            k = split(user, us, ","); for (i = 1; i <= k; i++) if (us[i] != "") U[us[i]] = 1
            m = split(prot, p, "\n"); for (i = 1; i <= m; i++) P[p[i]] = 1
            m = split(ENVIRON["RO"], o, "\n"); for (i = 1; i <= m; i++) O[o[i]] = 1
            m = split(ENVIRON["RK"], kt, "\n"); for (i = 1; i <= m; i++) K[kt[i]] = 1
            m = split(ENVIRON["RS"], s, "\n"); for (i = 1; i <= m; i++) { c = index(s[i], " "); if (c) S[substr(s[i], 1, c - 1)] = substr(s[i], c + 1) } }
    { pid = $1; puser = $2; comm = $5; cmd = $6  # the process line (header)
      if (pid == 1) { if (!q) print "ratchet: PID 1 (" comm ") is never selected" > "/dev/stderr"; next }
      if (pid in K) { if (!q) print "ratchet: PID " pid " (" comm ") is a kernel thread: never selected" > "/dev/stderr"; next }
      if (pid in P) { if (!q) print "ratchet: PID " pid " (" comm ") is part of this SSH session (ratchet itself): never selected" > "/dev/stderr"; next }
      if ((pid in S) && S[pid] == "self") { if (!q) print "ratchet: PID " pid " (" comm ") is ratchet'"'"'s own (RATCHET_SELF=1: a session shell, its reader or a watchdog of a ratchet run): never selected" > "/dev/stderr"; next }
      if ((pid in O) || (pid in S)) { if (!q) print "ratchet: PID " pid " (" comm ") runs ratchet host library commands: never selected" > "/dev/stderr"; next }
      if (user != "" && !(puser in U)) next
      a0 = cmd; sub(/ .*/, "", a0); sub(/.*\//, "", a0)
      if ((comm in x) || (a0 in x)) next
      print }'
}

# True for a device every process may hold (null, zero, the random devices,
# the console, ttys, ptys), as c:MAJOR:MINOR: its holders are most of the
# host, so it is never a target by its number.
ratchet_shared_device() { # c:MAJOR:MINOR|b:MAJOR:MINOR
  case "$1" in c:1:[3589]|c:5:[012]|c:4:*|c:13[6-9]:*|c:14[0-3]:*) return 0 ;; esac
  return 1
}

# The device nodes beneath the directory DIR as ratchet_targets' lines (a
# directory target covers them: by their number too, as a device target).
# A shared device (ratchet_shared_device) is covered by its path alone. Exit 5
# when DIR cannot be searched whole, or a node's name holds a newline.
ratchet_dir_nodes() { # DIR
  local _e _l _n _rd _t _id
  _e=$(mktemp "${TMPDIR:-/tmp}/.ratchet-nodes.XXXXXX") || { printf '%s\n' "ratchet: could not check: cannot create a temporary file" >&2; return 5; }
  _l=$(LC_ALL=C find "$1" \( -type c -o -type b \) -exec stat -c "%t:%T$RATCHET_TAB%d:%i$RATCHET_TAB%F$RATCHET_TAB%n" {} + 2>"$_e"; echo .)
  if [ -s "$_e" ]; then
    printf '%s\n' "ratchet: could not check: cannot search all of $1 for device nodes: $(sed -n 1p "$_e")" >&2; rm -f -- "$_e"; return 5
  fi
  rm -f -- "$_e"
  printf '%s\n' "${_l%.}" | while IFS="$RATCHET_TAB" read -r _rd _id _t _n; do
    [ -n "$_rd" ] || continue
    if [ -z "$_n" ]; then printf '%s\n' "ratchet: could not check: a device node under $1 has a newline in its name" >&2; exit 5; fi
    case "$_t" in character*) _t=c ;; block*) _t=b ;; *) continue ;; esac
    _rd=$_t:$((0x${_rd%:*})):$((0x${_rd#*:}))
    ratchet_shared_device "$_rd" && continue
    printf '%s\t%s\t%s\n' "$(ratchet_esc_path "$_n")" "$_id" "$_rd"
  done
}

# Resolves path patterns (globs expanded here, on the host) to canonical paths,
# one per line, %-encoded (any byte may be in a name), a tab, and the file's
# DEV:INODE (decimal st_dev, as stat %d prints it; "-" for a directory, which
# stands for everything beneath it: "DIR/"); for a character or block device,
# a tab and its device number, c:MAJOR:MINOR or b:MAJOR:MINOR (decimal st_rdev).
# From the first component a wildcard matched on, no component is followed
# when it is a symlink: a link planted where a glob looks (/tmp/app-*.sock -> /,
# or /tmp/app-x/sock -> /usr under a matched directory) must not widen a kill.
# A literal path is followed (its writer named it). A target that resolves to
# / or to a top-level directory (/dev, /usr: a whole tree of the system) is
# refused. Exit 2 naming the pattern when one matches nothing
# (unless MISSING_OK=1).
ratchet_targets() {
  local _c _f _found _id _link _oifs _p _pat _r _rd _w
  for _pat in "$@"; do
    _found=0
    # Components of the pattern before the first one with a wildcard, plus one:
    # the first component (as awk -F/ counts, "" before a leading /) not followed.
    _w=0
    case "$_pat" in *[*?[]*) _w=$(RP=$_pat awk 'BEGIN { n = split(ENVIRON["RP"], c, "/"); for (i = 1; i <= n; i++) if (c[i] ~ /[*?[]/) { print i; exit }; print 0 }') ;; esac
    _oifs=$IFS; IFS=
    for _f in $_pat; do
      IFS=$_oifs
      [ -e "$_f" ] || [ -L "$_f" ] || continue
      # `.*` matches `.` and `..` in dash and BusyBox: never the directory
      # itself, never its parent.
      case "$_f" in */.|*/..|.|..) continue ;; esac
      _link=
      if [ "$_w" -gt 0 ]; then
        # Walk from the match up to the first wildcard component, by removing
        # the last component each time (no byte of a name can split this walk).
        _c=$(printf '%s' "$_f" | tr -cd / | wc -c); _c=$((_c + 1)); _p=$_f
        while [ "$_c" -ge "$_w" ]; do
          [ -L "$_p" ] && _link=$_p
          _p=${_p%/*}; _c=$((_c - 1))
        done
      fi
      if [ -n "$_link" ]; then
        printf '%s\n' "ratchet: $_link is a symlink (to $(readlink -- "$_link")) matched by a wildcard of $_pat (or under what one matched): not followed; name it without a wildcard to use it" >&2
        continue
      fi
      [ -e "$_f" ] || continue  # a dangling literal link
      _r=$(readlink -f -- "$_f"; echo .); _r=${_r%"$RATCHET_NL."}  # keeps a trailing newline of a name
      if [ "$_r" = / ]; then
        printf '%s\n' "ratchet: $_f is / (every file on the host): refused as a target" >&2; return 2
      fi
      case "$_r" in /*/*) ;; *) if [ -d "$_r" ]; then
        printf '%s\n' "ratchet: $_f is the top-level directory $_r, a whole tree of the system: refused as a target; name the files or a deeper directory" >&2; return 2
      fi;; esac
      _found=1
      # A file is also named by its device and inode: a holder must hold that
      # very file (not a namesake in another mount namespace, nor a deleted one).
      # A device node is also named by its device number (st_rdev): a holder
      # of any node of that number holds it, whatever path or mount namespace.
      if [ -d "$_r" ]; then printf '%s\t-\n' "$(ratchet_esc_path "${_r%/}/")"; ratchet_dir_nodes "$_r" || return $?
      else
        _id=$(stat -L -c '%d:%i %t:%T' -- "$_r" 2>/dev/null)
        if [ -z "$_id" ]; then
          printf '%s\n' "ratchet: could not check: cannot stat $_f (needs stat -c, and a path this login may search)" >&2; return 5
        fi
        _rd=${_id#* }; _id=${_id%% *}
        if [ -c "$_r" ]; then _rd="$RATCHET_TAB"c:$((0x${_rd%:*})):$((0x${_rd#*:}))
        elif [ -b "$_r" ]; then _rd="$RATCHET_TAB"b:$((0x${_rd%:*})):$((0x${_rd#*:}))
        else _rd=; fi
        if ratchet_shared_device "${_rd#"$RATCHET_TAB"}"; then
          printf '%s\n' "ratchet: $_f is device ${_rd#*:} (null, zero, random, console, tty or pty: nearly every process holds one): refused as a target, it would select most of the host" >&2; return 2
        fi
        printf '%s\t%s%s\n' "$(ratchet_esc_path "$_r")" "$_id" "$_rd"
      fi
    done
    IFS=$_oifs
    if [ "$_found" = 0 ] && [ "${MISSING_OK:-0}" != 1 ]; then
      printf '%s\n' "ratchet: no file matches $_pat (set missing_ok = true if that is expected)" >&2
      return 2
    fi
  done
}

# The one-process gatherer (perl, where the host has it: Debian's and Ubuntu's
# perl-base is Essential): the same raw records as the tools path of
# ratchet_holders, in the same order, to the same files: on stdout the
# descriptor lines of ratchet_fd_links (the main walk, then cwd and root with
# a directory target, then the threads of zombie leaders and the thread tables
# of their own) and then the mapping lines of ratchet_map_files; in TMPDIR
# `status` (ratchet_stats' lines), `errors` and `maps-errors` (find's and
# grep's words for what it could not read), and `cand.pre`: the stat lines
# (stat -L -c '%d:%i %t:%T %f %h %n') of the descriptors it printed, which
# ratchet_match then need not stat again. It decides nothing: a link is
# printed when its %-encoded text is a target's name (or beneath a directory
# target's), as find -lname picks it, or when it is a device of a target's
# type, as find -xtype picks it; which of them hold is ratchet_holders' awk
# and ratchet_match's. Arguments: TMPDIR and 1 to read cwd and root; the
# targets in RATCHET_WANT. (No single quote in it: it is a shell word.)
# shellcheck disable=SC2016  # a perl program
RATCHET_GATHER_PL='
my ($tmp, $lk) = @ARGV;
my (%nm, @dir, @want, $wc, $wb, $all);
for (split /\n/, $ENV{RATCHET_WANT}) {
  my @a = split /\t/, $_, -1;
  next if $a[0] eq "";
  if (defined $a[2] && $a[2] ne "") { $wc = 1 if $a[2] =~ /^c:/; $wb = 1 if $a[2] =~ /^b:/; next }
  $all = 1 if index($a[0], "%") >= 0;
  if ($a[1] eq "-") { push @dir, $a[0]; push @want, $a[0] }
  else { $nm{$a[0]} = 1; (my $i = $a[1]) =~ s/.*://; push @want, " $i " }
}
my $dv = $wc || $wb; my $only = $dv && !@want;
@want = (" /") if $dv || $all;
sub out { open(my $h, ">", "$tmp/" . shift) or die "ratchet: cannot write $tmp\n"; $h }
sub slurp { my $h; open($h, "<", shift) or return ""; local $/; my $t = <$h>; defined $t ? $t : "" }
sub esc { my $s = shift; return $s unless $s =~ /[%\t\n]/; $s =~ s/%/%25/g; $s =~ s/\t/%09/g; $s =~ s/\n/%0A/g; $s }
my ($O, $E, $P);  # where records, find words and stat lines go
sub pre { my ($p, @s) = @_; return unless @s; my $r = $s[6];
  printf $P "%s:%s %x:%x %x %s %s\n", $s[0], $s[1], (($r >> 8) & 0xfff) | (($r >> 32) & ~0xfff),
    ($r & 0xff) | (($r >> 12) & ~0xff), $s[2], $s[3], $p }
sub isdev { my $t = $_[0] & 0170000; ($wc && $t == 0020000) || ($wb && $t == 0060000) }
sub link1 { my ($pid, $p) = @_; my $l;
  if ($dv) { my @s = stat $p;
    unless (@s) { if ($! == 13) { print $E "find: \x27$p\x27: Permission denied\n"; return } }
    if (@s && isdev($s[2])) { $l = readlink $p; print $O "$pid\t", esc(defined $l ? $l : ""), "\t*$p\n"; pre($p, @s); return }
    return if $only }
  $l = readlink $p;
  unless (defined $l) { print $E "find: \x27$p\x27: Permission denied\n" if $! == 13; return }
  my $e = esc($l); my $hit = $nm{$e};
  unless ($hit) { for my $d (@dir) { if (index($e, $d) == 0) { $hit = 1; last } } }
  return unless $hit;
  print $O "$pid\t$e\t$p\n"; pre($p, stat $p) }
sub walk { my ($pid, $d) = @_; my $h;
  unless (opendir $h, $d) { print $E "find: \x27$d\x27: Permission denied\n" if $! == 13; return }
  link1($pid, "$d/$_") for grep { !/^\./ } readdir $h; closedir $h }
my (%seen, %kind);
sub maps { my ($pid, $f, $pre) = @_; my $h;
  unless (open $h, "<", $f) { print $E "grep: $f: Permission denied\n" if $! == 13; return }
  my $t = do { local $/; <$h> }; close $h; return unless defined $t;
  my $ok; for my $w (@want) { if (index($t, $w) >= 0) { $ok = 1; last } } return unless $ok;
  for my $l (split /\n/, $t) {
    $ok = 0; for my $w (@want) { if (index($l, $w) >= 0) { $ok = 1; last } }
    next unless $ok; my $i = index($l, "/"); next if $i < 0;
    my @c = split " ", $l; my $path = substr($l, $i);
    next if $seen{"$f\0$c[3]\0$c[4]\0$path"}++;
    my ($ma, $mi) = map { hex } split /:/, $c[3];
    my $id = (($mi & 0xff) | (($ma & 0xfff) << 8) | (($mi >> 8) << 20) | (($ma >> 12) << 44)) . ":$c[4]";
    $path =~ s/%/%25/g; $path =~ s/\t/%09/g; $path =~ s/\\012/%0A/g;
    if ($pre && !exists $kind{$id}) {
      my $q = index($path, "%") < 0 && $path !~ / \(deleted\)$/ ? "/proc/$pid/root$path" : "/proc/$pid/map_files/$c[0]";
      my @s = stat $q; $kind{$id} = !@s || isdev($s[2]); pre($q, @s) if $kind{$id} }
    next if $only && $pre && !$kind{$id};
    print $O "$pid\t$path\t=$id\t$c[0]\n" } }
sub tasks { my $p = shift; my $h; opendir($h, "/proc/$p/task") or return (); sort grep { /^\d+$/ } readdir $h }
# One share of the processes (worker I): its descriptors, cwd and root, status
# lines and mappings, each to a file of its own, joined below in order.
sub share { my $i = shift; my $S;
  ($O, $E, $P) = (out("w$i.fd"), out("w$i.err"), out("w$i.pre")); walk($_, "/proc/$_/fd") for @_;
  if ($lk) { $O = out("w$i.cwd"); link1($_, "/proc/$_/cwd") for @_; $O = out("w$i.root"); link1($_, "/proc/$_/root") for @_ }
  $S = out("w$i.st");
  for my $pid (@_) { my $t = slurp("/proc/$pid/status"); next unless $t =~ /^PPid:[\t ]*([^\t \n]*)/m; my $pp = $1;
    my $sd = $t =~ /^NSsid:[\t ]*([^\t \n]*)/m ? "$1" : ""; my $st = $t =~ /^State:[\t ]*([^\t \n]*)/m ? "$1" : "";
    my $th = $t =~ /^Threads:[\t ]*([^\t \n]*)/m ? "$1" : 1;
    print $S "$pid $pp $sd $st $th\n" }
  ($O, $E) = (out("w$i.maps"), out("w$i.merr")); maps($_, "/proc/$_/maps", $dv) for @_;
  close $_ or die "ratchet: cannot write $tmp\n" for $O, $E, $P, $S }
opendir(my $ph, "/proc") or die "ratchet: cannot read /proc\n"; my @pids = sort grep { /^\d+$/ } readdir $ph; closedir $ph;
# Shares: one per 300 processes, at most 6 and the CPUs online.
my $cpus = 1; if (slurp("/sys/devices/system/cpu/online") =~ /^([\d,-]+)/) { $cpus = 0; for (split /,/, $1) { $cpus += /(\d+)-(\d+)/ ? $2 - $1 + 1 : 1 } }
my $k = int(@pids / 300) + 1; $k = 6 if $k > 6; $k = $cpus if $k > $cpus; $k = 1 if $k < 1;
my (@kids, $bad);
for my $i (0 .. $k - 1) { my @p = @pids[int($i * @pids / $k) .. int(($i + 1) * @pids / $k) - 1];
  my $kid = $k > 1 ? fork : undef;
  if (defined $kid && !$kid) { share($i, @p); exit 0 }
  if (defined $kid) { push @kids, $kid } else { share($i, @p) } }
for (@kids) { waitpid($_, 0); $bad = 1 if $? } die "ratchet: a /proc reader failed\n" if $bad;
sub join1 { my ($to, $x) = @_; print $to slurp("$tmp/w$_.$x") for 0 .. $k - 1 }
($O, $E, $P) = (*STDOUT, out("errors"), out("cand.pre"));
join1($O, "fd"); if ($lk) { join1($O, "cwd"); join1($O, "root") } join1($E, "err"); join1($P, "pre");
my $S = out("status"); join1($S, "st"); close $S or die "ratchet: cannot write $tmp\n";
my (@z, @t);
for (split /\n/, slurp("$tmp/status")) { my @f = split / /, $_, -1; if ($f[3] eq "Z") { push @z, $f[0] } elsif ($f[4] > 1) { push @t, $f[0] } }
my @zm; my $E0 = $E; $E = out("task-errors");
for my $z (@z) {
  next unless grep { $_ ne $z && slurp("/proc/$z/task/$_/status") =~ /^State:[\t ]*(\S+)/m && $1 ne "Z" && $1 ne "X" } tasks($z);
  walk($z, "/proc/$z/task/$_/fd") for tasks($z); push @zm, $z }
my $counts = ((stat "/proc/self/fd")[7] || 0) > 0;
for my $p (@t) { my $lead = (stat "/proc/$p/fd")[7];
  for my $t (tasks($p)) { next if $t eq $p; my $c = (stat "/proc/$p/task/$t/fd")[7]; next unless defined $c;
    walk($p, "/proc/$p/task/$t/fd") if !$counts || !defined $lead || $c != $lead } }
join1($O, "maps"); $E = out("maps-errors"); join1($E, "merr");
for my $z (@zm) { maps($z, "/proc/$z/task/$_/maps", $dv) for tasks($z) }
close $_ or die "ratchet: cannot write $tmp\n" for *STDOUT, $P, $E, $E0;
'

# Whether ratchet_holders gathers with perl (one process instead of some 20):
# perl on PATH, unless RATCHET_SCAN=tools (the tests run both and compare).
ratchet_perl_scan() { [ "${RATCHET_SCAN:-}" != tools ] && command -v perl >/dev/null 2>&1; }

# Whether this host's find prints link targets (-printf, GNU) and its awk
# splits records at NUL: the fast scan. Else one readlink per descriptor.
ratchet_fast_scan() {
  find /proc/self/fd -maxdepth 0 -printf '' 2>/dev/null &&
    [ "$(printf 'a\000b\000' | awk 'BEGIN { RS = "\0" } END { print NR }' 2>/dev/null)" = 2 ]
}

# With RATCHET_WANT (ratchet_targets' lines), the find test that picks only
# what may be one of the targets, ready for eval: with `lname`, each name as
# a -lname pattern (glob characters escaped; a directory's as "DIR/*"); with
# `samefile`, -samefile of each file target (none for a directory target).
# Device targets are left out (their descriptors are picked by type and
# compared by device number: ratchet_fd_links). The words are single-quoted;
# nothing is printed when no target is left. Exit 1 when a name holds a byte
# the process lines %-encode (%, TAB, newline: then nothing may be left out),
# or (samefile) when a target is a directory.
ratchet_want_expr() { # lname|samefile
  printf '%s\n' "$RATCHET_WANT" | awk -F '\t' -v mode="$1" -v q="'" '$1 != "" && $3 == "" {
    if (index($1, "%") || (mode == "samefile" && $2 == "-")) bad = 1
    s = ""; for (i = 1; i <= length($1); i++) { c = substr($1, i, 1)
      if (mode == "lname" && index("[]*?\\", c)) s = s "\\"
      s = s (c == q ? q "\\" q q : c) }
    if (mode == "lname" && $2 == "-") s = s "*"
    out = out (out == "" ? "" : " -o ") "-" mode " " q s q }
    END { if (bad) exit 1; if (out != "") print out }'
}

# True when RATCHET_WANT holds a character or block device target; RATCHET_XTYPE
# is then the find test that picks a descriptor of that type (`-xtype c`,
# `-xtype b`, or both: each is one stat of the descriptor).
ratchet_want_devices() {
  RATCHET_XTYPE=
  case "$RATCHET_WANT" in *"$RATCHET_TAB"c:*) RATCHET_XTYPE='-xtype c' ;; esac
  case "$RATCHET_WANT" in *"$RATCHET_TAB"b:*) RATCHET_XTYPE="${RATCHET_XTYPE:+$RATCHET_XTYPE -o }-xtype b" ;; esac
  [ -n "$RATCHET_XTYPE" ]
}

# "PID<TAB>%-encoded target<TAB>link" for every link given: the open
# descriptors of fd directories (/proc/PID/fd or /proc/PID/task/TID/fd) and
# the links /proc/PID/cwd and /proc/PID/root themselves (a link given is read
# itself, a directory for what it holds), in any order. A link that cannot
# be read (EACCES: a process with more privileges or capabilities) is named
# on stderr, which the caller keeps (LC_ALL=C: the words are find's).
# With RATCHET_WANT set (ratchet_holders), only the links that may be one of
# those targets: find -lname picks them (so the scan costs about what find's
# walk does); without -printf, find -L -samefile picks the descriptors that
# are a target file, and only those are read with readlink. With a device
# target, every descriptor that is a character or block device comes too,
# its link marked "*" ("PID<TAB>target<TAB>*link"; the target is empty
# without -printf: read only for a holder): ratchet_holders compares its
# device number (stat, in batches).
ratchet_fd_links() { # FD_DIR_OR_LINK...
  local _d _dp _dv _e _l _m _rd _t
  [ $# -gt 0 ] || return 0
  _dv=
  if [ -n "${RATCHET_WANT:-}" ] && ratchet_want_devices; then _dv=1; fi
  if ratchet_fast_scan; then
    # A link ends in NUL: no byte of a name can forge a record.
    { if [ -n "${RATCHET_WANT:-}" ] && _e=${RATCHET_LNAME-$(ratchet_want_expr lname)}; then
        if [ -n "$_dv" ]; then
          _e="\\( $RATCHET_XTYPE \\) -printf '*%p\\t%l\\0'${_e:+ -o \\( $_e \\) -printf '%p\\t%l\\0'}"
        else _e="\\( $_e \\) -printf '%p\\t%l\\0'"; fi
        eval "LC_ALL=C find \"\$@\" -maxdepth 1 -type l \\( $_e \\)"
      elif [ -n "$_dv" ]; then
        # shellcheck disable=SC2086  # the find test, one word each
        LC_ALL=C find "$@" -maxdepth 1 -type l \( \( $RATCHET_XTYPE \) -printf '*%p\t%l\0' -o -printf '%p\t%l\0' \)
      else LC_ALL=C find "$@" -maxdepth 1 -type l -printf '%p\t%l\0'; fi; } |
      awk 'BEGIN { RS = "\0" }
        { c = index($0, "\t"); d = substr($0, 1, c - 1); l = substr($0, c + 1); m = ""
          if (substr(d, 1, 1) == "*") { m = "*"; d = substr(d, 2) }
          split(d, q, "/"); gsub(/%/, "%25", l); gsub(/\t/, "%09", l); gsub(/\n/, "%0A", l)
          print q[3] "\t" l "\t" m d }'
    return 0
  fi
  _rd=1
  if [ -n "${RATCHET_WANT:-}" ] && _e=$(ratchet_want_expr samefile); then
    _rd=
    # File targets only: the descriptors that are one of them (device and
    # inode, through the link), or a device, one a line (proc paths).
    [ -z "$_dv" ] || _e="$(printf '%s\n' "$RATCHET_XTYPE" | sed 's/-xtype/-type/g')${_e:+ -o $_e}"
    _d=
    [ -z "$_e" ] || _d=$(eval "LC_ALL=C find -L \"\$@\" -mindepth 1 -maxdepth 1 \\( $_e \\) -print")
    IFS=$RATCHET_NL; set -f
    # shellcheck disable=SC2086  # one path a line
    set -- $_d
    set +f; unset IFS
  fi
  for _d in "$@"; do
    if [ -L "$_d" ]; then set -- "$_d"; else set -- "$_d"/*; fi
    _dp=${_d#/proc/}; _dp=${_dp%%/*}
    for _l in "$@"; do
      [ -L "$_l" ] || continue
      _m=
      if [ -n "$_dv" ] && { [ -c "$_l" ] || [ -b "$_l" ]; }; then
        # its name read only where every link is (a directory target)
        [ -n "$_rd" ] || { printf '%s\t\t*%s\n' "$_dp" "$_l"; continue; }
        _m='*'
      fi
      if ! _t=$(readlink -- "$_l" 2>/dev/null; echo .); then :; fi
      _t=${_t%"$RATCHET_NL."}
      if [ "$_t" = . ]; then
        [ -e "/proc/$_dp" ] && printf '%s\n' "find: '$_l': Permission denied" >&2
        continue
      fi
      case "$_t" in *%*|*"$RATCHET_TAB"*|*"$RATCHET_NL"*) _t=$(ratchet_esc "$_t");; esac
      printf '%s\t%s\t%s%s\n' "$_dp" "$_t" "$_m" "$_l"
    done
  done
}

# "PID<TAB>%-encoded path<TAB>=DEV:INODE<TAB>START-END" for every file
# mapping of the maps files given; the device and inode are the mapping's own
# (maps columns 4 and 5: major:minor in hex, turned into st_dev as stat %d
# prints it), so that a name the kernel cannot escape unambiguously (a newline
# is \012, and so is a literal backslash-012), a deleted file ("PATH
# (deleted)") or a hard link still names one file; START-END names it under
# /proc/PID/map_files/. A maps file that cannot be read is named on stderr
# (LC_ALL=C: grep's words). With RATCHET_WANT set, only the lines that may
# hold one of those targets (grep -F): a file target's inode number as a
# word, a directory target's name; every file mapping with a device target
# (a node of its number may have any name and inode). A process maps a file
# many times: one line per process and file.
ratchet_map_files() { # MAPS...
  local _want
  _want=' /'
  if [ -n "${RATCHET_WANT:-}" ] && ! ratchet_want_devices && { [ "${RATCHET_LNAME+set}" = set ] || ratchet_want_expr lname >/dev/null; }; then
    _want=$(printf '%s\n' "$RATCHET_WANT" | awk -F '\t' '$1 != "" { if ($2 == "-") print $1; else { sub(/.*:/, "", $2); print " " $2 " " } }')
  fi
  { LC_ALL=C grep -H -F -e "$_want" "$@" 2>&1 >&3 | grep 'Permission denied' >&2; } 3>&1 | awk '
  function hex(s,   i, n, c) { n = 0; s = tolower(s); for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)); n = n * 16 + c - 1 }; return n }
  { c = index($0, ":"); f = substr($0, 1, c - 1); l = substr($0, c + 1); i = index(l, "/")
    if (i > 0) { split(l, col, " "); l = substr(l, i); if (seen[f, col[4], col[5], l]++) next
                 split(f, q, "/"); split(col[4], mm, ":")
                 if (!((col[4]) in dv)) { ma = hex(mm[1]); mi = hex(mm[2])
                   dv[col[4]] = sprintf("%.0f", (mi % 256) + (ma % 4096) * 256 + int(mi / 256) * 1048576 + int(ma / 4096) * 17592186044416) }
                 gsub(/%/, "%25", l); gsub(/\t/, "%09", l)
                 gsub(/\\012/, "%0A", l); printf "%s\t%s\t=%s:%s\t%s\n", q[3], l, dv[col[4]], col[5], col[1] } }'
}

# Why a /proc scan by this login cannot see every process: /proc mounted with
# hidepid=2 (invisible) or 4 (ptraceable) hides other users' processes from
# anyone but root. Prints the reason and returns 1 when blind; else 0.
ratchet_proc_visible() {
  local _hp
  [ "$(ratchet_euid self)" = 0 ] && return 0
  _hp=$(awk '$5 == "/proc" { for (i = 7; i <= NF; i++) if ($i == "-") { print $(i + 3); exit } }' /proc/self/mountinfo 2>/dev/null |
        tr , '\n' | sed -n 's/^hidepid=//p' | tail -n 1)
  case "$_hp" in
    2|invisible|4|ptraceable)
      printf '%s\n' "/proc is mounted with hidepid=$_hp: other users' processes are invisible to $(id -un)"; return 1 ;;
  esac
  return 0
}

# Processes whose open files this login cannot read (not root, no become): the
# PIDs whose /proc/PID/fd is not readable, and the PIDs given (a descriptor,
# maps, cwd or root the scan was refused: a process with more privileges or
# capabilities), leaving out PID 1 (never selected), kernel threads (PID 2 and
# its children: they hold no user files) and zombies (whose files closed at
# exit), as process lines with no files.
# --walked: the PIDs given are all there are (a walk of every /proc/PID/fd
# named each one it could not read in its errors): no second pass over /proc.
ratchet_unreadable() { # [--walked] [PID...]
  local _d _k _kt _st _up _ur _w _x
  _w=
  if [ "${1:-}" = --walked ]; then _w=1; shift; fi
  _ur=$([ -n "$_w" ] || for _d in /proc/[0-9]*; do
          [ "$_d" = /proc/1 ] && continue  # never selected (a container's may be unreadable even to root)
          { [ -r "$_d/fd" ] && [ -x "$_d/fd" ]; } || printf '%s\n' "${_d#/proc/}"
        done; for _d in "$@"; do printf '%s\n' "$_d"; done)
  [ -n "$_ur" ] || return 0
  if [ "${RATCHET_KT+set}" = set ]; then _kt=$RATCHET_KT; else _kt=$(ratchet_kthreads); fi
  printf '%s\n' "$_ur" | sort -un | RK=$_kt awk 'BEGIN { n = split(ENVIRON["RK"], k, "\n"); for (i = 1; i <= n; i++) K[k[i]] = 1 }
    $1 != "" && $1 != 1 && !($1 in K)' | while read -r _up; do
      # A zombie holds no files (they closed at its exit), yet its fd directory
      # is root's: not unreadable, unless a thread of its group still runs.
      _st=''
      { while read -r _k _st _x; do [ "$_k" = State: ] && break; _st=''; done < "/proc/$_up/status"; } 2>/dev/null
      case "$_st" in Z|X) ratchet_live_threads "$_up" || continue ;; esac
      ratchet_describe "$_up" ""
    done
}

# The holds among ratchet_holders' candidates in FILE (targets in
# RATCHET_WANT), tab-separated, a tag first: H PID TARGET LINK (held; LINK
# the descriptor, "-" for a mapping), V PID TARGET DEV:INODE LINK (a
# descriptor named as a file target: held when the link's device and inode
# are the target's), D PID NAME LINK (a descriptor that is a device node:
# held when its type and device number are a device target's), M/m PID NAME
# DEV:INODE START-END (a mapping; M: the first of that file, whose node is
# stat-ed through /proc/PID/root, or through /proc/PID/map_files/START-END
# when its name cannot be followed: deleted, or %-encoded; a device node of a
# target's number holds it for every m of that file). Every descriptor and
# mapped node is stat-ed in batches (never a process per descriptor); stat's
# words go to ERRFILE (LC_ALL=C: "Permission denied" and "Operation not
# permitted", map_files to a login that is not root, mark a process this scan
# could not see). A third argument other than 3 says nothing is to be stat-ed
# (no V, D or M).
# Prints "PID<TAB>target" per hold; for a device held through a node that is
# not the target itself "N<TAB>PID<TAB>target<TAB>node<TAB>link<TAB>MAJ:MIN"
# and a seventh field "deleted" when that node has no name left (node:
# %-encoded as the process names it, without " (deleted)", "-" when not read
# yet; link: the descriptor, "-" for a mapping); for a hold through a thread's
# own descriptor table (LINK under /proc/PID/task/TID/) "T<TAB>PID<TAB>TID<TAB>target".
ratchet_match() { # FILE ERRFILE [3: something to stat]
  local _x
  _x=0
  : > "$1.st"; : >> "$1.pre"
  if [ "${3:-3}" = 3 ]; then
    # (The kernel's own shared-memory files, memfd, SysV and /dev/zero mappings,
    # are regular files, never a device node: not stat-ed by a login that is
    # not root, to whom map_files is closed.) A path FILE.pre has is not stat-ed again.
    awk -F '\t' -v pre="$1.pre" -v root="$([ "$(ratchet_euid self)" = 0 ] && echo 1)" '
      FILENAME == pre { split($0, w, " "); have[substr($0, length(w[1]) + length(w[2]) + length(w[3]) + length(w[4]) + 5)] = 1; next }
      function out(p) { if (!(p in have)) print p }
      $1 == "V" { out($5) } $1 == "D" { out($4) }
      $1 == "M" { if (index($3, "%") || $3 ~ / \(deleted\)$/) {
                    if (root || $3 !~ /^\/(memfd:|SYSV[0-9a-f]+ \(deleted\)$|dev\/zero \(deleted\)$)/) out("/proc/" $2 "/map_files/" $5) }
                  else out("/proc/" $2 "/root" $3) }' "$1.pre" "$1" > "$1.ls"
    [ ! -s "$1.ls" ] || { tr '\n' '\000' < "$1.ls" | LC_ALL=C xargs -0 -r stat -L -c '%d:%i %t:%T %f %h %n' 2>"$2" > "$1.st"; }
    _x=$?
  fi
  # 123: a stat that found a file gone or refused (its words are in ERRFILE);
  # anything else (127: no xargs; 1: an xargs without -0 or -r) and the
  # descriptors may not all have been compared.
  if [ "$_x" != 0 ] && [ "$_x" != 123 ]; then
    printf '%s\n' "ratchet: could not check: needs xargs and stat -c (findutils and coreutils, or BusyBox) on the host (xargs exited $_x)" >&2
    return 5
  fi
  RT=$RATCHET_WANT awk -F '\t' -v st="$1.st" -v pre="$1.pre" '
    function hex(s,   i, n) { n = 0; s = tolower(s); for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return n }
    BEGIN { n = split(ENVIRON["RT"], t, "\n")
            for (i = 1; i <= n; i++) { split(t[i], a, "\t"); if (a[3] != "") { dev[a[3]] = a[1]; tid[a[1]] = a[2] } } }
    # the thread of a hold through /proc/PID/task/TID/fd/N
    function task(pid, link, g,   q) { sub(/^\*/, "", link); split(link, q, "/")
      if (q[4] == "task" && q[5] != "") print "T\t" pid "\t" q[5] "\t" g }
    FILENAME == st || FILENAME == pre { split($0, w, " "); p = substr($0, length(w[1]) + length(w[2]) + length(w[3]) + length(w[4]) + 5)
      split(w[2], r, ":"); m = int(hex(w[3]) / 4096)  # the file type: 2 character, 6 block device
      ID[p] = w[1]; L[p] = w[4]; K[p] = (m == 2 ? "c" : m == 6 ? "b" : "-") ":" hex(r[1]) ":" hex(r[2]); next }
    $1 == "H" { print $2 "\t" $3; task($2, $4, $3); next }
    $1 == "V" { if (ID[$5] == $4) { print $2 "\t" $3; task($2, $5, $3) }; next }
    $1 == "D" { p = $4; if (!(p in K) || !(K[p] in dev)) next; g = dev[K[p]]; print $2 "\t" g; task($2, p, g)
                if (ID[p] != tid[g]) { n = ($3 == "" ? "-" : $3); x = ""
                  if (L[p] == 0) { sub(/ \(deleted\)$/, "", n); x = "\tdeleted" }
                  print "N\t" $2 "\t" g "\t" n "\t" p "\t" substr(K[p], 3) x }; next }
    $1 == "M" { p = "/proc/" $2 "/root" $3; if (!(p in K)) p = "/proc/" $2 "/map_files/" $5
                if ((p in K) && ID[p] == $4 && (K[p] in dev)) { good[$4] = K[p]; gone[$4] = (L[p] == 0) } }
    ($1 == "M" || $1 == "m") && ($4 in good) { g = dev[good[$4]]; print $2 "\t" g; n = $3; x = ""
                if (gone[$4]) { sub(/ \(deleted\)$/, "", n); x = "\tdeleted" }
                print "N\t" $2 "\t" g "\t" n "\t-\t" substr(good[$4], 3) x }' "$1.pre" "$1.st" "$1"
}

# The N lines of ratchet_match on stdin as node lines:
# "node<TAB>PID<TAB>target<TAB>node<TAB>MOUNT_NS<TAB>MAJ:MIN" (target and node
# %-encoded; MOUNT_NS the inode of /proc/PID/ns/mnt, "-" when it is this
# scan's own, "?" when it cannot be read), and a seventh field "deleted" when
# the node has no name left (its name then as it was, without " (deleted)").
# A node not named yet (a scan without find -printf) is read with readlink,
# one per holder's node.
ratchet_node_lines() {
  local _d _g _l _n _ns _p _r _x
  _r=$(grep "^N$RATCHET_TAB") || return 0
  _ns=$(printf '%s\n' "$_r" | cut -f2 | sort -un | sed 's|.*|/proc/&/ns/mnt|' |
        { cat; printf '/proc/%s/ns/mnt\n' "$$"; } | xargs stat -L -c '%i %n' 2>/dev/null)
  printf '%s\n' "$_r" | awk -F '\t' '!seen[$2, $3, $4, $6]++' | while IFS="$RATCHET_TAB" read -r _x _p _g _n _l _x _d; do
    if [ "$_n" = - ] && [ "$_l" != - ]; then
      _n=$(readlink -- "$_l" 2>/dev/null; echo .); _n=${_n%"$RATCHET_NL."}
      [ -z "$_d" ] || _n=${_n% (deleted)}
      _n=$(ratchet_esc_path "$_n")
    fi
    printf 'node\t%s\t%s\t%s\t%s\t%s%s\n' "$_p" "$_g" "$_n" "$(printf '%s\n' "$_ns" | awk -v p="/proc/$_p/ns/mnt" -v me="/proc/$$/ns/mnt" '
      $2 == me { m = $1 } $2 == p { n = $1 } END { print (n == "" ? "?" : n == m ? "-" : n) }')" "$_x" "${_d:+$RATCHET_TAB$_d}"
  done
}

# Who holds the files: scans /proc/*/fd, /proc/*/maps and each process's cwd
# and root (no fuser), and the threads' own under /proc/PID/task/ where a
# thread-group leader has exited. A file target is held only through that very
# file (same device and inode: never a namesake in another mount namespace, a
# deleted file, or a name the kernel escapes ambiguously); a directory target
# covers the paths beneath it. Prints one process line per holder with every
# held target. Fails closed: when processes that the filters would keep have
# open files this login cannot read, their holders are still printed, and the
# reason goes to stderr as "ratchet: could not check: ..." with exit 5. The
# login user's own processes that are not dumpable (another SSH session of the
# same user: real, effective and saved UID all the login user's) are named in
# a warning instead.
ratchet_holders() { # USER EXCLUDES PATTERN...
  local _blind _denied _errf _ex _fdd _fl _id _kept _lk _me _mine _mp _mt _nodes _other _own _p _pairs _tasks _tg _tmp _user _why _x _zp
  # One /proc/*/status snapshot serves the zombie leaders, the protected PIDs
  # and the kernel threads; the scan prints only links and mappings that may
  # be a target (RATCHET_WANT).
  local RATCHET_SNAP_FILE RATCHET_PROT RATCHET_KT RATCHET_WANT RATCHET_LNAME
  unset RATCHET_PROT RATCHET_KT RATCHET_LNAME
  RATCHET_SNAP_FILE='' RATCHET_WANT=''
  _user=$1 _ex=$2; shift 2
  _tg=$(ratchet_targets "$@"); _id=$?
  [ "$_id" = 0 ] || return "$_id"  # 2: no target; 5: one that could not be looked at
  [ -n "$_tg" ] || return 0
  # Hidden processes matter unless the user filter names the login user alone.
  if ! _why=$(ratchet_proc_visible) && [ "$_user" != "$(id -un)" ]; then
    printf '%s\n' "ratchet: could not check: $_why; run as root or set become = true" >&2
    return 5
  fi
  # (A file target was stat-ed already: stat -c is there.)
  case "$_tg" in *"$RATCHET_TAB"[0-9]*) ;; *)
    stat -L -c %i / >/dev/null 2>&1 || { printf '%s\n' "ratchet: could not check: needs stat -c (GNU coreutils or BusyBox) on the host" >&2; return 5; } ;;
  esac
  _tmp=$(mktemp -d "${TMPDIR:-/tmp}/.ratchet-scan.XXXXXX") || { printf '%s\n' "ratchet: could not check: cannot create a temporary directory" >&2; return 5; }
  _errf=$_tmp/errors
  RATCHET_WANT=$_tg
  # cwd and root are directories: read only for a directory target.
  _lk=''
  case "$_tg$RATCHET_NL" in *"$RATCHET_TAB-$RATCHET_NL"*) _lk=1 ;; esac
  # With perl, one process gathers the records (RATCHET_GATHER_PL; one that
  # failed leaves a mark: "could not check", never "free"). Else the mappings
  # and the /proc/*/status snapshot are read while find walks the
  # descriptors (each its own file); then, from the snapshot, the threads of
  # zombie leaders (Z: their files are listed under /proc/PID/task/ only) and
  # the threads of multi-threaded processes (T) with a descriptor table of
  # their own are walked (their maps are their leader's but a zombie's).
  # shellcheck disable=SC2086  # the task globs expand here
  { if ratchet_perl_scan; then
      RATCHET_WANT=$_tg perl -e "$RATCHET_GATHER_PL" -- "$_tmp" "$_lk" || : > "$_tmp/gather-failed"
    else
    # The find test of the names, worked out once (unset: a name the test cannot hold).
    if _x=$(ratchet_want_expr lname); then RATCHET_LNAME=$_x; fi
    ratchet_map_files /proc/[0-9]*/maps > "$_tmp/maps" 2>"$_tmp/maps-errors" &
    ( RATCHET_SNAP_FILE=''; ratchet_stats > "$_tmp/status" ) &
    if [ -n "$_lk" ]; then ratchet_fd_links /proc/[0-9]*/fd /proc/[0-9]*/cwd /proc/[0-9]*/root
    else ratchet_fd_links /proc/[0-9]*/fd; fi 2>"$_errf"
    wait
    _fdd='' _mp='' _mt=''
    # shellcheck disable=SC2013  # one word a line
    # (in the order of their PIDs' text, as the perl gatherer walks them)
    for _zp in $(awk '$4 == "Z" { print "Z" $1; next } $5 > 1 { print "T" $1 }' "$_tmp/status" | LC_ALL=C sort); do
      case "$_zp" in
        T*) _mt="$_mt ${_zp#T}" ;;
        *) _zp=${_zp#Z}; ratchet_live_threads "$_zp" || continue
           _fdd="$_fdd /proc/$_zp/task/[0-9]*/fd"; _mp="$_mp /proc/$_zp/task/[0-9]*/maps" ;;
      esac
    done
    [ -z "$_mt" ] || _fdd="$_fdd $(ratchet_task_tables $_mt)"
    # (A thread's table this login may not read belongs to a process whose
    # own /proc/PID/fd it may not read either: counted from the walk above.
    # A thread that exits while it is walked is refused: not counted.)
    [ -z "${_fdd#"${_fdd%%[! ]*}"}" ] || ratchet_fd_links $_fdd 2>"$_tmp/task-errors"
    [ -z "$_mp" ] || ratchet_map_files $_mp >> "$_tmp/maps" 2>>"$_tmp/maps-errors"
    cat "$_tmp/maps"
    fi; } | RT=$_tg awk -F '\t' '
    BEGIN { n = split(ENVIRON["RT"], t, "\n")
            for (i = 1; i <= n; i++) { if (t[i] == "") continue; split(t[i], a, "\t")
              if (a[1] ~ /\/$/) d[a[1]] = 1; else if (a[3] != "") { dv[a[2]] = a[1]; nd++ } else { f[a[1]] = a[2]; fid[a[2]] = a[1] } } }
    { pid = $1; name = $2; via = $3; k = substr(via, 1, 1)
      if (pid !~ /^[0-9]+$/) next
      if (k == "*") { print "D\t" pid "\t" name "\t" substr(via, 2); st = 1 }
      if (k == "=") {
        # a mapping carries its own device:inode (whatever its name: a hard
        # link, a deleted one); a descriptor is stat-ed later
        id = substr(via, 2); via = "-"
        if (id in dv) { print "H\t" pid "\t" dv[id] "\t-"; next }
        if (id in fid) { print "H\t" pid "\t" fid[id] "\t-"; next }
        if (nd && !seen[pid, id]++) { print (rep[id]++ ? "m" : "M") "\t" pid "\t" name "\t" id "\t" $4; st = 1 }
      } else if (k != "*" && (name in f)) { print "V\t" pid "\t" name "\t" f[name] "\t" via; st = 1; next }
      for (k in d) if (index(name, k) == 1) { print "H\t" pid "\t" name "\t" via; break } }
    END { exit st ? 3 : 0 }' > "$_tmp/cand"  # 3: something to stat
  _x=$?
  if [ -e "$_tmp/gather-failed" ]; then
    printf '%s\n' "ratchet: could not check: the /proc scan (perl) failed; RATCHET_SCAN=tools uses the POSIX tools instead" >&2
    rm -rf -- "$_tmp"; return 5
  fi
  RATCHET_SNAP_FILE=$_tmp/status
  if [ ! -s "$_tmp/cand" ]; then : > "$_tmp/held"
  elif ! ratchet_match "$_tmp/cand" "$_tmp/stat-errors" "$_x" > "$_tmp/held"; then rm -rf -- "$_tmp"; return 5; fi
  # exit 3: a device held through another node
  # exit 3: a device held through another node; 4: a hold through a thread's
  # own descriptor table; 7: both.
  _pairs=
  [ ! -s "$_tmp/held" ] || _pairs=$(awk -F '\t' '$1 == "N" { n = 3; next } $1 == "T" { t = 4; next } !seen[$1, $2]++ { if ($1 in files) files[$1] = files[$1] "\t" $2; else files[$1] = $2 }
      END { for (p in files) print p "\t" files[p]; exit n + t }' "$_tmp/held")
  _x=$? _nodes=
  case "$_x" in 3|7) _nodes=$(ratchet_node_lines < "$_tmp/held") ;; esac
  case "$_x" in 4|7)  # "task<TAB>PID<TAB>TID<TAB>target"
    _tasks=$(awk -F '\t' '$1 == "T" && !seen[$2, $3, $4]++ { print "task\t" $2 "\t" $3 "\t" $4 }' "$_tmp/held")
    _nodes=${_nodes:+$_nodes$RATCHET_NL}$_tasks ;;
  esac
  : >> "$_tmp/stat-errors"
  # (PID 1 is never selected, nor counted: a container's may be unreadable even to root.)
  # (A PID may come more than once: ratchet_unreadable sorts them.)
  _denied=
  [ ! -s "$_errf" ] && [ ! -s "$_tmp/maps-errors" ] && [ ! -s "$_tmp/stat-errors" ] || _denied=$(sed -n -e '\|/proc/1/|d' -e 's|.*/proc/\([0-9][0-9]*\)/.*Permission denied.*|\1|p' -e 's|.*/proc/\([0-9][0-9]*\)/map_files/.*Operation not permitted.*|\1|p' "$_errf" "$_tmp/maps-errors" "$_tmp/stat-errors")
  RATCHET_WANT=''
  # Needed by the filters only when something was seen (else ratchet_unreadable reads its own).
  if [ -n "$_pairs$_denied" ]; then ratchet_prot_kt; fi
  rm -rf -- "$_tmp" 2>/dev/null
  RATCHET_SNAP_FILE=''
  # The clock for the process lines, once for every holder described below.
  if [ -n "$_pairs$_denied" ]; then RATCHET_HZ=${RATCHET_HZ:-$(ratchet_hz)} RATCHET_BT=${RATCHET_BT:-$(ratchet_btime)}; fi
  if [ -n "$_pairs" ]; then
    _kept=$(printf '%s\n' "$_pairs" | sort -n | while IFS="$RATCHET_TAB" read -r _p _fl; do
      ratchet_describe "$_p" "$_fl"
    done | ratchet_filter "$_user" "$_ex")
    if [ -n "$_kept" ]; then
      printf '%s\n' "$_kept"
      # The node lines of the holders the filters kept.
      [ -z "$_nodes" ] || printf '%s\n' "$_kept" | RN=$_nodes awk -F '\t' '{ pid = $1; k[pid] = 1 }
        END { n = split(ENVIRON["RN"], l, "\n"); for (i = 1; i <= n; i++) { split(l[i], f, "\t"); if (f[2] in k) print l[i] } }'
    fi
  fi
  # shellcheck disable=SC2086  # one PID a word
  _blind=$(ratchet_unreadable --walked $_denied)
  [ -n "$_blind" ] || return 0
  _blind=$(printf '%s\n' "$_blind" | RATCHET_QUIET=1 ratchet_filter "$_user" "$_ex")
  [ -n "$_blind" ] || return 0
  _me=$(id -un)
  # Own and not dumpable: real, effective and saved UID all the login user's,
  # and /proc/PID/fd root's (the kernel's sign of a process that is not
  # dumpable; one that is merely more capable keeps its owner and is counted).
  # Not /proc/PID itself: Linux gives that directory the effective UID
  # whatever the dumpable flag (seen: the sshd of another SSH session).
  _own=$(printf '%s\n' "$_blind" | cut -f"$RATCHET_COL_PID" | while read -r _p; do
           [ "$(stat -c %u "/proc/$_p/fd" 2>/dev/null)" = 0 ] || continue
           awk -v me="$(id -u)" -v p="$_p" '$1 == "Uid:" { if ($2 == me && $3 == me && $4 == me) print p; exit }' "/proc/$_p/status" 2>/dev/null
         done)
  _mine=$(printf '%s\n' "$_blind" | RO=$_own awk -F '\t' 'BEGIN { n = split(ENVIRON["RO"], o, "\n"); for (i = 1; i <= n; i++) O[o[i]] = 1 }
    { pid = $1; comm = $5 } pid in O { printf "%s%s (%s)", (m++ ? ", " : ""), pid, comm }')
  _other=$(printf '%s\n' "$_blind" | RO=$_own RM=$_me awk -F '\t' 'BEGIN { n = split(ENVIRON["RO"], o, "\n"); for (i = 1; i <= n; i++) O[o[i]] = 1 }
    { pid = $1; puser = $2 }
    !(pid in O) { k++; if (!(puser in w)) { w[puser] = 1; ws = ws (ws == "" ? "" : ", ") puser } }
    END { if (k) printf "%d process%s open files are unreadable as %s (owners: %s)", k, (k == 1 ? "'"'"'s" : "es'"'"'"), ENVIRON["RM"], ws }')
  if [ -n "$_mine" ]; then
    printf '%s\n' "ratchet: warning: processes of $_me that are not dumpable (such as another SSH session of $_me) have open files $_me cannot read; not counted: PID $_mine" >&2
  fi
  [ -n "$_other" ] || return 0
  printf '%s\n' "ratchet: could not check: $_other; run as root or set become = true" >&2
  return 5
}

# Descendants (by parent PID) of the PIDs on stdin, and members of the session
# of any PID that leads its own session; printed one PID a line, roots excluded.
ratchet_tree() {
  local _roots
  _roots=$(cat)
  ratchet_stats | RR=$_roots awk '
    { pp[$1] = $2; sid[$1] = $3; pid[$1] = 1 }
    END { n = split(ENVIRON["RR"], r, "\n"); for (i = 1; i <= n; i++) if (r[i] != "") { in_[r[i]] = 1; q[++qt] = r[i]; if (sid[r[i]] == r[i]) lead[r[i]] = 1 }
          for (p in pid) if ((sid[p] in lead) && !(p in in_)) { in_[p] = 1; out[p] = 1; q[++qt] = p }
          while (qh < qt) { c = q[++qh]; for (p in pid) if (pp[p] == c && !(p in in_)) { in_[p] = 1; out[p] = 1; q[++qt] = p } }
          for (p in out) print p }'
}

# Selects processes for a kill: prints process lines. Selector: pid N |
# pid_file F | pattern RE | holders_of PATTERN... Exit 3 (message on stderr)
# when a live PID started after its PID file was written: not the process it names.
ratchet_select() { # USER EXCLUDES SELECTOR ARGS...
  local _a _d _ex _g _line _mt _n _p _pids _prc _se _sel _user
  _user=$1 _ex=$2 _sel=$3; shift 3
  case "$_sel" in
    pid)
      ratchet_describe "$1" "" | ratchet_filter "$_user" "$_ex" ;;
    pid_file)
      # One PID, surrounded by blanks at most: "4 242" or "4\n242" is not PID
      # 4242. Leading zeros are dropped ("028780" is 28780); more than 64
      # bytes, or a number above Linux's largest pid_max (2^22), is not a PID
      # file. Missing, empty or blank: nothing to kill.
      # NUL becomes `?` (the shell would drop it and join the digits around it).
      _p=$(head -c 65 -- "$1" 2>/dev/null | tr '\t\r\000' '  ?' | sed 's/^ *//; s/ *$//; /^$/d')
      if [ -z "$_p" ]; then printf '%s\n' "ratchet: $1 is missing or empty: nothing to kill" >&2; return 0; fi
      _n=$(printf '%s' "$_p" | sed 's/^0*//')
      case "$_p" in *[!0-9]*) _n=;; esac
      [ "$(head -c 65 -- "$1" | wc -c)" -le 64 ] || _n=
      case "$_n" in ????????*) _n=;; esac  # 8 digits or more
      if [ -n "$_n" ] && [ "$_n" -gt 4194304 ]; then _n=; fi
      if [ -z "$_n" ]; then
        _p=$(printf '%s\n' "$_p" | head -c 64 | awk 'NR > 1 { printf "\\n" } { printf "%s", $0 }')
        printf '%s\n' "ratchet: $1 does not hold a PID (\"$_p\")" >&2; return 4
      fi
      _p=$_n
      if [ ! -d "/proc/$_p" ] || ! ratchet_same_alive "$_p" "$(ratchet_start "$_p")"; then
        printf '%s\n' "ratchet: PID $_p from $1 is not running: nothing to kill" >&2; return 0
      fi
      _line=$(ratchet_describe "$_p" "")
      _mt=$(date -r "$1" +%s 2>/dev/null || stat -L -c %Y -- "$1")  # the file a symlink names, not the link
      _se=$(printf '%s\n' "$_line" | cut -f"$RATCHET_COL_EPOCH")
      if awk -v s="$_se" -v m="$_mt" 'BEGIN{exit !(s > m + 2)}'; then
        printf '%s\n' "ratchet: PID $_p started at $_se, after $1 was written at $_mt: a recycled PID, not the process the file names; nothing killed" >&2
        return 3
      fi
      printf '%s\n' "$_line" | ratchet_filter "$_user" "$_ex" ;;
    pattern)  # extended regex over the command line (pgrep -f; /proc scan without procps)
      if command -v pgrep >/dev/null 2>&1; then
        _pids=$(pgrep -f -- "$1"); _prc=$?
      else
        _pids=$(for _d in /proc/[0-9]*; do
          _a=$(tr '\000' ' ' 2>/dev/null < "$_d/cmdline") || continue
          _a=${_a% }  # argv ends in NUL: no trailing space, as pgrep -f matches it
          printf '%s\n' "$_a" | grep -Eq -- "$1"; _g=$?
          [ "$_g" -le 1 ] || exit 2
          [ "$_g" = 0 ] && printf '%s\n' "${_d#/proc/}"
        done); _prc=$?
      fi
      if [ "$_prc" -gt 1 ]; then printf '%s\n' "ratchet: pattern $1 is not a valid extended regex" >&2; return 4; fi
      for _p in $_pids; do ratchet_describe "$_p" ""; done | ratchet_filter "$_user" "$_ex" own ;;
    holders_of)
      ratchet_holders "$_user" "$_ex" "$@" ;;
    *) printf '%s\n' "ratchet: unknown selector $_sel" >&2; return 4 ;;
  esac
}

# A kill's selection: ratchet_select's lines, then with --tree (_tree=1 from
# ratchet_opts) the process lines of every descendant of a selected PID and
# every member of the session a selected PID leads (ratchet_tree), filtered by
# the same users and excludes. The action and its check (and so a probe) both
# select with it: what a probe lists is what a run signals. Exit as ratchet_select.
ratchet_select_tree() { # USER EXCLUDES SELECTOR ARGS...
  local _extra _more _p _rc _s
  _s=$(ratchet_select "$@"); _rc=$?
  [ "$_rc" = 0 ] || [ "$_rc" = 5 ] || return "$_rc"
  if [ "$_tree" = 1 ] && [ -n "$_s" ]; then
    _more=$(printf '%s\n' "$_s" | grep -v "^node$RATCHET_TAB" | cut -f"$RATCHET_COL_PID" | ratchet_tree)
    if [ -n "$_more" ]; then
      _extra=$(for _p in $_more; do ratchet_describe "$_p" ""; done | ratchet_filter "$1" "$2")
      [ -n "$_extra" ] && _s=$(printf '%s\n%s\n' "$_s" "$_extra")
    fi
  fi
  [ -z "$_s" ] || printf '%s\n' "$_s"
  return "$_rc"
}

# For respawns (a supervisor that starts a killed holder again): one
# "parent<TAB>PID<TAB>PPID<TAB>PARENT_COMM" line per PID on stdin that is
# alive; with `clock`, first "clock<TAB>TICKS": now, in clock ticks since boot
# (as start_ticks), so a process that started later started after this.
ratchet_parents() { # [clock]
  local _c _p _pp
  if [ "${1:-}" = clock ]; then
    awk -v h="${RATCHET_HZ:-$(ratchet_hz)}" '{ printf "clock\t%d\n", $1 * h }' /proc/uptime
  fi
  while read -r _p; do
    case "$_p" in ''|*[!0-9]*) continue ;; esac
    ratchet_stat_fields "$_p"; _pp=$RATCHET_PPID
    case "$_pp" in ''|*[!0-9]*) continue ;; esac
    _c=''
    { read -r _c < "/proc/$_pp/comm"; } 2>/dev/null
    case "$_c" in *"$RATCHET_TAB"*) _c=$(printf '%s' "$_c" | tr '\t' ' ') ;; esac
    printf 'parent\t%s\t%s\t%s\n' "$_p" "$_pp" "$_c"
  done
}

# The frozen cgroups PID is in, one "frozen<TAB>PID<TAB>VERSION<TAB>DIR" line
# each (DIR the cgroup's directory, %-encoded), nearest first: its tasks do not
# run, so a pending KILL waits until it is thawed. v2: the cgroup of the
# "0::/PATH" line or an ancestor whose cgroup.freeze is 1, under the cgroup2
# mount (ROOT, or ROOT/unified beside v1 hierarchies); v1: the freezer
# hierarchy's cgroup or an ancestor that froze itself (freezer.self_freezing
# 1) under ROOT/freezer. Nothing when none is (or /proc/PID/cgroup is
# unreadable). CGROUP_FILE and ROOT (a test's) replace /proc/PID/cgroup and
# /sys/fs/cgroup. Shell builtins only, but a subshell for each line printed.
ratchet_frozen() { # PID [CGROUP_FILE [ROOT]]
  local _c _l _m _p _r _root
  _root=${3:-/sys/fs/cgroup}
  { while IFS= read -r _l || [ -n "$_l" ]; do
      case "$_l" in [0-9]*:*:/*) ;; *) continue ;; esac
      _r=${_l#*:}; _c=${_r%%:*}; _p=${_r#*:}
      case "${_l%%:*}:$_c" in
        0:)
          for _m in "$_root" "$_root/unified"; do
            [ -f "$_m/cgroup.controllers" ] || continue
            ratchet_frozen_walk "$1" v2 "$_m" "$_p" cgroup.freeze
            break
          done ;;
        *)
          case ",$_c," in *,freezer,*) ;; *) continue ;; esac
          for _m in "$_root/freezer" "$_root/$_c"; do
            [ -d "$_m$_p" ] || continue
            ratchet_frozen_walk "$1" v1 "$_m" "$_p" freezer.self_freezing
            break
          done ;;
      esac
    done < "${2:-/proc/$1/cgroup}"; } 2>/dev/null
  return 0
}

# ratchet_frozen's walk from MOUNT/PATH up to (not into) MOUNT: a "frozen" line
# for each directory whose FILE reads 1.
ratchet_frozen_walk() { # PID VERSION MOUNT PATH FILE
  local _d _v
  _d=$4
  while [ -n "$_d" ] && [ "$_d" != / ]; do
    _v=''
    { read -r _v < "$3$_d/$5"; } 2>/dev/null
    [ "$_v" != 1 ] || printf 'frozen\t%s\t%s\t%s\n' "$1" "$2" "$(ratchet_esc_path "$3$_d")"
    _d=${_d%/*}
  done
}

# PID's tracer (TracerPid in /proc/PID/status: a debugger, strace), as
# "traced<TAB>PID<TAB>TRACER_PID<TAB>TRACER_COMM" (a tab in the comm a blank,
# "?" unreadable); nothing when none traces it (0), or it is gone. Shell
# builtins only. A tracer this PID namespace cannot see reads as 0: a process
# in tracing stop (State t, read with TracerPid from the same file) with
# TracerPid 0 is "traced<TAB>PID<TAB>0<TAB>-" (traced from outside).
ratchet_tracer() { # PID
  local _c _k _st _tp _v _x
  _st='' _tp=''
  { while read -r _k _v _x; do
      case "$_k" in State:) _st=$_v ;; TracerPid:) _tp=$_v; break ;; esac
    done < "/proc/$1/status"; } 2>/dev/null
  _v=$_tp
  if [ "$_v" = 0 ] && [ "$_st" = t ]; then printf 'traced\t%s\t0\t-\n' "$1"; return 0; fi
  case "$_v" in ''|0|*[!0-9]*) return 0 ;; esac
  _c=''
  { IFS= read -r _c < "/proc/$_v/comm"; } 2>/dev/null
  case "$_c" in *"$RATCHET_TAB"*) _c=$(printf '%s' "$_c" | tr '\t' ' ') ;; esac
  printf 'traced\t%s\t%s\t%s\n' "$1" "$_v" "${_c:-?}"
}

# Kill action: select, add the tree (TREE=1), re-check each PID's start time
# right before its signal, then wait up to WAIT_MS for the targets to die.
# Prints "signalled<TAB>line", "skipped<TAB>line" (recycled PID),
# "continued<TAB>line" (a stopped process sent CONT after TERM, INT, HUP or
# QUIT), "alive<TAB>line" for survivors, "unkillable<TAB>PID<TAB>D<TAB>WCHAN"
# for a survivor of KILL in uninterruptible sleep, a `frozen` line for each
# frozen cgroup a survivor is in, whatever its state (ratchet_frozen), a `traced` line
# (ratchet_tracer) for a survivor in tracing stop (state t: CONT does not
# resume it, only its tracer can), and holders_of's node lines;
# right before the signals, the clock and each target's parent
# (ratchet_parents clock), for respawns.
ratchet_kill() { # [--signal S] [--wait-ms N] [--tree] [--user U] [--exclude A,B] [--missing-ok] SELECTOR ARGS...
  local _cont _done _end _kill _l _p _rc _sel _t _targets _w
  ratchet_room || return 5
  ratchet_opts "$@"; shift "$RATCHET_SHIFT"
  _sel=$(ratchet_select_tree "$_user" "$_ex" "$@"); _rc=$?
  # 5: a scan that could not see every process; what it saw is still killed
  # (the check then fails closed).
  [ "$_rc" = 0 ] || [ "$_rc" = 5 ] || return "$_rc"
  [ -n "$_sel" ] || return 0
  # holders_of: the node lines (a device held through another node) are evidence, printed as they are.
  case "$_sel" in node"$RATCHET_TAB"*|*"$RATCHET_NL"node"$RATCHET_TAB"*|task"$RATCHET_TAB"*|*"$RATCHET_NL"task"$RATCHET_TAB"*)
    printf '%s\n' "$_sel" | grep -E "^(node|task)$RATCHET_TAB"; _sel=$(printf '%s\n' "$_sel" | grep -v -E "^(node|task)$RATCHET_TAB") ;;
  esac
  # A stopped process (state T, t) keeps TERM, INT, HUP or QUIT pending until
  # it runs again: it gets CONT right after, as systemd does.
  case "$_sig" in TERM|SIGTERM|15|INT|SIGINT|2|HUP|SIGHUP|1|QUIT|SIGQUIT|3) _cont=1 ;; *) _cont= ;; esac
  printf '%s\n' "$_sel" | cut -f"$RATCHET_COL_PID" | ratchet_parents clock
  _done=$(printf '%s\n' "$_sel" | while IFS= read -r _l; do
    [ -n "$_l" ] || continue
    _p=${_l%%"$RATCHET_TAB"*}; _t=$(printf '%s\n' "$_l" | cut -f"$RATCHET_COL_TICKS")
    if ! ratchet_same_alive "$_p" "$_t"; then printf 'skipped\t%s\n' "$_l"
    elif kill -s "$_sig" "$_p" 2>/dev/null; then
      printf 'signalled\t%s\n' "$_l"
      if [ -n "$_cont" ]; then
        case "$(ratchet_state "$_p")" in T|t) kill -s CONT "$_p" 2>/dev/null && printf 'continued\t%s\n' "$_l" ;; esac
      fi
    else printf 'refused\t%s\n' "$_l"; fi
  done)
  printf '%s\n' "$_done"
  # "signalled<TAB>process line": the PID and start ticks, one column further on.
  _targets=$(printf '%s\n' "$_done" | awk -F '\t' '{ tag = $1; pid = $2; ticks = $4 } tag == "signalled" { print pid "\t" ticks }')
  _end=$(( $(ratchet_now_ms) + _wait ))
  while [ -n "$_targets" ]; do
    _targets=$(printf '%s\n' "$_targets" | while IFS="$RATCHET_TAB" read -r _p _t; do
      ratchet_same_alive "$_p" "$_t" && printf '%s\t%s\n' "$_p" "$_t"; done)
    [ -n "$_targets" ] || break
    [ "$(ratchet_now_ms)" -lt "$_end" ] || break
    ratchet_nap
  done
  # KILL cannot end a process in uninterruptible sleep (state D: a wedged
  # driver, a frozen cgroup) until the kernel releases it: named, with where
  # it waits and the frozen cgroups it is in (thawing them releases it).
  # A survivor in tracing stop (state t) runs again only when its tracer
  # resumes it or goes: named with its tracer.
  case "$_sig" in KILL|SIGKILL|9) _kill=1 ;; *) _kill= ;; esac
  printf '%s\n' "$_sel" | while IFS= read -r _l; do
    _p=${_l%%"$RATCHET_TAB"*}; _t=$(printf '%s\n' "$_l" | cut -f"$RATCHET_COL_TICKS")
    ratchet_same_alive "$_p" "$_t" || continue  # (it read RATCHET_STATE)
    printf 'alive\t%s\n' "$_l"
    if [ -n "$_kill" ] && [ "$RATCHET_STATE" = D ]; then
      _w=$(cat "/proc/$_p/wchan" 2>/dev/null); printf 'unkillable\t%s\tD\t%s\n' "$_p" "${_w:-?}"
    elif [ "$RATCHET_STATE" = t ]; then
      ratchet_tracer "$_p"
    fi
    # In any state: a cgroup v2 freeze leaves its tasks in S, not D.
    ratchet_frozen "$_p"
  done
  return 0
}

# Kill check: the processes listed on stdin (process lines from the action)
# that are still alive with the same start time, plus whatever the selector
# selects now (with --tree, as the action selects: ratchet_select_tree); printed as "alive<TAB>line" (holders_of: its node lines too),
# then their parents (ratchet_parents). Holds when no alive line is printed.
ratchet_kill_check() { # [--tree] [--user U] [--exclude A,B] [--missing-ok] SELECTOR ARGS...
  local _alive _l _now _p _rc _t
  ratchet_room || return 5
  ratchet_opts "$@"; shift "$RATCHET_SHIFT"
  _now=$(ratchet_select_tree "$_user" "$_ex" "$@"); _rc=$?
  [ "$_rc" = 0 ] || [ "$_rc" = 5 ] || return "$_rc"
  case "$_now" in node"$RATCHET_TAB"*|*"$RATCHET_NL"node"$RATCHET_TAB"*|task"$RATCHET_TAB"*|*"$RATCHET_NL"task"$RATCHET_TAB"*)
    printf '%s\n' "$_now" | grep -E "^(node|task)$RATCHET_TAB"; _now=$(printf '%s\n' "$_now" | grep -v -E "^(node|task)$RATCHET_TAB") ;;
  esac
  _alive=$({ cat; printf '%s\n' "$_now"; } | awk -F '\t' -v nf="$RATCHET_COL_OWNER" 'NF >= nf && $1 != "node" && $1 != "task" && !seen[$1]++' | while IFS= read -r _l; do
    _p=${_l%%"$RATCHET_TAB"*}; _t=$(printf '%s\n' "$_l" | cut -f"$RATCHET_COL_TICKS")
    ratchet_same_alive "$_p" "$_t" && printf 'alive\t%s\n' "$_l"
  done)
  [ -z "$_alive" ] || { printf '%s\n' "$_alive"; printf '%s\n' "$_alive" | cut -f2 | ratchet_parents; }
  return "$_rc"  # 5: nothing seen alive, but not everything could be seen
}

# Verify conditions. Each prints what violates it and returns non-zero then.
ratchet_no_holders() { # [--user U] [--exclude A,B] [--missing-ok] [--] PATTERN...
  local _h _rc
  ratchet_room || return 5
  ratchet_opts "$@"; shift "$RATCHET_SHIFT"
  _h=$(ratchet_holders "$_user" "$_ex" "$@"); _rc=$?
  [ "$_rc" = 0 ] || [ "$_rc" = 5 ] || return 2
  [ -z "$_h" ] && return "$_rc"  # 5: none seen, but not everything could be seen
  # (builtins: a line is a holder's unless it is a node or task line)
  printf '%s\n' "$_h" | while IFS= read -r _h; do
    case "$_h" in "node$RATCHET_TAB"*|"task$RATCHET_TAB"*) printf '%s\n' "$_h" ;; *) printf 'holder\t%s\n' "$_h" ;; esac
  done
  return 1
}
ratchet_absent() { # REGEX
  local _h
  ratchet_room || return 5
  _h=$(ratchet_select "" "" pattern "$1") || return 2
  [ -z "$_h" ] && return 0
  printf '%s\n' "$_h" | sed "s/^/process$RATCHET_TAB/"; return 1
}
# Listening TCP ports from /proc/net/tcp{,6} (state 0A), decimal, one a line.
# Exit 5 when /proc/net/tcp cannot be read (no /proc: a chroot without it):
# no list is not an empty list.
ratchet_listening() {
  local _x
  [ -r /proc/net/tcp ] || { printf '%s\n' "ratchet: could not check: cannot read /proc/net/tcp (needs /proc on the host)" >&2; return 5; }
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$1 ~ /^[0-9]+:$/ && $4 == "0A" { split($2, a, ":"); print a[2] }' |
    while read -r _x; do printf '%d\n' "0x$_x"; done | sort -un
}
# Who listens on TCP port PORT: a holder line per process holding one of its
# listening sockets (the file shown as "tcp port PORT"), as this login can see
# them: evidence only, the port's state comes from /proc/net/tcp alone.
ratchet_port_holders() { # PORT
  local _hx _in
  _hx=$(printf '%04X' "$1")
  _in=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
        awk -v hx="$_hx" '$1 ~ /^[0-9]+:$/ && $4 == "0A" { split($2, a, ":"); if (toupper(a[2]) == hx) print "socket:[" $10 "]" }')
  [ -n "$_in" ] || return 0
  ratchet_fd_links /proc/[0-9]*/fd 2>/dev/null | RI=$_in awk -F '\t' '
    BEGIN { n = split(ENVIRON["RI"], s, "\n"); for (i = 1; i <= n; i++) S[s[i]] = 1 }
    ($2 in S) && !seen[$1]++ { print $1 }' | sort -n | while read -r _p; do
      ratchet_describe "$_p" "tcp port $1"
    done | sed "s/^/holder$RATCHET_TAB/"
}
ratchet_port_free() {
  local _l
  _l=$(ratchet_listening) || return 5
  ! printf '%s\n' "$_l" | grep -qx -- "$1" || { printf '%s\n' "port $1 is in use"; ratchet_port_holders "$1"; return 1; }
}
ratchet_port_open() {
  local _l
  _l=$(ratchet_listening) || return 5
  printf '%s\n' "$_l" | grep -qx -- "$1" || { printf '%s\n' "nothing listens on port $1"; return 1; }
}
# systemd as the host runs it. Exit 5 with "ratchet: could not check: ..." on
# stderr when there is no systemctl, or when systemd is not the running init
# (a container, WSL, a chroot): sd_booted(3) tests /run/systemd/system, and
# without it systemctl reads no state at all ("System has not been booted with
# systemd", empty values, and for some verbs exit 0).
ratchet_need_systemd() {
  local _c
  command -v systemctl >/dev/null 2>&1 || { printf '%s\n' "ratchet: could not check: systemctl not found: not a systemd host" >&2; return 5; }
  [ -d /run/systemd/system ] && return 0
  { read -r _c < /proc/1/comm; } 2>/dev/null || _c=
  printf '%s\n' "ratchet: could not check: systemd is not running on this host (PID 1 is ${_c:-unreadable}; /run/systemd/system is missing)" >&2
  return 5
}

# The manager ratchet_systemctl talks to: the system's (RATCHET_SD_HOW empty),
# or after `ratchet_sd_user NAME` that user's own (systemd --user), reached as
# NAME itself: logged in as NAME, `systemctl --user` on its runtime directory
# (how=self); as root, `systemctl --user` run as NAME by setpriv (how=setpriv),
# over the manager's private socket, which systemd lets no other UID use, root
# neither; as root without setpriv, `systemctl --user -M NAME@` (how=machine:
# needs the user's D-Bus, dbus-user-session, and starts a transient unit and
# a PAM session per call). Exit 5 (could not check) when NAME is no user
# here, when its manager is not running (NAME neither logged in nor
# lingering), or when the login is neither root nor NAME.
RATCHET_SD_HOW=
ratchet_sd_user() { # NAME
  local _me
  RATCHET_SD_USER=$1 RATCHET_SD_HOW=''
  if ! RATCHET_SD_UID=$(id -u -- "$1" 2>/dev/null) || ! RATCHET_SD_GID=$(id -g -- "$1" 2>/dev/null); then
    printf '%s\n' "ratchet: could not check: no user $1 on this host (scope = \"user\")" >&2
    return 5
  fi
  _me=$(id -u)
  if [ "$_me" != 0 ] && [ "$_me" != "$RATCHET_SD_UID" ]; then
    printf '%s\n' "ratchet: could not check: the systemd user manager of $1 answers root or $1 only, not $(id -un) (become = true)" >&2
    return 5
  fi
  if [ ! -S "/run/user/$RATCHET_SD_UID/systemd/private" ]; then
    printf '%s\n' "ratchet: could not check: the systemd user manager of $1 is not running (no /run/user/$RATCHET_SD_UID/systemd/private): $1 is not logged in and does not linger (loginctl enable-linger $1)" >&2
    return 5
  fi
  if [ "$_me" = "$RATCHET_SD_UID" ]; then RATCHET_SD_HOW=self
  elif command -v setpriv >/dev/null 2>&1; then RATCHET_SD_HOW=setpriv
  else RATCHET_SD_HOW=machine
  fi
}
ratchet_systemctl() {
  case "$RATCHET_SD_HOW" in
    self) XDG_RUNTIME_DIR=/run/user/$RATCHET_SD_UID systemctl --user "$@" ;;
    machine) systemctl --user -M "$RATCHET_SD_USER@" "$@" ;;
    setpriv) setpriv --reuid="$RATCHET_SD_UID" --regid="$RATCHET_SD_GID" --init-groups \
               env XDG_RUNTIME_DIR="/run/user/$RATCHET_SD_UID" systemctl --user "$@" ;;
    *) systemctl "$@" ;;
  esac
}

# The start of every service function: systemd running, then `--user NAME`
# (that user's manager) when given; RATCHET_SHIFT says how many arguments it took.
ratchet_sd_scope() { # "$@"
  RATCHET_SD_HOW='' RATCHET_SHIFT=0
  ratchet_need_systemd || return 5
  if [ "${1:-}" = --user ]; then ratchet_sd_user "${2:-}" || return 5; RATCHET_SHIFT=2; fi
}

# The users whose own manager runs UNIT now, `user_unit=NAME` a line: UNIT's
# cgroup below user@UID.service (cgroup v2, or v1's name=systemd tree), at most
# 6 levels below user.slice. For a system-scope check of a name that is no
# system unit (a GPU job started with systemctl --user).
ratchet_user_units() { # UNIT
  local _n _d _u
  case "$1" in
    *.service|*.scope|*.socket|*.timer|*.target|*.path|*.mount|*.automount|*.swap|*.slice|*.device) _n=$1 ;;
    *) _n=$1.service ;;  # as systemctl reads a name without a type
  esac
  case "$_n" in *\\*) _n=$(printf '%s\n' "$_n" | sed 's/\\/\\\\/g') ;; esac  # find -name: \ escapes
  for _d in /sys/fs/cgroup/user.slice /sys/fs/cgroup/unified/user.slice /sys/fs/cgroup/systemd/user.slice; do
    [ -d "$_d" ] && find "$_d" -mindepth 3 -maxdepth 6 -type d -name "$_n" 2>/dev/null
  done | sed -n 's,.*/user@\([0-9][0-9]*\)\.service/.*,\1,p' | sort -un | while read -r _u; do
    printf 'user_unit=%s\n' "$(ratchet_uname "$_u")"
  done
}

# verify service_active: UNIT is active (systemctl is-active). Exit 5 when
# systemd cannot be asked (ratchet_need_systemd), and when UNIT is no system
# unit but runs as a user's unit (ratchet_user_units): "not found" is no state.
# "could not check" for UNIT whose LoadState systemctl did not print; OUTPUT
# is what it printed instead (its first line is the reason).
ratchet_no_loadstate() { # UNIT OUTPUT
  printf '%s\n' "ratchet: could not check: systemctl show $1 read no LoadState: $(printf '%s\n' "${2:-(nothing)}" | sed -n '/[^[:space:]]/{p;q;}')" >&2
}

ratchet_service_active() { # UNIT
  local _l _rc _u
  ratchet_need_systemd || return 5
  systemctl is-active --quiet -- "$1" && return 0
  _rc=$?
  # Not active, or no answer (a manager it could not reach): only a LoadState says which.
  _l=$(systemctl show -p LoadState --value -- "$1" 2>&1)
  case "$_l" in
    ''|*[!a-z-]*)
      ratchet_no_loadstate "$1" "$_l"; return 5 ;;
  esac
  if [ "$_l" = not-found ]; then
    _u=$(ratchet_user_units "$1" | sed 's/^user_unit=//' | awk '{ printf "%s%s", (NR > 1 ? ", " : ""), $0 }')
    if [ -n "$_u" ]; then
      printf '%s\n' "ratchet: could not check: $1 is not a system unit; runs as a user unit of $_u" >&2
      return 5
    fi
  fi
  return "$_rc"
}

# Service state as key=value lines: load, active (after a transitional state
# settles, or WAIT_MS passed: then `sub` and `for` say which and how long),
# enabled, reload (NeedDaemonReload: the unit's file changed on disk since
# systemd loaded it), the sha256 of an installed unit file when given, and for
# an inactive unit every process still in its cgroup (KillMode=process or
# none) as `left=PID COMM` lines. `--user NAME`: of NAME's own manager
# (ratchet_sd_user). A system unit that is not found but runs as a user's unit
# adds `user_unit=NAME` lines (ratchet_user_units). A LoadState that systemctl
# does not print is exit 5: no state was read.
ratchet_service_state() { # [--user NAME] UNIT [UNIT_FILE_PATH] [WAIT_MS]
  local _a _cg _ch _cp _l _lp _se
  ratchet_sd_scope "$@" || return 5
  shift "$RATCHET_SHIFT"
  _l=$(ratchet_systemctl show -p LoadState --value -- "$1" 2>&1)
  case "$_l" in
    ''|*[!a-z-]*)
      ratchet_no_loadstate "$1" "$_l"; return 5 ;;
  esac
  printf 'load=%s\n' "$_l"
  _se=$(( $(ratchet_now_ms) + ${3:-30000} ))
  while :; do
    _a=$(ratchet_systemctl is-active -- "$1" 2>/dev/null)
    case "$_a" in
      activating|deactivating|reloading|refreshing)
        [ "$(ratchet_now_ms)" -lt "$_se" ] || break
        ratchet_nap ;;
      *) break ;;
    esac
  done
  printf 'active=%s\n' "$_a"
  case "$_a" in activating|deactivating|reloading|refreshing)
    printf 'sub=%s\n' "$(ratchet_systemctl show -p SubState --value -- "$1" 2>/dev/null)"
    _ch=$(ratchet_systemctl show -p StateChangeTimestampMonotonic --value -- "$1" 2>/dev/null)
    [ -n "$_ch" ] && [ "$_ch" -gt 0 ] 2>/dev/null && printf 'for=%s\n' "$(( ($(ratchet_now_ms) - _ch / 1000) / 1000 ))" ;;
  esac
  printf 'enabled=%s\n' "$(ratchet_systemctl is-enabled -- "$1" 2>/dev/null)"
  printf 'reload=%s\n' "$(ratchet_systemctl show -p NeedDaemonReload --value -- "$1" 2>/dev/null)"
  if [ -n "${2:-}" ]; then
    if [ -f "$2" ]; then printf 'file=%s\n' "$(ratchet_sha256 < "$2")"; else echo 'file=absent'; fi
  fi
  case "$_a" in inactive|failed)
    _cg=$(ratchet_systemctl show -p ControlGroup --value -- "$1" 2>/dev/null)
    if [ -n "$_cg" ]; then
      for _cp in "/sys/fs/cgroup$_cg/cgroup.procs" "/sys/fs/cgroup/systemd$_cg/cgroup.procs"; do
        [ -r "$_cp" ] || continue
        while read -r _lp; do
          printf 'left=%s %s\n' "$_lp" "$(cat "/proc/$_lp/comm" 2>/dev/null)"
        done < "$_cp"
        break
      done
    fi ;;
  esac
  [ "$_l" = not-found ] && [ -z "$RATCHET_SD_HOW" ] && ratchet_user_units "$1"
  return 0
}

# systemctl daemon-reload when UNIT's file (or a drop-in) changed on disk
# since systemd loaded it (NeedDaemonReload=yes), saying so on stdout; sets
# RATCHET_RELOADED=1 then. A start, restart, reload or enable of a stale unit
# would use the old definition. (The manager of ratchet_sd_scope.)
ratchet_reload_if_stale() { # UNIT
  RATCHET_RELOADED=0
  [ "$(ratchet_systemctl show -p NeedDaemonReload --value -- "$1" 2>/dev/null)" = yes ] || return 0
  ratchet_systemctl daemon-reload || return 1
  RATCHET_RELOADED=1
  printf '%s\n' "ratchet: daemon-reload: $1 changed on disk since systemd loaded it"
}

# The service action: daemon-reload first when the unit is stale, then VERB
# (start, stop, restart, reload, enable, disable). A start of a unit that was
# active on its old definition is a restart (systemctl start of an active unit
# does nothing), said on stdout. VERB daemon-reload takes no UNIT. `--user
# NAME`: NAME's own manager. Exit 5 (could not check) without a running
# systemd: nothing is sent to a manager that is not there.
ratchet_service() { # [--user NAME] VERB [UNIT]
  ratchet_sd_scope "$@" || return 5
  shift "$RATCHET_SHIFT"
  if [ "$1" = daemon-reload ]; then ratchet_systemctl daemon-reload; return; fi
  case "$1" in stop|disable) ;; *) ratchet_reload_if_stale "$2" || return 1 ;; esac
  if [ "$1" = start ] && [ "$RATCHET_RELOADED" = 1 ] && ratchet_systemctl is-active --quiet -- "$2"; then
    printf '%s\n' "ratchet: restart: $2 was active on its old definition"
    ratchet_systemctl restart -- "$2"
    return
  fi
  ratchet_systemctl "$1" -- "$2"
}

# stat -c (GNU coreutils, BusyBox): without it, say so (exit 5 for the caller).
ratchet_need_stat() {
  stat -L -c %a / >/dev/null 2>&1 && return 0
  printf '%s\n' "ratchet: could not check: needs stat -c (GNU coreutils or BusyBox) on the host" >&2
  return 1
}

# File state for a write check: "sha256 mode owner group" or "absent".
ratchet_stat() { # PATH (a symlink is followed: the file it names is checked)
  ratchet_need_stat || return 5
  if [ -f "$1" ]; then
    printf '%s %s\n' "$(ratchet_sha256 < "$1")" "$(stat -L -c '%a %U %G' -- "$1")"
  elif [ -e "$1" ]; then printf '%s\n' "notfile"; else printf '%s\n' "absent"; fi
}

# Copies FILE's extended POSIX ACL onto TMP (getfacl | setfacl), before TMP's
# mode is set (chmod then sets the owner, mask and other entries). Prints the
# name of what it could not keep ("its POSIX ACL (...)"); never fails.
ratchet_keep_acl() { # FILE TMP
  if command -v getfacl >/dev/null 2>&1; then
    [ -n "$(getfacl -s -p -- "$1" 2>/dev/null)" ] || return 0  # none beyond the mode bits
    if ! command -v setfacl >/dev/null 2>&1; then printf '%s\n' "its POSIX ACL (no setfacl on the host)"; return 0; fi
    getfacl -p -- "$1" 2>/dev/null | setfacl --set-file=- -- "$2" 2>/dev/null ||
      printf '%s\n' "its POSIX ACL (setfacl refused it)"
    return 0
  fi
  # No getfacl: ls marks a file that has an ACL with a trailing "+".
  # shellcheck disable=SC2012  # only the mode field is read
  case "$(ls -ld -- "$1" 2>/dev/null | cut -d' ' -f1)" in *+) printf '%s\n' "its POSIX ACL (no getfacl on the host)" ;; esac
}

# Copies FILE's extended attributes (user.*, security.*, trusted.*; the ACL is
# ratchet_keep_acl's) onto TMP, after its owner is set (chown drops
# security.capability). Prints each name it could not keep; never fails.
# Without getfattr nothing can list them: nothing is printed (docs/playbook.md).
ratchet_keep_xattrs() { # FILE TMP
  local _l _n _set
  command -v getfattr >/dev/null 2>&1 || return 0
  _set=1
  command -v setfattr >/dev/null 2>&1 || _set=0
  getfattr -d -m - -e hex -- "$1" 2>/dev/null | while IFS= read -r _l; do
    case "$_l" in '#'*|'') continue ;; esac
    _n=${_l%%=*}
    case "$_n" in system.posix_acl_access|system.posix_acl_default) continue ;; esac
    if [ "$_set" = 0 ]; then printf '%s\n' "$_n (no setfattr on the host)"
    else setfattr -n "$_n" -v "${_l#*=}" -- "$2" 2>/dev/null || printf '%s\n' "$_n (setfattr refused it)"; fi
  done
}

# Atomic write: stdin goes to a temp file in the target's directory; mode and
# owner are set on it, then one rename puts it in place. The old file stays
# whole until the rename; a failure removes the temp file. Of a file that
# exists, the temp file also gets its POSIX ACL and extended attributes
# (ratchet_keep_acl, ratchet_keep_xattrs); what could not be kept is named in
# a "ratchet: warning:" line, as is a file with more than one hard link: the
# rename gives this name a new inode, so the other names keep the old content
# (docs/playbook.md: write, "attributes and hard links").
ratchet_write() { # PATH MODE OWNER GROUP BACKUP(0|1)
  local _d _g _m _o _lost _links
  ratchet_need_stat || return 5
  # Through a symlink, the file it names is replaced (the link stays).
  if [ -L "$1" ]; then set -- "$(readlink -f -- "$1")" "$2" "$3" "$4" "$5"; fi
  _d=$(dirname -- "$1")
  [ -d "$_d" ] || { printf '%s\n' "ratchet: directory $_d does not exist" >&2; return 1; }
  # mv onto a directory would move the temp file into it: refuse first.
  if [ -e "$1" ] && [ ! -f "$1" ]; then printf '%s\n' "ratchet: $1 exists and is not a regular file" >&2; return 1; fi
  _tmp=$(mktemp "$_d/.ratchet-write.XXXXXX") || return 1
  trap 'rm -f "$_tmp"' EXIT HUP INT TERM PIPE
  cat > "$_tmp" || return 1
  _m=$2; _o=$3; _g=$4 _lost='' _links=1
  if [ -e "$1" ]; then
    [ -n "$_m" ] || _m=$(stat -c %a -- "$1")
    [ -n "$_o" ] || _o=$(stat -c %U -- "$1")
    [ -n "$_g" ] || _g=$(stat -c %G -- "$1")
    _links=$(stat -c %h -- "$1")
    [ "$5" = 1 ] && { cp -p -- "$1" "$1.$(date -u +%Y%m%dT%H%M%SZ).bak" || return 1; }
    _lost=$(ratchet_keep_acl "$1" "$_tmp")
  fi
  chmod -- "${_m:-0644}" "$_tmp" || return 1
  if [ -n "$_o$_g" ]; then chown -- "$_o${_g:+:$_g}" "$_tmp" || return 1; fi
  if [ -e "$1" ]; then
    _lost=$(printf '%s\n%s\n' "$_lost" "$(ratchet_keep_xattrs "$1" "$_tmp")" |
      awk 'NF { o = o (o == "" ? "" : ", ") $0 } END { if (o != "") print "not kept: " o }')
  fi
  if [ "${_links:-1}" -gt 1 ]; then
    _lost="${_lost:+$_lost; }it had $_links hard links: only this name gets the new content, the other $((_links - 1)) keep the old"
  fi
  mv -f -- "$_tmp" "$1" || return 1
  trap - EXIT HUP INT TERM PIPE
  [ -z "$_lost" ] || printf '%s\n' "ratchet: warning: $1: $_lost" >&2
  return 0
}

# nvidia-smi failed: say so as a check that could not look (its first line),
# or why ratchet_smi could not run it to its end (RATCHET_SMI_WHY: it did not
# answer within its bound; no temporary file).
ratchet_smi_failed() { # SMI QUERY STATUS OUTPUT
  local _m
  if [ -n "${RATCHET_SMI_WHY:-}" ]; then
    printf '%s\n' "ratchet: could not check: $RATCHET_SMI_WHY" >&2
    return 0
  fi
  _m=$(printf '%s\n' "$4" | sed -n '/[^[:space:]]/{p;q;}')
  printf '%s\n' "ratchet: could not check: $1 $2 exited $3${_m:+: $_m}" >&2
}

# True while PID (a child of this shell) has not ended: neither reaped nor a
# zombie. Shell builtins only (it is polled); a kill checks the start time too.
ratchet_smi_running() { # PID
  local _k _s _x
  _s=''
  { while read -r _k _s _x; do [ "$_k" = State: ] && break; _s=''; done < "/proc/$1/status"; } 2>/dev/null
  [ -n "$_s" ] && [ "$_s" != Z ]
}

# Milliseconds since boot into RATCHET_NOW_MS (/proc/uptime, builtins only).
ratchet_smi_now() {
  local _u _x
  read -r _u _x < /proc/uptime
  RATCHET_NOW_MS=$((${_u%.*} * 1000 + (1${_u#*.} - 100) * 10))
}

# Runs SMI ARGS (LC_ALL=C) with a bound: verify gpus_idle's smi_timeout,
# enforced here, on the host. Its stdout and stderr go to a temporary file
# (never to a pipe, which a process that cannot die would hold open), read
# into RATCHET_SMI_OUT. Returns its exit status; when it has not ended after
# MS milliseconds, the PID this function started (checked by its start time,
# never looked up by name) gets TERM, then KILL a second later; the function
# returns 124 within about 2 s of the bound whether or not the process died
# (one in state D, on a wedged driver, is left and named), with
# RATCHET_SMI_WHY saying so; 125 and why when it cannot start it. A sh
# watchdog, not timeout(1): timeout waits for its child, and a child the
# kernel cannot kill would hold it for ever.
ratchet_smi() { # MS SMI ARGS...
  local _d _end _f _ms _n _pid _q _sig _t _why
  _ms=$1; shift
  RATCHET_SMI_OUT='' RATCHET_SMI_WHY=''
  _f=$(mktemp "${TMPDIR:-/tmp}/.ratchet-smi.XXXXXX") ||
    { RATCHET_SMI_WHY="cannot create a temporary file in ${TMPDIR:-/tmp} for nvidia-smi's output"; return 125; }
  LC_ALL=C "$@" > "$_f" 2>&1 &
  _pid=$!
  _t=$(ratchet_start "$_pid")
  ratchet_smi_now; _end=$((RATCHET_NOW_MS + _ms))
  _d=0.01  # a healthy call ends in tens of milliseconds: poll fast at first
  while ratchet_smi_running "$_pid"; do
    ratchet_smi_now; [ "$RATCHET_NOW_MS" -lt "$_end" ] || break
    sleep "$_d" 2>/dev/null || sleep 1
    case "$_d" in 0.01) _d=0.02 ;; 0.02) _d=0.05 ;; *) _d=0.1 ;; esac
  done
  if ratchet_smi_running "$_pid" && ratchet_same_alive "$_pid" "$_t"; then
    for _sig in TERM KILL; do
      ratchet_same_alive "$_pid" "$_t" && kill -s "$_sig" "$_pid" 2>/dev/null
      _n=0
      while [ "$_n" -lt 10 ] && ratchet_smi_running "$_pid"; do ratchet_nap; _n=$((_n + 1)); done
      ratchet_smi_running "$_pid" || break
    done
    _q=${2%%=*}
    case "$_ms" in *000) _why="$((_ms / 1000))s" ;; *) _why="${_ms}ms" ;; esac
    if ratchet_smi_running "$_pid"; then
      RATCHET_SMI_WHY="$(basename -- "$1") did not answer in $_why ($_q; PID $_pid is still there after TERM and KILL: state $(awk '$1 == "State:" { print $2; exit }' "/proc/$_pid/status" 2>/dev/null), wchan $(cat "/proc/$_pid/wchan" 2>/dev/null))"
    else
      wait "$_pid" 2>/dev/null
      RATCHET_SMI_WHY="$(basename -- "$1") did not answer in $_why ($_q; PID $_pid ended by ratchet with $_sig)"
    fi
    RATCHET_SMI_OUT=$(cat "$_f" 2>/dev/null); rm -f "$_f"
    return 124
  fi
  wait "$_pid"; _n=$?
  RATCHET_SMI_OUT=$(cat "$_f" 2>/dev/null); rm -f "$_f"
  return "$_n"
}

# verify gpus_idle: what the driver (nvidia-smi) and the kernel (who holds the
# device files) each say of every GPU, printed for ratchet to judge per GPU
# (src/steps/gpus.cc): this function does not judge. nvidia-smi runs first and
# has exited before the /proc scan (it opens the device files itself). Each
# nvidia-smi call is bounded by --smi-timeout (milliseconds, default 10000:
# ratchet_smi); one that does not answer is "could not check: nvidia-smi did
# not answer in 10s (...)".
# Exit 0: both views read; 5: one could not be ("ratchet: could not check: ..."
# on stderr: nvidia-smi missing or failing, or a holder scan that could not see
# every process; what was seen is still printed); 2: no device file matches.
# Lines (tab-separated, a tag first):
#   gpu       CSV: index, uuid, name, memory.used, memory.total, utilization.gpu
#   app       CSV: gpu_uuid, pid, process_name, used_memory (--format=csv,noheader,nounits)
#   minor     UUID, the kernel driver's device minor (/proc/driver/nvidia/gpus/*/information)
#   holder    a process line: a holder of the device files (filters not applied)
#   listed    a process line (no files): a PID the driver lists that is a process here
#   selected  PID: a holder or listed process that the user/exclude filters keep
#   nspid     PID, its NSpid (more than one PID: it lives in a nested PID namespace, a container)
#   migl      with --mig (a MIG instance asked for): a line of nvidia-smi -L
#   migx      with --mig: a line of nvidia-smi -q -x (each <gpu>'s <uuid>,
#             <mig_devices> and <processes>)
#   migcap    with --mig: PATH, DeviceFileMinor of a MIG capability
#             (/proc/driver/nvidia/capabilities/gpuN/mig/giG[/ciC]/access)
ratchet_gpus_idle() { # [--smi CMD] [--smi-timeout MS] [--mig] [--user U] [--exclude A,B] [--missing-ok] [--] DEVICE_PATTERN...
  local _all _apps _f _gpus _listed _lp _mig _p _rc _sel _smi _tmo
  _smi=nvidia-smi _tmo=10000 _mig=0
  if [ "${1:-}" = --smi ]; then _smi=$2; shift 2; fi
  if [ "${1:-}" = --smi-timeout ]; then _tmo=$2; shift 2; fi
  if [ "${1:-}" = --mig ]; then _mig=1; shift; fi
  ratchet_room || return 5
  ratchet_opts "$@"; shift "$RATCHET_SHIFT"
  if ! command -v "$_smi" >/dev/null 2>&1; then
    case "$_smi" in
      */*) printf '%s\n' "ratchet: could not check: $_smi not found: no nvidia-smi there" >&2 ;;
      *) printf '%s\n' "ratchet: could not check: $_smi not found on PATH ($PATH); set nvidia_smi to its full path" >&2 ;;
    esac
    return 5
  fi
  ratchet_smi "$_tmo" "$_smi" --query-gpu=index,uuid,name,memory.used,memory.total,utilization.gpu --format=csv,noheader,nounits ||
    { ratchet_smi_failed "$_smi" --query-gpu "$?" "$RATCHET_SMI_OUT"; return 5; }
  _gpus=$RATCHET_SMI_OUT
  ratchet_smi "$_tmo" "$_smi" --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits ||
    { ratchet_smi_failed "$_smi" --query-compute-apps "$?" "$RATCHET_SMI_OUT"; return 5; }
  _apps=$RATCHET_SMI_OUT
  printf '%s\n' "$_gpus" | sed -n "/[^[:space:]]/s/^/gpu$RATCHET_TAB/p"
  printf '%s\n' "$_apps" | sed -n "/[^[:space:]]/s/^/app$RATCHET_TAB/p"
  if [ "$_mig" = 1 ]; then
    ratchet_smi "$_tmo" "$_smi" -L || { ratchet_smi_failed "$_smi" -L "$?" "$RATCHET_SMI_OUT"; return 5; }
    printf '%s\n' "$RATCHET_SMI_OUT" | sed -n "/[^[:space:]]/s/^/migl$RATCHET_TAB/p"
    ratchet_smi "$_tmo" "$_smi" -q -x || { ratchet_smi_failed "$_smi" '-q -x' "$?" "$RATCHET_SMI_OUT"; return 5; }
    # Of the XML, what steps/mig.cc reads: each <gpu>'s <uuid>, <mig_devices>, <processes>.
    printf '%s\n' "$RATCHET_SMI_OUT" | awk '/<gpu id=|<\/gpu>|^[ \t]*<uuid>/ { print "migx\t" $0; next }
      /<mig_devices>|<processes>/ { keep = 1 } keep { print "migx\t" $0 } /<\/mig_devices>|<\/processes>/ { keep = 0 }'
    # Which /dev/nvidia-caps/nvidia-capM opens which GPU instance.
    for _f in /proc/driver/nvidia/capabilities/gpu*/mig/gi*/access /proc/driver/nvidia/capabilities/gpu*/mig/gi*/ci*/access; do
      [ -r "$_f" ] || continue
      awk -v f="$_f" '$1 == "DeviceFileMinor:" { print "migcap\t" f "\t" $2; exit }' "$_f"
    done
  fi
  for _f in /proc/driver/nvidia/gpus/*/information; do
    [ -r "$_f" ] || continue
    awk -F ':' '$1 ~ /^GPU UUID/ { u = $2 } $1 ~ /^Device Minor/ { m = $2 }
      END { gsub(/[ \t]/, "", u); gsub(/[ \t]/, "", m); if (u != "" && m ~ /^[0-9]+$/) print "minor\t" u "\t" m }' "$_f"
  done
  # The filtered scan decides (its "could not check" is the check's); the
  # unfiltered one only lists who else holds the files.
  _sel=$(ratchet_holders "$_user" "$_ex" "$@"); _rc=$?
  [ "$_rc" = 0 ] || [ "$_rc" = 5 ] || return "$_rc"
  if [ -n "$_user$_ex" ]; then _all=$(RATCHET_QUIET=1 ratchet_holders '' '' "$@" 2>/dev/null); else _all=$_sel; fi
  printf '%s\n%s\n' "$_sel" "$_all" | awk -F '\t' -v nf="$RATCHET_COL_OWNER" '$1 == "node" || $1 == "task" { if (!node[$0]++) print; next } NF >= nf && !seen[$1]++ { print "holder\t" $0 }'
  _lp=$(printf '%s\n' "$_apps" | awk -F ',' '{ p = $2; gsub(/[ \t]/, "", p) } p ~ /^[0-9]+$/ { print p }' | sort -un)
  _listed=$(for _p in $_lp; do ratchet_describe "$_p" ""; done)
  [ -z "$_listed" ] || printf '%s\n' "$_listed" | sed "s/^/listed$RATCHET_TAB/"
  { printf '%s\n' "$_sel" | cut -f"$RATCHET_COL_PID"
    [ -z "$_listed" ] || printf '%s\n' "$_listed" | RATCHET_QUIET=1 ratchet_filter "$_user" "$_ex" | cut -f"$RATCHET_COL_PID"
  } | awk '/^[0-9]+$/ && !seen[$0]++ { print "selected\t" $0 }'
  printf '%s\n%s\n%s\n' "$_sel" "$_all" "$_listed" | cut -f"$RATCHET_COL_PID" | sort -un | while read -r _p; do
    case "$_p" in ''|*[!0-9]*) continue ;; esac
    awk -v p="$_p" '$1 == "NSpid:" { $1 = ""; sub(/^ +/, ""); print "nspid\t" p "\t" $0; exit }' "/proc/$_p/status" 2>/dev/null
  done
  return "$_rc"
}
