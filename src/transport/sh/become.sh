# The become shell's starter (docs/transport.md, "Become with a password"):
# `/bin/sh -c BECOME ratchet-become USER ROOT`, as the login user, carrying
# RATCHET_SELF=1 (ratchet's own: never selected by a step). Joined into one
# line by CMake, as run.sh is (see there for the rules).
#
# It reads sudo's password line from stdin into its memory and runs sudo
# once, `sudo -k -A`: sudo asks the askpass helper DIR/a (run by sudo as the
# login user), which opens the 0600 fifo DIR/p that a forked writer fills
# (printf is built in: no argv holds the password, no file) and removes it.
# A second ask (the password was wrong) finds no fifo: sudo gives up at once,
# after one attempt, and says so. sudo's own stdin is the channel's, which it
# never reads for a password: the password never shares a stream with the
# requests or a command's input, whether or not a credential is cached (and
# -k makes sudo ask anyway). sudo runs under LC_ALL=C (its messages are its
# own English ones); ROOT, which sudo runs as USER ("" = sudo's default,
# root) as `/bin/sh -c ROOT ratchet-become LC_ALL LC_ALL_SET`, puts the
# login's LC_ALL back where sudo kept ours, and starts the session shell.
exec 3>&2 2>/dev/null;
IFS= read -r pw || exit 98;
d=$(mktemp -d "${TMPDIR:-/tmp}/ratchet-become.XXXXXXXXXX") || { echo "ratchet-become: mktemp -d failed" >&3; exit 97; };
case "$d" in *[!ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-]*) echo "ratchet-become: TMPDIR has a character other than [A-Za-z0-9/._-]" >&3; exit 97 ;; esac;
# shellcheck disable=SC2317 # called by the traps
bye() { rm -rf -- "$d"; };
trap bye EXIT;
trap "bye; exit 1" HUP PIPE TERM;
mkfifo -m 600 "$d/p" || { echo "ratchet-become: mkfifo failed in $d" >&3; exit 97; };
{ echo "#!/bin/sh"; echo "exec 2>/dev/null 0<$d/p || exit 1"; echo "rm -f $d/p"; echo "exec cat"; } >"$d/a" || { echo "ratchet-become: cannot write $d/a" >&3; exit 97; };
chmod 700 "$d/a" || exit 97;
{ printf %s "$pw"; echo; } >"$d/p" 3>&- & w=$!;
pw=;
if [ -n "$1" ]; then
env SUDO_ASKPASS="$d/a" LC_ALL=C sudo -k -A -p "" -H -u "$1" -- /bin/sh -c "$2" ratchet-become "${LC_ALL-}" "${LC_ALL+1}" 2>&3 3>&-;
else
env SUDO_ASKPASS="$d/a" LC_ALL=C sudo -k -A -p "" -H -- /bin/sh -c "$2" ratchet-become "${LC_ALL-}" "${LC_ALL+1}" 2>&3 3>&-;
fi;
s=$?;
kill "$w";
exit "$s"
