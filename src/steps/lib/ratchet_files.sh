
# sha256 of stdin, as lowercase hex alone: openssl when the host has it (its
# SHA-NI code is about 5x coreutils' sha256sum), else sha256sum.
ratchet_sha256() {
  if command -v openssl >/dev/null 2>&1; then openssl dgst -sha256 -r; else sha256sum; fi | cut -d' ' -f1
}

# copy (docs/playbook.md#copy): each entry of the tree is ROOT/REL. Nothing is
# ever written through a symlink between ROOT and the entry (what it names may
# lie outside ROOT), and REL holds no "..".
ratchet_copy_under() { # ROOT REL
  local _p _r
  _p=$1; _r=$2
  case "/$_r/" in */../*) printf '%s\n' "ratchet: $2 has a .. component: refused, it would leave $1" >&2; return 4 ;; esac
  while :; do
    case "$_r" in */*) ;; *) return 0 ;; esac
    _p="$_p/${_r%%/*}"; _r=${_r#*/}
    if [ -L "$_p" ]; then
      printf '%s\n' "ratchet: $_p is a symlink on the host: copy never writes through one (it may lead outside $1)" >&2
      return 4
    fi
  done
}

# ROOT/REL, ROOT alone when REL is empty.
ratchet_copy_path() { if [ -z "$2" ]; then printf '%s' "$1"; else printf '%s/%s' "${1%/}" "$2"; fi; }

# An entry's state for copy's check, one line: "file SHA256 MODE OWNER GROUP",
# "dir MODE OWNER GROUP", "link SHA256" (of its target and a newline),
# "other", "absent", or "escape" (a symlink on the way: stderr says which).
ratchet_copy_stat() { # ROOT REL
  local _p
  ratchet_need_stat || return 5
  ratchet_copy_under "$1" "$2" || { printf '%s\n' escape; return 0; }
  _p=$(ratchet_copy_path "$1" "$2"; printf x); _p=${_p%x}
  if [ -L "$_p" ] && [ -n "$2" ]; then printf 'link %s\n' "$(readlink -- "$_p" | ratchet_sha256)"
  elif [ -f "$_p" ]; then printf 'file %s %s\n' "$(ratchet_sha256 < "$_p")" "$(stat -L -c '%a %U %G' -- "$_p")"
  elif [ -d "$_p" ]; then printf 'dir %s\n' "$(stat -L -c '%a %U %G' -- "$_p")"
  elif [ -e "$_p" ] || [ -L "$_p" ]; then printf '%s\n' other
  else printf '%s\n' absent; fi
}

