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
d=$(mktemp -d "${TMPDIR:-/tmp}/ratchet-session.XXXXXXXXXX") || { echo "ratchet-session: mktemp -d failed" >&3; exit 97; };
bye() { rm -rf -- "$d"; };
trap bye EXIT;
trap "bye; exit 1" HUP PIPE TERM;
# get FILE LEN: exactly LEN bytes of stdin into FILE (dd reads once per call
# and never past what it was asked for: the next request stays unread).
get() {
  : >"$1" || return 1;
  n=$2;
  while [ "$n" -gt 0 ]; do
    if [ "$n" -gt 1048576 ]; then b=1048576; else b=$n; fi;
    dd bs="$b" count=1 >>"$1" 2>/dev/null || return 1;
    h=$(wc -c <"$1") || return 1;
    [ "$((h))" -gt "$(($2 - n))" ] || return 1;
    n=$(($2 - h));
  done;
};
mkfifo "$d/o" "$d/e" || exit 97;
echo "ratchet-session $1 ready $d";
# A request: "NONCE WLEN ILEN GRACE", the held-output query (one line), then the
# child's script and its stdin (bytes). The nonce is in no process but this.
while read -r k wl il g && read -r q; do
  get "$d/w" "$wl" && get "$d/i" "$il" || exit 98;
  cat <"$d/o" 3>&- & ro=$!;
  cat <"$d/e" >&3 & re=$!;
  # stdin: opened, then unlinked before the command runs (a become password).
  if [ "$il" -gt 0 ]; then exec 4<"$d/i"; rm -f "$d/i"; else exec 4</dev/null; fi;
  # In the foreground (an async list would ignore INT and QUIT), a session and
  # process group of its own, fresh from exec: nothing of this shell but the
  # login environment it was itself started with. The child opens its stderr
  # itself ($1): this shell's notes ("Killed") stay on its own, /dev/null.
  setsid /bin/sh "$d/w" "$d/e" <&4 >"$d/o" 3>&- 4<&-;
  s=$?;
  exec 4<&-;
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
  echo "$k end $x $hd $((h))";
  [ "$((h))" -gt 0 ] && cat "$d/hq";
  printf %s "$k" >&3;
  # The next command's fifos, after the answer: off its round trip.
  rm -f "$d/o" "$d/e" "$d/s" "$d/w" "$d/i" "$d/hq";
  mkfifo "$d/o" "$d/e" || exit 98;
done
