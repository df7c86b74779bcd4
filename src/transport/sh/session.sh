# The session shell (docs/transport.md): `/bin/sh -c SESSION ratchet-session HELLO`.
# Joined into one line by CMake, as run.sh is (see there for the rules).
#
# Streams: fd 0 = requests, fd 1 = the commands' stdout, then each one's
# trailer; fd 3 = the commands' stderr, then each one's end marker; the
# shell's own messages go to /dev/null (nothing but a command writes there).
exec 3>&2 2>/dev/null;
for t in setsid mkfifo mktemp cat dd wc rm sleep; do
  command -v "$t" >/dev/null || { echo "ratchet-session: $t not found" >&3; exit 97; };
done;
printf x | dd bs=1 count=1 iflag=fullblock >/dev/null || { echo "ratchet-session: dd has no iflag=fullblock" >&3; exit 97; };
d=$(mktemp -d "${TMPDIR:-/tmp}/ratchet-session.XXXXXXXXXX") || { echo "ratchet-session: mktemp -d failed" >&3; exit 97; };
bye() { rm -rf -- "$d"; };
trap bye EXIT;
# The child's -c string names the directory unquoted (no quote may appear in
# this script): a TMPDIR with any other character than these is refused
# (a pattern: no fork).
case "$d" in *[!ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-]*) echo "ratchet-session: TMPDIR has a character other than [A-Za-z0-9/._-]" >&3; exit 97 ;; esac;
trap "bye; exit 1" HUP PIPE TERM;
# (In the loop, files are emptied with `true >F`, not `: >F`: a redirection
# that fails on `:`, a special built-in, would end the shell.)
# get FILE LEN: exactly LEN bytes of stdin into FILE, never past them (the next
# request stays unread): dd with iflag=fullblock reads until each block is full,
# and its first word on stderr, "N+0", says that N full blocks came (read by
# the shell itself: no fork).
get() {
  true >"$1" || return 1;
  m=$(($2 / 1048576));
  r=$(($2 % 1048576));
  if [ "$m" -gt 0 ]; then
    dd bs=1048576 count="$m" iflag=fullblock >>"$1" 2>"$d/c" || return 1;
    read -r c _ <"$d/c";
    [ "$c" = "$m+0" ] || return 1;
  fi;
  if [ "$r" -gt 0 ]; then
    dd bs="$r" count=1 iflag=fullblock >>"$1" 2>"$d/c" || return 1;
    read -r c _ <"$d/c";
    [ "$c" = "1+0" ] || return 1;
  fi;
};
mkfifo "$d/o" "$d/e" || exit 97;
: >"$d/s" || exit 97;
echo "ratchet-session $1 ready $d";
# A request: "NONCE WLEN ILEN GRACE LLEN RUN_ID PW", the held-output query (one
# line), with PW 1 sudo -S's password (one line), then the host library (LLEN
# bytes, 0 = none: kept in DIR/l for the commands that source it), the child's
# script and its stdin. The nonce and the password are in no process but this
# (and the password in no file: a fifo carries it to sudo).
while read -r k wl il g ll id pf && read -r q; do
  # A command removed this shell's directory: it can run nothing more, and
  # nothing of this request has run (the client runs it in a fresh shell).
  [ -d "$d" ] || { echo "ratchet-session: its directory is gone" >&3; exit 96; };
  pw=;
  if [ "$pf" = 1 ]; then IFS= read -r pw || exit 98; fi;
  if [ "$ll" -gt 0 ]; then get "$d/l" "$ll" || exit 98; fi;
  get "$d/w" "$wl" && get "$d/i" "$il" || exit 98;
  cat <"$d/o" 3>&- & ro=$!;
  cat <"$d/e" >&3 & re=$!;
  # stdin: opened, then unlinked before the command runs; after the password
  # line, through a fifo that a forked writer (printf is built in: no argv)
  # fills and that is unlinked once both ends are open.
  pp=;
  if [ "$pf" = 1 ]; then
    mkfifo -m 600 "$d/p" || exit 98;
    if [ "$il" -gt 0 ]; then exec 5<"$d/i"; else exec 5</dev/null; fi;
    { printf %s "$pw"; echo; cat; } <&5 >"$d/p" 3>&- 5<&- & pp=$!;
    exec 5<&- 4<"$d/p";
    pw=;
    rm -f "$d/p" "$d/i";
  elif [ "$il" -gt 0 ]; then exec 4<"$d/i"; rm -f "$d/i"; else exec 4</dev/null; fi;
  # In the foreground (an async list would ignore INT and QUIT), a session and
  # process group of its own, fresh from exec: nothing of this shell but the
  # login environment it was itself started with. The child opens its stderr
  # itself: this shell's notes ("Killed") stay on its own, /dev/null. Its $0
  # is /bin/sh, as on a channel, and the run id is in its argv (the watchdog
  # looks for it there); DIR/w sets its arguments. RATCHET_SELF=1, which this
  # shell and all else it starts carry (ratchet's own: never selected by the
  # host library), is not the child's: the command stays selectable.
  # The guard: while the child runs, a fork of this shell reads stdin for the
  # client's helpers on this same channel (the watchdog: the deadline and ^C
  # need no second channel, which sshd MaxSessions 1 refuses). A helper is
  # "NONCE LEN PW", with PW 1 sudo -S's password line (to it through a pipe
  # from printf, in no file), then LEN bytes of a command line for /bin/sh -c
  # (read into memory: it runs even when a command removed DIR).
  # Its exit status and its stderr's first line go to DIR/g, one line each,
  # which the trailer carries: the client counts them to know that nothing it
  # sent is left unread. Any other line ends the guard. (Its stdin comes
  # through fd 6: an async list gets /dev/null for it, before redirections.)
  exec 6<&0;
  ( exec 3>&- 4<&- 5<&- 6<&-;
  while read -r gk gl gp; do
    [ "$gk" = "$k" ] || exit 0;
    gw=;
    if [ "$gp" = 1 ]; then IFS= read -r gw || exit 0; fi;
    echo 1 >"$d/gb";
    gs=$(dd bs="$gl" count=1 iflag=fullblock 2>/dev/null; echo .);
    [ "${#gs}" = "$((gl + 1))" ] || { : >"$d/gb"; exit 0; };
    gf=/dev/null;
    [ -d "$d" ] && gf="$d/he";
    if [ "$gp" = 1 ]; then { printf %s "$gw"; echo; } | /bin/sh -c "${gs%.}" >/dev/null 2>"$gf"; else /bin/sh -c "${gs%.}" </dev/null >/dev/null 2>"$gf"; fi;
    gx=$?;
    gw=;
    ge=;
    read -r ge <"$gf";
    echo "$gx $ge" >>"$d/g";
    true >"$d/gb";
  done ) <&6 & gp=$!;
  exec 6<&-;
  ( unset RATCHET_SELF; exec setsid /bin/sh -c "exec 2>$d/e; . $d/w" /bin/sh "$id" ) <&4 >"$d/o" 3>&- 4<&-;
  s=$?;
  # A helper the guard is running (the watchdog that ended the child) finishes
  # and reports first (at most 5 s); then the guard goes, by KILL: a TERM that
  # comes before the fork has reset this shell's TERM trap would be lost, and
  # the wait would never end.
  gw=0;
  while [ -s "$d/gb" ] && [ "$gw" -lt 50 ]; do sleep 0.1 || sleep 1; gw=$((gw + 1)); done;
  kill -KILL "$gp";
  wait "$gp";
  exec 4<&-;
  if [ -n "$pp" ]; then kill "$pp"; wait "$pp"; fi;
  # sh reads a death by signal N as status 128+N; the command's EXIT trap
  # wrote its status to s when it exited (it cannot when killed).
  t=;
  [ -s "$d/s" ] && read -r t <"$d/s";
  x="exit $s";
  if [ "$s" -gt 128 ] && [ "$t" != "$s" ]; then n=$(kill -l "$s") && [ -n "$n" ] && x="signal $n"; fi;
  # Output still held open GRACE s after the command ended: stop reading it
  # (a reader killed by the timer is what says so).
  ( sleep "$g"; kill "$ro" "$re" ) >/dev/null 3>&- & tp=$!;
  wait "$ro";
  a=$?;
  wait "$re";
  b=$?;
  kill -KILL "$tp";
  wait "$tp";
  hd=0;
  h=0;
  if [ "$a" -gt 128 ] || [ "$b" -gt 128 ]; then
    hd=1;
    [ -n "$q" ] && /bin/sh -c "$q" </dev/null >"$d/hq" && h=$(wc -c <"$d/hq");
  fi;
  gn=0;
  [ -s "$d/g" ] && gn=$(wc -c <"$d/g");
  echo "$k end $x $hd $((h)) $((gn))";
  [ "$((h))" -gt 0 ] && cat "$d/hq";
  [ "$((gn))" -gt 0 ] && cat "$d/g";
  printf %s "$k" >&3;
  # Off the round trip: the status file emptied (the shell writes nothing
  # else), and, only when output was held open, new fifos for the next
  # command (a reader that saw its end of file saw every writer gone).
  true >"$d/s";
  [ "$((gn))" -gt 0 ] && true >"$d/g";
  if [ "$hd" = 1 ]; then rm -f "$d/o" "$d/e" "$d/hq"; mkfifo "$d/o" "$d/e" || exit 98; fi;
done