# PATH's directory must exist: copy makes none above dest (a clear refusal, not mkdir's or mktemp's).
ratchet_copy_parent() { # PATH
  local _d
  _d=${1%/*}; [ -n "$_d" ] || _d=/
  [ -d "$_d" ] && return 0
  printf '%s\n' "ratchet: $_d does not exist: copy makes no directory above dest (make it first: a run step with mkdir -p)" >&2
  return 1
}

# Sets OWNER:GROUP on PATH when either is given (-h: a symlink itself).
ratchet_copy_own() { # PATH OWNER GROUP
  if [ -n "$2$3" ]; then chown -h -- "$2${3:+:$3}" "$1" || return 1; fi
}

ratchet_copy_dir() { # ROOT REL MODE OWNER GROUP
  local _p
  ratchet_copy_under "$1" "$2" || return 4
  _p=$(ratchet_copy_path "$1" "$2"; printf x); _p=${_p%x}
  if { [ -L "$_p" ] && [ -n "$2" ]; } || { [ -e "$_p" ] && [ ! -d "$_p" ]; }; then
    printf '%s\n' "ratchet: $_p exists and is not a directory" >&2; return 1
  fi
  [ -d "$_p" ] || { ratchet_copy_parent "$_p" && mkdir -- "$_p"; } || return 1
  chmod -- "$3" "$_p" || return 1
  ratchet_copy_own "$_p" "$4" "$5"
}

# One file, atomically as ratchet_write: stdin into a temp file beside it, its
# sha256 checked against SHA256 (what the plan pinned: a local file that
# changed since is refused, never installed), mode and owner set, one mv.
# Already there with that content: stdin is left unread, only mode and owner set.
ratchet_copy_file() { # ROOT REL SHA256 MODE OWNER GROUP
  local _p _s
  ratchet_need_stat || return 5
  ratchet_copy_under "$1" "$2" || return 4
  _p=$(ratchet_copy_path "$1" "$2"; printf x); _p=${_p%x}
  if [ -L "$_p" ] || { [ -e "$_p" ] && [ ! -f "$_p" ]; }; then
    printf '%s\n' "ratchet: $_p exists and is not a regular file" >&2; return 1
  fi
  if [ -f "$_p" ] && [ "$(ratchet_sha256 < "$_p")" = "$3" ]; then
    chmod -- "$4" "$_p" || return 1
    ratchet_copy_own "$_p" "$5" "$6"; return
  fi
  ratchet_copy_parent "$_p" || return 1
  _tmp=$(mktemp "${_p%/*}/.ratchet-copy.XXXXXX") || return 1
  trap 'rm -f "$_tmp"' EXIT HUP INT TERM PIPE
  # Hashed as it is written (tee), not read again: a temp file that could not
  # be written whole adds a byte to what is hashed, so it is never installed.
  _s=$({ tee -- "$_tmp" || { printf '%s\n' "ratchet: $_p: writing $_tmp failed: not installed" >&2; printf x; }; } | ratchet_sha256)
  if [ "$_s" != "$3" ]; then
    printf '%s\n' "ratchet: $_p: received sha256 $_s, the plan pins $3 (the local file changed since the plan was made?): not installed" >&2
    return 1
  fi
  chmod -- "$4" "$_tmp" || return 1
  ratchet_copy_own "$_tmp" "$5" "$6" || return 1
  mv -f -- "$_tmp" "$_p" || return 1
  trap - EXIT HUP INT TERM PIPE
}

# A symlink, recreated (never followed): made beside it, then one mv -T over
# an old symlink or file (a directory there is refused).
ratchet_copy_link() { # ROOT REL TARGET
  local _p
  ratchet_copy_under "$1" "$2" || return 4
  _p=$(ratchet_copy_path "$1" "$2"; printf x); _p=${_p%x}
  if [ -d "$_p" ] && [ ! -L "$_p" ]; then printf '%s\n' "ratchet: $_p exists and is a directory, not a symlink" >&2; return 1; fi
  ratchet_copy_parent "$_p" || return 1
  _tmp=$(mktemp -d "${_p%/*}/.ratchet-link.XXXXXX") || return 1
  trap 'rm -rf "$_tmp"' EXIT HUP INT TERM PIPE
  ln -s -- "$3" "$_tmp/l" || return 1
  mv -f -T -- "$_tmp/l" "$_p" || return 1
  rmdir -- "$_tmp"
  trap - EXIT HUP INT TERM PIPE
}

# fetch (docs/playbook.md#fetch): what each pattern matches here, one line a
# path (%-encoded as process lines' files): "file<TAB>SIZE<TAB>PATH",
# "big<TAB>SIZE<TAB>PATH" (over MAX bytes: not fetched), "skip<TAB>WHY<TAB>PATH".
# Exit 2 when a pattern matches nothing (unless --missing-ok).
ratchet_fetch_list() { # MAX [--missing-ok] -- PATTERN...
  local _f _ifs _max _mok _n _p _rc _s _t
  ratchet_need_stat || return 5
  _max=$1; shift
  _mok=0
  if [ "${1:-}" = --missing-ok ]; then _mok=1; shift; fi
  if [ "${1:-}" = -- ]; then shift; fi
  _rc=0; _ifs=$IFS
  for _p in "$@"; do
    _n=0
    IFS=''  # the pattern is globbed, never split at blanks
    # shellcheck disable=SC2086
    for _f in $_p; do
      IFS=$_ifs
      { [ -e "$_f" ] || [ -L "$_f" ]; } || continue
      _n=$((_n + 1))
      if [ -d "$_f" ]; then
        printf 'skip%sa directory (fetch takes files: name them, or a glob such as DIR/*)%s%s\n' "$RATCHET_TAB" "$RATCHET_TAB" "$(ratchet_esc "$_f")"
      elif [ ! -f "$_f" ]; then
        printf 'skip%snot a regular file%s%s\n' "$RATCHET_TAB" "$RATCHET_TAB" "$(ratchet_esc "$_f")"
      else
        _s=$(stat -L -c %s -- "$_f") || { _rc=5; continue; }
        if [ "$_s" -gt "$_max" ]; then _t="big"; else _t="file"; fi
        printf '%s%s%s%s%s\n' "$_t" "$RATCHET_TAB" "$_s" "$RATCHET_TAB" "$(ratchet_esc "$_f")"
      fi
    done
    IFS=$_ifs
    if [ "$_n" = 0 ] && [ "$_mok" = 0 ]; then
      printf '%s\n' "ratchet: $_p matches nothing on the host" >&2
      [ "$_rc" != 0 ] || _rc=2
    fi
  done
  return "$_rc"
}

# One file to stdout, at most N bytes of it (fetch: its cap plus one).
ratchet_fetch_cat() { # PATH N
  if [ ! -f "$1" ]; then printf '%s\n' "ratchet: $1 is no longer a regular file" >&2; return 1; fi
  head -c "$2" < "$1"
}
