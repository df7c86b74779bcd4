#!/bin/sh
# What help2man reads as `ratchet --help` (cmake/Packaging.cmake): the binary's own
# help, then each command's, so ratchet(1) lists every command and option as the
# binary defines them, and every step kind (the help's footer, from the kind table).
# $RATCHET: the binary. It is run as `ratchet` (found on PATH), so that its usage
# lines say `ratchet run`, not the build's path.
set -eu
: "${RATCHET:?RATCHET must name the ratchet binary}"
case "${1:-}" in
  --version) "$RATCHET" --version; exit 0 ;;
  --help) ;;
  *) echo "usage: $0 --help|--version" >&2; exit 2 ;;
esac
dir=$(cd "$(dirname "$RATCHET")" && pwd)
[ "$(basename "$RATCHET")" = ratchet ] || { echo "$0: RATCHET must name a file called ratchet" >&2; exit 2; }
PATH=$dir:$PATH
export PATH
# The first line is the program's one-line description: help2man's NAME (--name) says it.
ratchet --help | sed 1d
for cmd in $(ratchet __complete ""); do
  echo
  echo "Command $cmd:"
  # CLI11's first line is the command's description, its second "Usage:": a
  # paragraph each (help2man joins adjacent indented lines).
  ratchet "$cmd" --help | sed -e 1G -e 's/^./  &/'
done
