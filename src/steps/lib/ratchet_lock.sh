# ratchet host library, part 2: the run lock and the audit line
# (docs/host-library.md, "Lock and audit"). Joined after ratchet.sh by CMake:
# it uses ratchet_start, ratchet_same_alive and ratchet_proc_visible.
# A lock is a directory (mkdir is atomic) holding one file, `owner`:
#   RUN_ID WHO SINCE SESSION_PID SESSION_START_TICKS
# (no field holds a space: ratchet sends only [A-Za-z0-9._@:-]). Exit statuses
# of ratchet_lock_take and ratchet_lock_try: 0 taken, 10 held by a live session, 11 stale (its
# session is gone), 5 could not check.

# Parent PID of PID (from /proc/PID/status).
ratchet_ppid() { awk '$1 == "PPid:" { print $2; exit }' "/proc/$1/status" 2>/dev/null; }

# "PID TICKS" of the sshd process serving this SSH session: the nearest
# ancestor of this shell named sshd or sshd-session. It lives exactly as long
# as the connection, so a lock holder's liveness is that process's.
ratchet_session_pid() {
  local _p _n _i
  _p=$$ _i=0
  while [ "$_i" -lt 32 ]; do
    _p=$(ratchet_ppid "$_p")
    case "$_p" in '' | 0 | 1 | *[!0-9]*) return 1 ;; esac
    _n=$(cat "/proc/$_p/comm" 2>/dev/null) || return 1
    case "$_n" in
      sshd | sshd-session) printf '%s %s\n' "$_p" "$(ratchet_start "$_p")"; return 0 ;;
    esac
    _i=$((_i + 1))
  done
  return 1
}

# Writes LINE to DIR/owner through a temporary file and rename (a symlink
# planted as owner is replaced, never followed).
ratchet_lock_owner() { # DIR LINE
  printf '%s\n' "$2" > "$1/owner.$$" && mv -f "$1/owner.$$" "$1/owner"
}

# Takes DIR for RUN_ID (WHO is the controller's user@host), trying again each
# second while a live session holds it, for up to WAIT_MS; BREAK=1 takes a
# stale lock. Prints "taken LINE" (after "broke OLD_LINE" when it broke one),
# "held LINE" or "stale LINE", else why it could not check.
ratchet_lock_take() { # DIR RUN_ID WHO BREAK(0|1) WAIT_MS
  local _end _out _rc
  _end=$(($(ratchet_now_ms) + ${5:-0}))
  while :; do
    _out=$(ratchet_lock_try "$1" "$2" "$3" "$4")
    _rc=$?
    if [ "$_rc" != 10 ] || [ "$(ratchet_now_ms)" -ge "$_end" ]; then break; fi
    sleep 1
  done
  printf '%s\n' "$_out"
  return "$_rc"
}

ratchet_lock_try() { # DIR RUN_ID WHO BREAK(0|1)
  local _d _me _since _line _o _n
  _d=$1
  _me=$(ratchet_session_pid) ||
    { printf '%s\n' "could not find the sshd process of this session (no sshd ancestor of PID $$)"; return 5; }
  case "$_me" in *[0-9]' '[0-9]*) ;; *) printf '%s\n' "could not read the start time of the session process"; return 5 ;; esac
  _since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  _line="$2 $3 $_since $_me"
  if mkdir -m 0755 "$_d" 2>/dev/null; then
    ratchet_lock_owner "$_d" "$_line" ||
      { rmdir "$_d" 2>/dev/null; printf '%s\n' "could not write $_d/owner"; return 5; }
    printf 'taken %s\n' "$_line"
    return 0
  fi
  if [ ! -d "$_d" ] || [ -L "$_d" ]; then
    printf '%s\n' "cannot create the lock directory $_d ($(mkdir "$_d" 2>&1 | tail -n 1))"
    return 5
  fi
  _o=$(head -n 1 "$_d/owner" 2>/dev/null)
  if [ -z "$_o" ]; then
    printf 'held %s\n' "? ? ? ? ?"
    printf '%s\n' "$_d exists without an owner file (being taken now, or made by hand)" >&2
    return 10
  fi
  # shellcheck disable=SC2086  # the owner's fields, split at spaces on purpose
  set -- "$_d" "$2" "$3" "$4" $_o
  _n=$#
  case "$_n:$8:$9" in
    9:[0-9]*:[0-9]*) ;;
    *) printf '%s\n' "$_d/owner is not a ratchet lock owner line: $_o"; return 5 ;;
  esac
  if [ "$5" = "$2" ]; then  # this run's own lock (again after a reboot): this session holds it now
    ratchet_lock_owner "$_d" "$_line" || { printf '%s\n' "could not write $_d/owner"; return 5; }
    printf 'taken %s\n' "$_line"
    return 0
  fi
  ratchet_proc_visible || return 5
  [ -d /proc/1 ] || { printf '%s\n' "/proc is not readable here: cannot tell a live holder from a dead one"; return 5; }
  if ratchet_same_alive "$8" "$9"; then
    printf 'held %s\n' "$_o"
    return 10
  fi
  if [ "$4" != 1 ]; then
    printf 'stale %s\n' "$_o"
    return 11
  fi
  # Breaking: move the stale lock aside (one rename: of two breakers one wins),
  # check it is the one judged stale, then take the path as a new lock.
  mv "$_d" "$_d.broken.$$" 2>/dev/null || { printf '%s\n' "could not move the stale lock $_d aside"; return 5; }
  if [ "$(head -n 1 "$_d.broken.$$/owner" 2>/dev/null)" != "$_o" ]; then
    mv "$_d.broken.$$" "$_d" 2>/dev/null
    printf '%s\n' "the lock $_d changed while it was being broken: not taken"
    return 5
  fi
  rm -rf "$_d.broken.$$"
  mkdir -m 0755 "$_d" 2>/dev/null || { printf '%s\n' "the lock $_d was taken by another run while breaking it"; return 10; }
  ratchet_lock_owner "$_d" "$_line" || { rmdir "$_d" 2>/dev/null; printf '%s\n' "could not write $_d/owner"; return 5; }
  printf 'broke %s by %s %s at %s\n' "$_o" "$2" "$3" "$_since" > "$_d/broken"
  printf 'broke %s\n' "$_o"
  printf 'taken %s\n' "$_line"
  return 0
}

# Releases DIR if RUN_ID holds it (else changes nothing and says who does).
ratchet_lock_release() { # DIR RUN_ID
  local _o
  _o=$(head -n 1 "$1/owner" 2>/dev/null) || { printf '%s\n' "the lock $1 is not there (released already?)"; return 1; }
  case "$_o" in
    "$2 "*) ;;
    *) printf '%s\n' "the lock $1 is not this run's: $_o"; return 1 ;;
  esac
  if ! rm -f "$1/owner" "$1/broken" || ! rmdir "$1"; then
    printf '%s\n' "could not remove the lock $1"
    return 5
  fi
  printf 'released\n'
}

# Appends LINE and a newline to PATH in one write (printf to a file opened with
# O_APPEND; LINE is one line, shorter than PIPE_BUF), making its directory
# (0755) and the file (0640) when they are missing.
ratchet_audit() { # PATH LINE
  local _dir
  _dir=${1%/*}
  [ -n "$_dir" ] || _dir=/
  [ -d "$_dir" ] || (umask 022 && mkdir -p "$_dir") || return 1
  [ -e "$1" ] || (umask 027 && : >> "$1") || return 1
  printf '%s\n' "$2" >> "$1"
}
