#!/bin/bash
# Close the ssh ControlPersist masters that ansible left in its control_path_dir, each through
# its own control socket (ssh -O exit), so the next run starts cold. Kills nothing by name.
. "$(dirname "$0")/../lib.sh"
for s in "$BENCH_TMP"/ansible/cp/*; do
  [ -S "$s" ] && ssh -F /dev/null -o ControlPath="$s" -O exit bench 2>/dev/null &
done
wait
rm -f "$BENCH_TMP"/ansible/cp/* 2>/dev/null
exit 0
